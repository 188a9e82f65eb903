"""What the op modules (`math_ops`, `shape_ops`, `nn.functional`) share: turning arguments into
operands, reading axis arguments and index arguments, and giving an op's output its place in the
autograd graph (`op_output`)."""
from __future__ import annotations

import functools
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from pycoll import _graph
from pycoll.device import array_module, is_array, place_of, to_module
from pycoll.dtypes import is_floating
from pycoll.tensor import Tensor, _to_place, tensor_of, wrap


def op_output(array: Any, backward: Callable, *operands: Any) -> Tensor:
    """The op's result `array` as a Tensor, with `backward` recorded for it if an operand needs a
    gradient (see `pycoll._graph.record`).

    `backward(grad)` returns one gradient array (or None) per entry of `operands`; operands that
    are not Tensors (Python scalars) get None.
    """
    out = wrap(array)
    _graph.record((out,), backward, [v if isinstance(v, Tensor) else None for v in operands])
    return out


def value_output(array: Any, name: str, *operands: Any, **facts: Any) -> Tensor:
    """The result of op ``name`` that takes no gradient (a comparison, argmax), shown to the
    record hooks (which may place it: auto-parallel) but never put in the graph. ``facts``
    describe the op to them (e.g. ``kept``: the input's shape with 1 where reduced)."""
    out = wrap(array)

    def no_gradient(g: Any) -> tuple:
        return (None,) * len(operands)
    no_gradient.__pycoll_op__ = {"name": name, **facts}  # type: ignore[attr-defined]
    with _graph.no_grad():
        _graph.record((out,), no_gradient, [v if isinstance(v, Tensor) else None for v in operands])
    return out


# callables an op's Tensor operands pass through before it computes (auto-parallel: a Partial
# value becomes whole, as paddle reshards it); see add_input_hook
_input_hooks: List[Callable[[Tensor], Tensor]] = []


def add_input_hook(hook: Callable[[Tensor], Tensor]) -> None:
    """Let ``hook(tensor) -> tensor`` see (and replace) every Tensor operand of the ops."""
    _input_hooks.append(hook)


# callables the two operands of an elementwise op pass through together (auto-parallel: a whole
# operand spanning a dimension the other one splits becomes its block there); see add_pair_hook
_pair_hooks: List[Callable[[Any, Any], Tuple[Any, Any]]] = []


def add_pair_hook(hook: Callable[[Any, Any], Tuple[Any, Any]]) -> None:
    """Let ``hook(x, y) -> (x, y)`` see (and replace) the operands of every elementwise binary op."""
    _pair_hooks.append(hook)


# callables that give the shape a tensor's array takes in a reshape to ``shape``, which speaks of
# the tensor's whole shape (auto-parallel: a distributed tensor's array is its local piece); see
# add_reshape_hook
_reshape_hooks: List[Callable[[Tensor, List[int]], List[int]]] = []


def add_reshape_hook(hook: Callable[[Tensor, List[int]], List[int]]) -> None:
    """Let ``hook(x, shape) -> shape`` turn a reshape's target (x's whole shape's terms, 0s
    resolved) into the one x's array takes."""
    _reshape_hooks.append(hook)


def array_target(x: Tensor, shape: List[int]) -> List[int]:
    """The shape x's array takes in a reshape of x to ``shape``: ``shape`` itself unless a
    reshape hook says otherwise."""
    for hook in _reshape_hooks:
        shape = hook(x, shape)
    return shape


# callables an op's operands pass through together before it computes, told the op's name and
# facts (auto-parallel: distributed operands moved to where paddle's rule for that op needs them
# for their pieces to fit together); see add_operands_hook
_operands_hooks: List[Callable[[str, Tuple[Any, ...], Dict[str, Any]], Tuple[Any, ...]]] = []


def add_operands_hook(hook: Callable[[str, Tuple[Any, ...], Dict[str, Any]], Tuple[Any, ...]]) -> None:
    """Let ``hook(name, operands, facts) -> operands`` see (and replace) the operands of op ``name``
    before it computes: the ops whose pieces would not fit together on split inputs (matmul,
    concat, gather, indexing, the scans, sorts and reductions along an axis, expand/tile, where,
    reshape...: every caller of ``placed``)."""
    _operands_hooks.append(hook)


