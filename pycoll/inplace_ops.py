"""In-place ops: ``zero_``, ``fill_`` and ``scale_`` (Tensor methods, paddle's names), each
returning the tensor it changed.

paddle's rules for autograd: a leaf that takes a gradient (a parameter) cannot be changed in
place while the graph is recorded (ValueError, as paddle's); an op's output can, and its
gradient then flows through the change (zero for zero_/fill_, the scale for scale_). Such a
tensor gets a new array rather than being overwritten, so the backward functions that kept its
old values stay right. Everywhere else (no gradient, or under ``no_grad``) the values are written
into the tensor's memory, as ``x[...] = v`` writes them (an op that kept x for its backward sees
the new values then).
"""
from __future__ import annotations

from typing import Any, Callable

from pycoll import _graph
from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module
from pycoll.math_ops import scaled_array
from pycoll.tensor import Tensor


def _in_place(x: Tensor, op: str, values: Callable[[Any], Any], backward: Callable) -> Tensor:
    """Make `x` hold ``values(x's array)`` (of x's shape and dtype), recorded as op `op`."""
    x = as_tensor(x)
    if not _graph.is_grad_enabled() or x.stop_gradient:
        xp = array_module(x._array)
        xp.copyto(x._array, values(x._array), casting="unsafe")
        return x
    if x.grad_node is None:
        raise ValueError(f"{op}: leaf tensor {x.name or ''!s} takes a gradient (stop_gradient=False) and "
                         f"cannot be changed in place; do it under pycoll.no_grad()")
    x._set_data(values(x._array))
    _graph.record((x,), backward, (x,))
    return x


def zero_(x: Tensor) -> Tensor:
    """Set every element to 0."""
    return _in_place(x, "zero_", lambda a: array_module(a).zeros_like(a),
                     lambda g: (array_module(g).zeros_like(g),))


def fill_(x: Tensor, value: float) -> Tensor:
    """Set every element to `value` (a number; an integer tensor truncates it)."""
    if not isinstance(value, (int, float)):
        raise TypeError(f"fill_: value must be an int or a float, got {type(value).__name__}")
    return _in_place(x, "fill_", lambda a: array_module(a).full_like(a, value),
                     lambda g: (array_module(g).zeros_like(g),))


def scale_(x: Tensor, scale: float = 1.0, bias: float = 0.0, bias_after_scale: bool = True,
           act: Any = None, name: Any = None) -> Tensor:
    """x = scale * x + bias (``bias_after_scale=False``: scale * (x + bias)), as ``pycoll.scale``
    computes it; `act` must be None (paddle's in-place form applies no activation either)."""
    if act is not None:
        raise ValueError(f"scale_: act must be None, got {act!r}")
    factor = float(scale.item() if isinstance(scale, Tensor) else scale)
    return _in_place(x, "scale_", lambda a: scaled_array(a, factor, bias, bias_after_scale),
                     lambda g: (g * factor,))


for _name, _fn in {"zero_": zero_, "fill_": fill_, "scale_": scale_}.items():
    setattr(Tensor, _name, _fn)
del _name, _fn
