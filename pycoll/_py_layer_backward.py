"""A PyLayer's backward as the graph runs it: the user's ``backward`` on the gradients of the
recorded outputs, its result checked and laid out one gradient per input Tensor. Here, apart from
pycoll.autograd, so that the create_graph rule for PyLayers (pycoll._higher_order.rules_math) runs the
same code without an import circle through pycoll.grad_ops."""
from __future__ import annotations

import contextlib
from typing import Any, List

from pycoll._graph import no_grad
from pycoll.device import is_array
from pycoll.tensor import Tensor, wrap


def user_backward(cls: type, ctx: Any, metas: List[tuple], wanted: List[int], slots: List[Any],
                   shapes: List[tuple], grads: Any, recording: bool = False) -> list:
    """Run ``cls.backward`` on the gradients of the PyLayer's recorded outputs (`grads`: one for
    each Tensor output numbered in `wanted`; ``metas``: shape, dtype and array module of every
    Tensor output) and give back one gradient or None per Tensor of the input `slots` (whose
    shapes at the forward were `shapes`): arrays, or with ``recording`` (create_graph: the
    gradients are Tensors and the user's backward is recorded, to be differentiated again) Tensors."""
    grads = [grads] if len(wanted) == 1 else grads
    given = dict(zip(wanted, grads))
    dys = []
    for k, (shape, dtype, xp) in enumerate(metas):
        g = given.get(k)
        if g is None:
            dys.append(wrap(xp.zeros(shape, dtype)) if ctx.materialize_grads else None)
        else:
            g = g if isinstance(g, Tensor) else wrap(g)
            dys.append(g.astype(dtype) if ctx.grad_in_dtype_consistent and g.dtype != dtype else g)
    with contextlib.nullcontext() if recording else no_grad():
        got = cls.backward(ctx, *dys)
    got = list(got) if isinstance(got, (tuple, list)) else [got]
    count = sum(len(s) if isinstance(s, list) else 1 for s in slots)
    if len(got) != len(slots) and len(got) == count and not any(isinstance(g, (tuple, list)) for g in got):
        return _checked(cls, got, shapes, recording)  # one per Tensor, lists unpacked: paddle reads them so too
    if len(got) != len(slots):
        raise ValueError(
            f"{cls.__name__}.backward must return {len(slots)} gradient(s), one per Tensor input "
            f"(positional, then keyword in call order), got {len(got)}")
    flat = []
    for s, g in zip(slots, got):
        if not isinstance(s, list):
            flat.append(g)
        elif isinstance(g, (tuple, list)) and len(g) == len(s):
            flat.extend(g)
        else:
            raise ValueError(f"{cls.__name__}.backward must return a list of {len(s)} gradients for an input "
                             f"that is a list of {len(s)} Tensors, got {type(g).__name__}")
    return _checked(cls, flat, shapes, recording)


def _checked(cls: type, flat: List[Any], shapes: List[tuple], recording: bool) -> list:
    """One gradient per Tensor input, each of its input's shape: arrays, or Tensors with ``recording``."""
    out = []
    for i, g in enumerate(flat):
        if not (g is None or isinstance(g, Tensor) or is_array(g)):
            raise ValueError(f"{cls.__name__}.backward returned a {type(g).__name__} for input {i}; each gradient "
                            f"must be a Tensor (or an array), or None for an input that takes none")
        array = g._array if isinstance(g, Tensor) else g
        if array is not None and tuple(array.shape) != shapes[i]:
            raise ValueError(f"{cls.__name__}.backward returned a gradient of shape {list(array.shape)} "
                             f"for input {i} of shape {list(shapes[i])}")
        out.append((g if isinstance(g, Tensor) or g is None else wrap(g)) if recording else array)
    return out