def on_one_place(operands: Tuple[Any, ...]) -> Tuple[Any, ...]:
    """``operands`` with every host Tensor among them moved to the GPU of the first device
    Tensor, when they mix the two, as paddle does: its kernel runs on the inputs' highest-priority
    place (the GPU) and an input elsewhere is copied there (a model built before
    ``set_device('gpu')``, a CPU tensor beside a GPU one). The move is an op: the gradient goes
    back to the host Tensor. Without CuPy imported nothing can be on a GPU: one lookup."""
    if sys.modules.get("cupy") is None:
        return operands
    device = next((o for o in operands if isinstance(o, Tensor) and not isinstance(o._array, np.ndarray)), None)
    if device is None:
        return operands
    place = place_of(device._array)
    return tuple(_to_place(o, place) if isinstance(o, Tensor) and isinstance(o._array, np.ndarray) else o
                 for o in operands)


def placed(name: str, *operands: Any, **facts: Any) -> Tuple[Any, ...]:
    """``operands`` of op ``name`` on one place (`on_one_place`), after the operands hooks."""
    operands = on_one_place(operands)
    for hook in _operands_hooks:
        operands = hook(name, operands, facts)
    return operands


def paired(x: Any, y: Any) -> Tuple[Any, Any]:
    """``x`` and ``y`` on one place (`on_one_place`), after the pair hooks."""
    x, y = on_one_place((x, y))
    for hook in _pair_hooks:
        x, y = hook(x, y)
    return x, y


def unwatched(tensors: Sequence[Tensor]) -> bool:
    """Whether no hook watches the operands or the ops (auto-parallel) and none of ``tensors`` is
    distributed: an op on them may then prepare its operands' arrays itself (matmul's transposes)
    where it would otherwise call other ops."""
    return (not _input_hooks and not _pair_hooks and not _operands_hooks and not _graph.has_record_hooks()
            and all(getattr(t, "placements", None) is None for t in tensors))


def untraced(tensors: Sequence[Tensor]) -> bool:
    """Whether an op on ``tensors`` may compute on their arrays alone and return a plain result:
    no gradient wanted and `unwatched`."""
    return (unwatched(tensors)
            and not (_graph.is_grad_enabled() and any(not t.stop_gradient for t in tensors)))


def _prepared(t: Tensor) -> Tensor:
    for hook in _input_hooks:
        t = hook(t)
    return t


def operand(v: Any) -> Any:
    """An op's operand: a Tensor stays, a Python or NumPy scalar becomes a Python number, arrays
    and lists become Tensors; TypeError otherwise."""
    if isinstance(v, Tensor):
        return _prepared(v) if _input_hooks else v
    if isinstance(v, np.generic):  # before float: numpy.float64 subclasses float
        return v.item()
    if isinstance(v, (bool, int, float, complex)):
        return v
    if is_array(v) or isinstance(v, (list, tuple)):
        return tensor_of(v)
    raise TypeError(f"operand must be a Tensor, a number or an array, got {type(v).__name__}")


def require_floating(t: Tensor, fn: str, name: str = "x", complex_ok: bool = False) -> Tensor:
    """`t` (a Tensor), which must hold floating-point numbers (bfloat16 counts; complex ones where
    `complex_ok`): a TypeError naming `fn` and `name` otherwise (paddle has no integer kernel for
    such ops, and an integer result would be silently truncated)."""
    dtype = t._array.dtype
    if not (is_floating(dtype) or (complex_ok and dtype.kind == "c")):
        raise TypeError(f"{fn}: {name} must hold floating-point numbers, got dtype {dtype}")
    return t


def as_tensor(x: Any) -> Tensor:
    """x itself if it is a Tensor, else x converted (arrays, lists); TypeError otherwise."""
    if isinstance(x, Tensor):
        return _prepared(x) if _input_hooks else x
    if is_array(x) or isinstance(x, (list, tuple, int, float)):
        return tensor_of(x)
    raise TypeError(f"x must be a Tensor or an array, got {type(x).__name__}")


