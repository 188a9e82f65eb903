"""Gradients of complex tensors: paddle's and torch's conjugate-Wirtinger convention, in which a
real loss L of z = x + iy has gradient dL/dx + i dL/dy. Backward functions are written as for real
numbers (g * f'(z)); the walk (`pycoll._graph`) runs each through `run_node`, which turns that into
the convention's g * conj(f'(z)) on complex gradients. A backward already written in the
convention (abs, the complex parts, fft's adjoint transforms, a PyLayer's) says so with
`conjugate_grads`."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np


def conjugate_grads(fn: Callable) -> Callable:
    """Mark backward function `fn` as written for complex tensors in the gradient convention
    (paddle's and torch's conjugate-Wirtinger one: a real loss L of z = x + iy has gradient
    dL/dx + i dL/dy): the walk hands it complex gradients as they are. Returns `fn`."""
    fn.conjugate_grads = True
    return fn


def _conj(g: Any) -> Any:
    if g is None or g.dtype.kind != "c":
        return g
    conj = g.conj()
    # a 0-d NumPy array's conj() is a NumPy scalar, which no backward takes for an array
    return np.asarray(conj) if isinstance(conj, np.generic) else conj


def run_node(node: Any, slots: list) -> Any:
    """``node.fn`` on its output gradients (`call_backward`)."""
    return call_backward(node.fn, node.n_out, slots)


def call_backward(fn: Callable, n_out: int, slots: list) -> Any:
    """Backward function ``fn`` of an op with ``n_out`` outputs on their gradients ``slots``. One
    not marked by `conjugate_grads` is written as for real numbers, g * f'(z); on complex
    gradients it runs as conj(fn(conj(g))) = g * conj(f'(z)), the convention's gradient of a
    holomorphic op (and the same as before for real-coefficient linear ops: sums, reshapes,
    indexing)."""
    arg = slots[0] if n_out == 1 else slots
    if getattr(fn, "conjugate_grads", False) or not any(
            s is not None and s.dtype.kind == "c" for s in slots):
        return fn(arg)
    got = fn(_conj(arg) if n_out == 1 else [_conj(s) for s in arg])
    return [_conj(g) for g in got] if got else got
