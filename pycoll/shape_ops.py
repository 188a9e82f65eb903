"""Shape ops (reshape, transpose, concat, ...), indexing and clone (also Tensor methods, `x.T`,
`x[i]` and `x[i] = v`)."""
from __future__ import annotations

import builtins as _builtins
from typing import Any, Sequence, Union

import numpy as np

from pycoll._graph import is_grad_enabled
from pycoll.device import array_module, is_array, to_module
from pycoll._tensor_ops import as_tensor, index_arrays, normalize_axes, op_output, operand
from pycoll.tensor import Tensor


# ---- shape ops ---------------------------------------------------------------------------

def reshape(x: Tensor, shape: Sequence[int]) -> Tensor:
    """Reshape; -1 infers one dimension and 0 copies the input's dimension (paddle rules)."""
    x = as_tensor(x)
    a = x._array
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    shape = [int(a.shape[i]) if s == 0 and i < a.ndim else int(s) for i, s in enumerate(shape)]
    try:
        out = a.reshape(shape)
    except ValueError:
        raise ValueError(f"reshape: cannot reshape a tensor of shape {x.shape} into {shape}") from None
    src = a.shape
    return op_output(out, lambda g: (g.reshape(src),), x)


def transpose(x: Tensor, perm: Sequence[int]) -> Tensor:
    x = as_tensor(x)
    ndim = x._array.ndim
    perm = [int(p) % _builtins.max(ndim, 1) for p in perm]
    if sorted(perm) != list(range(ndim)):
        raise ValueError(f"perm must be a permutation of range({ndim}), got {perm}")
    inverse = tuple(np.argsort(perm))
    return op_output(x._array.transpose(perm), lambda g: (g.transpose(inverse),), x)


def flatten(x: Tensor, start_axis: int = 0, stop_axis: int = -1) -> Tensor:
    shape = list(x._array.shape)  # the array's own (a distributed tensor's shape is the whole one)
    if not shape:
        return reshape(x, [1])
    start, stop = start_axis % len(shape), stop_axis % len(shape)
    return reshape(x, shape[:start] + [-1] + shape[stop + 1:])


def unsqueeze(x: Tensor, axis: Union[int, Sequence[int]]) -> Tensor:
    shape = list(x._array.shape)
    axes = [axis] if isinstance(axis, int) else list(axis)
    for a in axes:
        shape.insert(a % (len(shape) + 1), 1)
    return reshape(x, shape)


def squeeze(x: Tensor, axis: Any = None) -> Tensor:
    axes = normalize_axes(axis, x._array.ndim)
    shape = [n for i, n in enumerate(x._array.shape) if not (n == 1 and (axes is None or i in axes))]
    return reshape(x, shape)


def concat(x: Sequence[Tensor], axis: int = 0) -> Tensor:
    tensors = [operand(t) for t in x]
    arrays = [t._array for t in tensors]
    xp = array_module(arrays[0])
    axis = axis % arrays[0].ndim
    bounds = np.cumsum([0] + [a.shape[axis] for a in arrays])
    lead = (slice(None),) * axis

    def backward(g: Any) -> list:
        return [g[lead + (slice(bounds[i], bounds[i + 1]),)] for i in range(len(arrays))]
    return op_output(xp.concatenate(arrays, axis=axis), backward, *tensors)


def stack(x: Sequence[Tensor], axis: int = 0) -> Tensor:
    tensors = [operand(t) for t in x]
    arrays = [t._array for t in tensors]
    xp = array_module(arrays[0])
    axis = axis % (arrays[0].ndim + 1)
    lead = (slice(None),) * axis
    return op_output(xp.stack(arrays, axis=axis),
                  lambda g: [g[lead + (i,)] for i in range(len(arrays))], *tensors)


# ---- indexing ------------------------------------------------------------------------------

def _has_int_array(index: Any) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(is_array(i) and i.dtype.kind in "iu" for i in items)


def _getitem(x: Tensor, index: Any) -> Tensor:
    a = x._array
    xp = array_module(a)
    index = index_arrays(index, xp)
    repeats = _has_int_array(index)  # integer arrays may pick an element twice: scatter-add

    def backward(g: Any) -> tuple:
        z = xp.zeros(a.shape, dtype=g.dtype)
        if repeats:
            scatter_add(z, index, g)
        else:
            z[index] = g
        return (z,)
    return op_output(a[index], backward, x)


def _setitem(x: Tensor, index: Any, value: Any) -> None:
    if is_grad_enabled() and not x.stop_gradient:
        raise RuntimeError("in-place assignment into a tensor that requires grad is not "
                           "recorded; do it under pycoll.no_grad() or use set_value()")
    xp = array_module(x._array)
    value = value._array if isinstance(value, Tensor) else value
    if isinstance(value, list):
        value = np.asarray(value)
    x._array[index_arrays(index, xp)] = to_module(value, xp) if is_array(value) else value


def scatter_add(target: Any, index: Any, values: Any) -> None:
    """target[index] += values, in place, adding repeated indices up (np.add.at / cupyx)."""
    if isinstance(target, np.ndarray):
        np.add.at(target, index, values)
    else:
        import cupyx
        cupyx.scatter_add(target, index, values)


def clone(x: Tensor) -> Tensor:
    """A copy of x that stays in the graph."""
    return op_output(x._array.copy(), lambda g: (g,), x)


# ---- methods (tensor.py imports no op module: the ops attach themselves) ------------------

for _name, _fn in {
    "reshape": reshape, "transpose": transpose, "flatten": flatten, "unsqueeze": unsqueeze,
    "squeeze": squeeze, "clone": clone, "__getitem__": _getitem, "__setitem__": _setitem,
}.items():
    setattr(Tensor, _name, _fn)
del _name, _fn
Tensor.T = property(lambda x: transpose(x, list(range(x.ndim))[::-1]),
                    doc="The tensor with its axes reversed.")