def delivered(result: Any, out: Any, fn: str = "out") -> Any:
    """`result`, its values also written into paddle's ``out`` tensor when one is given (for a
    tuple of results, a tuple of tensors); an ``out`` of another shape or dtype takes the
    result's, in new memory, as paddle's does."""
    if out is None:
        return result
    if isinstance(result, (tuple, list)):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{fn}: out must be a tuple of {len(result)} Tensors, got {out!r}")
        for one, into in zip(result, out):
            delivered(one, into, fn)
        return result
    if not isinstance(out, Tensor):
        raise TypeError(f"{fn}: out must be a Tensor or None, got {type(out).__name__}")
    fit_to(out, result)
    out.set_value(result.detach())
    return result


def fit_to(out: Tensor, like: Tensor) -> None:
    """Give ``out`` new memory of ``like``'s shape and dtype unless it has them already: paddle's
    ``out=`` and ``assign(x, output)`` make the output take the result's shape and dtype."""
    if out._array.shape != like._array.shape or out._array.dtype != like._array.dtype:
        out._array = array_module(out._array).empty_like(like._array)


def with_out(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` taking paddle 3.3's keyword-only ``out=`` too: the result is also written into it
    (`delivered`), and ``out`` is returned. Applied to the functions of the ``pycoll`` namespace
    only, so that the operators and pycoll's own calls pay nothing for it."""
    @functools.wraps(fn)
    def taking_out(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        if out is None:
            return result
        delivered(result, out, fn.__name__)
        return out
    return taking_out


def one_number(value: Any, name: str) -> Any:
    """``value``, or the number a one-element Tensor holds (paddle takes those where it takes a
    number: clip's bounds, Adam's betas); ValueError naming ``name`` for a larger Tensor."""
    if isinstance(value, Tensor):
        if value.size != 1:
            raise ValueError(f"{name} must be a number or a Tensor with one element, got a Tensor of shape "
                             f"{list(value.shape)}")
        return value.item()
    return value


def needs_grad(v: Any) -> bool:
    """Whether `v` is a Tensor that takes a gradient."""
    return isinstance(v, Tensor) and not v.stop_gradient


class NoBroadcast(ValueError):
    """Shapes that do not broadcast (``check_broadcast``): a ValueError a caller may catch to name
    its own arguments."""


def check_broadcast(op: str, x_name: str, x_shape: Tuple[int, ...], y_name: str, y_shape: Tuple[int, ...]) -> None:
    """A ValueError naming op ``op`` and both operands when shapes ``x_shape`` and ``y_shape`` do not
    broadcast (NumPy's and paddle's rule: trailing dimensions equal or 1). Reads the shape tuples
    only, so the ops call it before computing instead of passing on NumPy's nameless message."""
    if x_shape == y_shape:
        return
    for i in range(1, min(len(x_shape), len(y_shape)) + 1):
        a, b = x_shape[-i], y_shape[-i]
        if a != b and a != 1 and b != 1:
            raise NoBroadcast(f"{op}: {x_name} of shape {list(x_shape)} and {y_name} of shape {list(y_shape)} "
                              f"do not broadcast (dimension -{i}: {a} vs {b})")


def normalize_axes(axis: Any, ndim: int, fn: Optional[str] = None) -> Optional[Tuple[int, ...]]:
    """An `axis` argument (None, an int or a list/tuple of ints) as a tuple of non-negative axes
    of an `ndim`-dimensional array; None stays None (all axes). ``fn``: the op the error names."""
    if axis is None:
        return None
    items = axis if isinstance(axis, (list, tuple)) else [axis]
    n = max(ndim, 1)
    out = []
    for a in items:
        if not isinstance(a, (int, np.integer)) or not -n <= a < n:
            raise ValueError(f"{fn + ': ' if fn else ''}axis must be ints in [-{n}, {n})"
                             f"{' (x is 0-d)' if ndim == 0 else ''}, got {axis!r}")
        out.append(int(a) % n)
    return tuple(out)


def reduction_axes(axis: Any, ndim: int, op: str) -> Optional[Tuple[int, ...]]:
    """`normalize_axes` for reduction ``op`` (sum, mean, max, prod...), which refuses an axis named
    twice (``[1, 1]``, ``[1, -1]``) as paddle does; ops that may repeat an axis (roll) use
    `normalize_axes`. As paddle's, an empty list reduces every axis, and so does any axis of a 0-d
    tensor (0 or -1: the tensor itself): None for both."""
    axes = normalize_axes(axis, ndim, op)
    if axes == () or (ndim == 0 and axes is not None):
        return None
    if axes is not None and len(set(axes)) != len(axes):
        twice = next(a for i, a in enumerate(axes) if a in axes[:i])
        raise ValueError(f"{op}: axis contains duplicate dimensions: dimension {twice} appears more than once "
                         f"in axis={axis!r}")
    return axes


def check_index_range(fn: str, arg: str, idx: Any, size: int, axis: int, error: type = IndexError) -> None:
    """``error`` naming op ``fn`` and argument ``arg`` unless every value of the integer array
    ``idx`` addresses one of the ``size`` places along ``axis`` (-size to size - 1, as paddle
    allows). One min and one max over ``idx``, read back together (one transfer from a GPU):
    for the ops that read or write at indices (gather, scatter, the along-axis ops), where
    NumPy's own message names neither."""
    if not idx.size:
        return
    if isinstance(idx, np.ndarray):
        low, high = int(idx.min()), int(idx.max())
    else:
        low, high = to_module(array_module(idx).stack([idx.min(), idx.max()]), np).tolist()
    wrong = _outside(low, high, size)
    if wrong is not None:
        raise error(f"{fn}: {arg} holds values out of range for axis {axis} of size {size}: expected >= {-size} "
                    f"and < {size}, got {wrong}")


def _outside(low: int, high: int, size: int) -> Optional[int]:
    """The bound among ``low`` and ``high`` (an index array's min and max) that addresses no
    place of an axis of ``size`` (paddle allows -size to size - 1), or None when both do."""
    if high >= size:
        return high
    return low if low < -size else None


def check_device_index(fn: str, index: Any, shape: Tuple[int, ...]) -> None:
    """IndexError naming op ``fn`` unless every integer array of ``index`` (of `index_arrays`)
    addresses a place of the axis of ``shape`` it indexes; device arrays only. NumPy raises such
    an error itself, but CuPy wraps an index out of range around without one (its documented
    difference from NumPy), which would read or write the wrong element silently. All the
    arrays' bounds come back to the host in one transfer."""
    items = index if isinstance(index, tuple) else (index,)
    if not any(is_array(i) and not isinstance(i, np.ndarray) for i in items):
        return  # no device array: NumPy checks its own indices
    arrays = [(i, axis) for i, axis in _indexed_axes(items, len(shape))
              if is_array(i) and i.dtype.kind in "iu" and i.size and axis < len(shape)]
    if not arrays:
        return
    xp = array_module(arrays[0][0])
    bounds = to_module(xp.stack([v for i, _ in arrays for v in (i.min(), i.max())]), np).tolist()
    for k, (_, axis) in enumerate(arrays):
        wrong = _outside(bounds[2 * k], bounds[2 * k + 1], shape[axis])
        if wrong is not None:
            raise IndexError(f"{fn}: index {wrong} is out of range for axis {axis} of size {shape[axis]} (a Tensor "
                             f"of shape {list(shape)})")


def _indexed_axes(items: tuple, ndim: int) -> List[Tuple[Any, int]]:
    """(item, the axis it indexes) for the items of an index: None adds an axis and indexes
    none, Ellipsis stands for the axes no other item takes, a boolean array takes its ndim."""
    def width(i: Any) -> int:
        if i is None or i is Ellipsis:
            return 0
        return i.ndim if is_array(i) and i.dtype == bool else 1
    rest = ndim - sum(width(i) for i in items)
    found, axis = [], 0
    for i in items:
        if i is Ellipsis:
            axis += rest
            continue
        if width(i) == 1:
            found.append((i, axis))
        axis += width(i)
    return found


def index_arrays(index: Any, xp: Any) -> Any:
    """`index` with Tensors and lists turned into arrays of module xp (an empty list: an empty
    int64 array, picking nothing, as paddle's ``x[[]]``; NumPy would make it float64)."""
    if isinstance(index, tuple):
        return tuple(index_arrays(i, xp) for i in index)
    if isinstance(index, Tensor):
        return to_module(index._array, xp)
    if isinstance(index, list):
        return to_module(np.asarray(index) if index else np.zeros(0, np.int64), xp)
    if is_array(index):
        return to_module(index, xp)
    return index
