"""Shape ops (reshape, transpose, concat, ...), indexing and clone (also Tensor methods, `x.T`,
`x[i]` and `x[i] = v`)."""
from __future__ import annotations

import builtins as _builtins
import itertools
import math
import weakref
from typing import Any, Dict, List, Optional, Sequence, Union

import numpy as np

from pycoll import _graph
from pycoll._param_aliases import param_aliases
from pycoll.device import array_module, is_array, scatter_add
from pycoll._tensor_ops import (array_target, as_tensor, check_device_index, index_arrays, normalize_axes,
                                on_one_place, op_output, operand, placed, value_output)
from pycoll.dtypes import int64
from pycoll.tensor import Tensor, wrap
from pycoll.torch_forms import ints_as_list, swap_two_axes


# ---- views ---------------------------------------------------------------------------------

# the views taken of each tensor in the graph (`viewed`), for `views_of`: id(base) -> {id(view):
# weak reference}. Keyed by id (a Tensor's == is elementwise); a base's entry goes when it does.
_views: Dict[int, Dict[int, "weakref.ReferenceType[Tensor]"]] = {}
_PRUNE_AT = 32  # views recorded of one base before the dead ones are first dropped


def viewed(out: Tensor, x: Tensor, how: str, arg: Any) -> Tensor:
    """`out`, made from x by ``how`` ('index': ``x[arg]`` with a basic index; 'reshape'; 'transpose'
    by the permutation `arg`), remembers it when its array views x's memory and the graph is
    recorded: an in-place op on it in the graph then writes through to x, and one on x reaches
    it, as the shared memory gives them outside the graph (`pycoll.inplace_ops.write_through`,
    `pycoll.inplace_ops.take`)."""
    if _graph.is_grad_enabled() and views_memory_of(out, x):
        out.__dict__["_view"] = (x, how, arg)
        views = _views.get(id(x))
        if views is None:
            views = _views[id(x)] = {}
            weakref.finalize(x, _views.pop, id(x), None)
        elif len(views) >= _PRUNE_AT and not len(views) & (len(views) - 1):  # at 32, 64, 128...: amortized
            for key in [k for k, ref in views.items() if ref() is None]:
                del views[key]
        views[id(out)] = weakref.ref(out)
    return out


def views_of(base: Tensor) -> List[Tensor]:
    """The live views `viewed` recorded of ``base`` that still take it as their base."""
    views = [ref() for ref in _views.get(id(base), {}).values()]
    return [v for v in views if v is not None and v.__dict__.get("_view", (None,))[0] is base]


def views_memory_of(view: Tensor, base: Tensor) -> bool:
    """Whether `view`'s array is a view into `base`'s memory."""
    a, owner = view._array, base._array
    return a.base is not None and (a.base is owner or (owner.base is not None and a.base is owner.base))


def view_of(view: Tensor, how: str, arg: Any) -> Tensor:
    """``view`` taken again by `viewed`'s ``how``: of its base's values now."""
    if how == "index":
        return _getitem(view, arg)
    return reshape(view, arg) if how == "reshape" else transpose(view, arg)


# ---- shape ops ---------------------------------------------------------------------------

@ints_as_list("shape")
@param_aliases({"input": "x"})
def reshape(x: Tensor, shape: Sequence[int], name: Optional[str] = None) -> Tensor:
    """Reshape; -1 infers one dimension and 0 copies the input's dimension (paddle rules; for an
    x of no elements, paddle's too, a 0 is a 0: see ``_empty_target``). The shape is a list, a
    tuple or a Tensor, or ints one by one (``x.reshape(2, 3)``); it speaks of x's whole shape (a
    distributed tensor's array is its piece: ``array_target``)."""
    x = as_tensor(x)
    a = x._array
    asked = shape = plain_ints(shape)
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"reshape: shape must be a list, tuple or Tensor of ints, got {type(shape).__name__}")
    whole = list(x.shape)
    if [int(s) for s in shape].count(-1) > 1:
        raise ValueError(f"reshape: only one dimension of shape can be -1, got {list(shape)}")
    if 0 in whole:
        shape = _empty_target(whole, [int(s) for s in shape])
    else:
        shape = [int(whole[i]) if s == 0 and i < len(whole) else int(s) for i, s in enumerate(shape)]
    x, = placed("reshape", x, shape=shape)
    a = x._array
    target = array_target(x, shape)  # raises by itself when a distributed x's piece cannot follow
    try:
        out = a.reshape(target)
    except ValueError:
        given = [int(s) for s in plain_ints(asked)]
        meant = f" (read as {shape}: a 0 copies x's dimension at its position)" if given != shape else ""
        raise ValueError(f"reshape: cannot reshape a tensor of shape {whole} into {given}{meant}") from None
    src = a.shape
    backward = lambda g: (g.reshape(src),)  # noqa: E731 (its name keys the higher-order rule)
    backward.__pycoll_op__ = {"name": "reshape", "shape": shape}  # type: ignore[attr-defined]  # for placements
    return viewed(op_output(out, backward, x), x, "reshape", shape)


def _empty_target(whole: List[int], shape: List[int]) -> List[int]:
    """paddle's target shape for an x of no elements: each 0 is a 0 (unsqueeze, squeeze and the
    like keep an empty dimension where it is), and a -1 stands for what the non-zero dimensions
    of x leave beside the other non-zero ones of ``shape`` where ``shape`` holds a 0, else for 0."""
    if -1 not in shape:
        return shape
    at = shape.index(-1)
    if 0 not in shape:
        return shape[:at] + [0] + shape[at + 1:]
    known = int(np.prod([n for n in whole if n], dtype=np.int64))
    others = int(np.prod([n for i, n in enumerate(shape) if i != at and n], dtype=np.int64))
    if others == 0 or known % others:
        raise ValueError(f"reshape: cannot reshape a tensor of shape {whole} into {shape}")
    return shape[:at] + [known // others] + shape[at + 1:]


@param_aliases({"input": "x"})
@swap_two_axes
def transpose(x: Tensor, perm: Sequence[int], name: Optional[str] = None) -> Tensor:
    """x with its axes in the order `perm`; ``transpose(x, dim0, dim1)`` (paddle 3.3's torch-style
    form) swaps two axes."""
    x = as_tensor(x)
    ndim = x._array.ndim
    perm = plain_ints(perm)
    if not isinstance(perm, (list, tuple)):
        raise TypeError(f"transpose: perm must be a list or tuple of ints, got {type(perm).__name__}")
    given = list(perm)
    perm = [int(p) % _builtins.max(ndim, 1) for p in perm]
    if sorted(perm) != list(range(ndim)) or not _builtins.all(-ndim <= int(p) < ndim for p in given):
        raise ValueError(f"transpose: perm must be a permutation of the {ndim} axes of x (shape {list(x.shape)}), "
                         f"got {given}")
    inverse = [0] * ndim
    for i, p in enumerate(perm):
        inverse[p] = i
    return viewed(op_output(x._array.transpose(perm), lambda g: (g.transpose(inverse),), x), x, "transpose", perm)


@param_aliases({"input": "x", "start_dim": "start_axis", "end_dim": "stop_axis"})
def flatten(x: Tensor, start_axis: int = 0, stop_axis: int = -1, name: Optional[str] = None) -> Tensor:
    """x with dimensions start_axis..stop_axis merged into one; both axes in [-ndim, ndim) (0 or -1
    for a 0-d x, which becomes [1]) and start_axis not after stop_axis, else ValueError as paddle's."""
    shape = list(x.shape)  # the whole one (reshape finds a distributed tensor's piece's)
    start, stop = (_flatten_axis(a, len(shape), what) for a, what in ((start_axis, "start_axis"),
                                                                       (stop_axis, "stop_axis")))
    if not shape:
        return reshape(x, [1])
    if start > stop:
        raise ValueError(f"flatten: stop_axis ({stop_axis}) must not come before start_axis ({start_axis}) "
                         f"for x of shape {shape}")
    return reshape(x, shape[:start] + [-1] + shape[stop + 1:])


def _flatten_axis(axis: Any, ndim: int, what: str) -> int:
    """flatten's start_axis or stop_axis as an index into x's ndim dimensions (ValueError, as
    paddle's, for a non-int or one out of [-ndim, ndim); a 0-d x takes 0 or -1)."""
    lo, hi = (-ndim, ndim) if ndim else (-1, 1)
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not lo <= axis < hi:
        raise ValueError(f"flatten: {what} must be an int in [{lo}, {hi}) for x of {ndim} dimensions, "
                         f"got {axis!r}")
    return int(axis) % _builtins.max(ndim, 1)


@param_aliases({"input": "x", "dim": "axis"})
def unsqueeze(x: Tensor, axis: Union[int, Sequence[int]], name: Optional[str] = None) -> Tensor:
    shape = list(x.shape)  # the whole one (reshape finds a distributed tensor's piece's)
    axis = plain_ints(axis)
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    for a in axes:  # one at a time, each into the shape the ones before it made (paddle's order)
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or not -len(shape) - 1 <= a <= len(shape):
            raise ValueError(f"unsqueeze: axis {a!r} must be an int in [{-len(shape) - 1}, {len(shape)}] to "
                             f"insert into shape {shape} (axis={axis!r})")
        shape.insert(int(a) % (len(shape) + 1), 1)
    return reshape(x, shape)


@param_aliases({"input": "x", "dim": "axis"})
def squeeze(x: Tensor, axis: Any = None, name: Optional[str] = None) -> Tensor:
    """x without its dimensions of size 1 among ``axis`` (None, or an empty list as paddle's:
    every dimension of size 1)."""
    axes = normalize_axes(axis, x._array.ndim) or None
    shape = [n for i, n in enumerate(x.shape) if not (n == 1 and (axes is None or i in axes))]
    return reshape(x, shape)


def _tensor_list(x: Any, fn: str) -> list:
    """The tensors of ``x``, a list or tuple of them (a single Tensor is refused, as paddle does:
    iterating it would silently join its rows)."""
    if isinstance(x, Tensor) or is_array(x):
        raise ValueError(f"{fn}: x must be a list or tuple of Tensors, got a single "
                         f"{'Tensor' if isinstance(x, Tensor) else 'array'} of shape {list(x.shape)}")
    tensors = list(on_one_place(tuple(operand(t) for t in x)))
    if not tensors:
        raise ValueError(f"{fn}: x must hold at least one Tensor, got an empty {type(x).__name__}")
    dtype = tensors[0]._array.dtype
    for i, t in enumerate(tensors[1:], 1):
        if t._array.dtype != dtype:  # paddle refuses too (no promotion): cast first
            raise ValueError(f"{fn}: x[0] has dtype {tensors[0].dtype} and x[{i}] {t.dtype}; every tensor must "
                             f"have the same dtype (cast them first)")
    return tensors


def _same_shapes(tensors: list, fn: str, axis: Optional[int] = None) -> None:
    """Every tensor's shape equal to the first's, except along ``axis`` (concat's). A plain
    tensor's shape is its array's; a distributed one's, its whole shape."""
    def kept(t: Tensor) -> tuple:  # the dimensions that must agree
        shape = t._array.shape if type(t) is Tensor else tuple(t.shape)
        return shape if axis is None else (len(shape),) + shape[:axis] + shape[axis + 1:]

    first = kept(tensors[0])
    for i, t in enumerate(tensors[1:], 1):
        if kept(t) != first:
            along = "" if axis is None else f" except along axis {axis}"
            raise ValueError(f"{fn}: x[0] has shape {tensors[0].shape} and x[{i}] {t.shape}; they must be "
                             f"equal{along}")


@param_aliases({"tensors": "x", "dim": "axis"})
def concat(x: Sequence[Tensor], axis: int = 0, name: Optional[str] = None) -> Tensor:
    tensors = _tensor_list(x, "concat")
    if tensors[0]._array.ndim == 0:  # paddle's ValueError (its axis range is empty)
        raise ValueError("concat: x holds 0-d tensors, which have no axis to join along; use stack")
    axis = axis_arg(axis, tensors[0]._array.ndim)
    _same_shapes(tensors, "concat", axis)
    tensors = placed("concat", *tensors, axis=axis)
    arrays = [t._array for t in tensors]
    xp = array_module(arrays[0])
    bounds = list(itertools.accumulate((a.shape[axis] for a in arrays), initial=0))
    lead = (slice(None),) * axis
    n = len(arrays)  # the backward keeps no values of the inputs (see pycoll._graph)

    def backward(g: Any) -> list:
        return [g[lead + (slice(bounds[i], bounds[i + 1]),)] for i in range(n)]
    return op_output(xp.concatenate(arrays, axis=axis), backward, *tensors)


@param_aliases({"tensors": "x", "dim": "axis"})
def stack(x: Sequence[Tensor], axis: int = 0, name: Optional[str] = None) -> Tensor:
    tensors = _tensor_list(x, "stack")
    _same_shapes(tensors, "stack")
    arrays = [t._array for t in tensors]
    xp = array_module(arrays[0])
    axis = _stack_axis(axis, arrays[0].ndim)
    lead = (slice(None),) * axis
    n = len(arrays)  # the backward keeps no values of the inputs (see pycoll._graph)
    return op_output(xp.stack(arrays, axis=axis), lambda g: [g[lead + (i,)] for i in range(n)], *tensors)


def _stack_axis(axis: Any, ndim: int) -> int:
    """stack's axis, in [-(ndim + 1), ndim + 1) for inputs of ndim dimensions, as non-negative."""
    if isinstance(axis, Tensor):
        axis = axis.item()
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -ndim - 1 <= axis <= ndim:
        raise ValueError(f"stack: axis must be an int in [{-ndim - 1}, {ndim + 1}) for inputs of {ndim} "
                         f"dimensions, got {axis!r}")
    return int(axis) % (ndim + 1)


def unbroadcast(g: Any, shape: tuple) -> Any:
    """Sum `g` over the dimensions that broadcasting added to reach it from `shape`."""
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g


def plain_ints(value: Any) -> Any:
    """paddle's int arguments given as Tensors, made plain: a Tensor becomes its value(s)
    (``tolist``), a list's or tuple's one-element Tensors their ints; anything else as it is."""
    if isinstance(value, Tensor):
        return value.tolist()
    if isinstance(value, (list, tuple)) and _builtins.any(isinstance(v, Tensor) for v in value):
        return [v.item() if isinstance(v, Tensor) and v.size == 1 else v for v in value]
    return value


def axis_arg(axis: Any, ndim: int, fn: Optional[str] = None) -> int:
    """One axis (an int or a 1-element Tensor, as paddle allows) as a non-negative int. With op
    name ``fn``, a 0-d tensor (which has no axis to run along) is refused, naming ``fn``."""
    if isinstance(axis, Tensor):
        axis = axis.item()
    if fn is not None and ndim == 0:
        raise ValueError(f"{fn}: x is 0-d, so it has no axis {axis!r}; give it one first (x.reshape([1]))")
    axes = normalize_axes(axis, ndim, fn)
    if not axes or len(axes) != 1:
        raise ValueError(f"{fn + ': ' if fn else ''}axis must be one int, got {axis!r}")
    return axes[0]


def _sections(size: int, num_or_sections: Any) -> List[int]:
    """The sizes `split` cuts a dimension of `size` into (paddle's rules, ValueError otherwise)."""
    if isinstance(num_or_sections, (int, np.integer)) and not isinstance(num_or_sections, bool):
        n = int(num_or_sections)
        if n <= 0 or size % n:
            raise ValueError(f"num_or_sections: {n} does not divide the split dimension of size {size} evenly")
        return [size // n] * n
    if not isinstance(num_or_sections, (list, tuple)) or not num_or_sections:
        raise TypeError(f"num_or_sections must be an int or a list of ints, got {num_or_sections!r}")
    sections = plain_ints(list(num_or_sections))
    refuse_floats(sections, "num_or_sections", "split")
    sections = [int(s) for s in sections]
    if sections.count(-1) > 1 or any(s < -1 for s in sections):
        raise ValueError(f"num_or_sections may hold one -1 and otherwise sizes >= 0, got {sections}")
    if -1 in sections:
        rest = size - _builtins.sum(s for s in sections if s != -1)
        if rest < 0:
            raise ValueError(f"num_or_sections {sections} exceed the split dimension of size {size}")
        sections[sections.index(-1)] = rest
    if _builtins.sum(sections) != size:
        raise ValueError(f"num_or_sections {sections} must add up to the split dimension's size {size}")
    return sections


def split(x: Tensor, num_or_sections: Union[int, Sequence[int]], axis: Any = 0,
          name: Optional[str] = None) -> List[Tensor]:
    """Cut x along `axis` into `num_or_sections` equal pieces, or pieces of the listed sizes (one
    may be -1: the rest). The pieces are copies, as paddle's are (a later write into x leaves
    them as they were)."""
    x = as_tensor(x)
    axis = axis_arg(axis, x.ndim, "split")
    x, = placed("split", x, axes=(axis,))
    a = x._array
    bounds = list(itertools.accumulate(_sections(a.shape[axis], num_or_sections), initial=0))
    lead = (slice(None),) * axis
    pieces = [a[lead + (slice(bounds[i], bounds[i + 1]),)].copy() for i in range(len(bounds) - 1)]
    xp = array_module(a)

    def backward(grads: Any) -> tuple:
        grads = grads if len(pieces) > 1 else [grads]
        return (xp.concatenate([xp.zeros(p.shape, p.dtype) if g is None else g
                                for p, g in zip(pieces, grads)], axis=axis),)
    outs = [wrap(p) for p in pieces]
    _graph.record(outs, backward, [x])
    return outs


@param_aliases({"input": "x", "dim": "axis"})
def chunk(x: Tensor, chunks: int, axis: Any = 0, name: Optional[str] = None) -> List[Tensor]:
    """`split` into `chunks` equal pieces."""
    if not isinstance(chunks, (int, np.integer)) or isinstance(chunks, bool):
        raise TypeError(f"chunk: chunks must be an int, got {type(chunks).__name__}")
    if chunks <= 0:
        raise ValueError(f"chunk: chunks must be > 0, got {chunks}")
    x = as_tensor(x)
    size = x.shape[axis_arg(axis, x.ndim, "chunk")]
    if chunks > size or size % chunks:
        raise ValueError(f"chunk: chunks={chunks} cannot split axis {axis} of size {size} evenly")
    return split(x, int(chunks), axis)


def refuse_floats(values: Any, name: str, fn: str) -> None:
    """TypeError where a list or tuple of ints holds a float (paddle refuses one: ``tile(x, [1.5, 2])``
    would otherwise be truncated silently)."""
    if isinstance(values, (list, tuple)):
        for i, v in enumerate(values):
            if isinstance(v, (float, np.floating)):
                raise TypeError(f"{fn}: {name} must be a list of ints, got the float {v!r} at position {i} "
                                f"of {list(values)}")


def int_list(v: Any, name: str) -> List[int]:
    if isinstance(v, Tensor):
        v = v.tolist()
    if isinstance(v, (int, np.integer)):
        v = [v]
    if not isinstance(v, (list, tuple)):
        raise TypeError(f"{name} must be a list or tuple of ints, got {type(v).__name__}")
    return [int(i.item() if isinstance(i, Tensor) else i) for i in v]


@param_aliases({"input": "x", "dims": "repeat_times"})
def tile(x: Tensor, repeat_times: Sequence[int], name: Optional[str] = None) -> Tensor:
    """x repeated `repeat_times[i]` times along each dimension (the shorter of x's shape and
    `repeat_times` is padded with leading 1s)."""
    x = as_tensor(x)
    refuse_floats(plain_ints(repeat_times), "repeat_times", "tile")
    reps = int_list(repeat_times, "repeat_times")
    if any(r < 0 for r in reps):
        raise ValueError(f"repeat_times must be >= 0, got {reps}")
    grown = [1] * (x.ndim - len(reps)) + reps  # aligned from the right with x's dimensions
    x, = placed("tile", x, axes=tuple(i for i in range(x.ndim) if grown[i + len(grown) - x.ndim] != 1))
    a = x._array
    n = _builtins.max(len(reps), a.ndim)
    reps = [1] * (n - len(reps)) + reps
    shape = (1,) * (n - a.ndim) + a.shape
    src = a.shape
    interleaved = [d for pair in zip(reps, shape) for d in pair]

    def backward(g: Any) -> tuple:
        return (g.reshape(interleaved).sum(axis=tuple(range(0, 2 * n, 2))).reshape(src),)
    return op_output(array_module(a).tile(a, reps), backward, x)


@ints_as_list("shape")
@param_aliases({"input": "x", "size": "shape"})
def expand(x: Tensor, shape: Sequence[int], name: Optional[str] = None) -> Tensor:
    """x broadcast to `shape` (a list, or ints one by one: ``x.expand(2, 3)``); -1 keeps x's size
    of that dimension."""
    x = as_tensor(x)
    shape = int_list(shape, "shape")
    lead = len(shape) - x.ndim
    if lead < 0:
        raise ValueError(f"shape {shape} has fewer dimensions than x's shape {x.shape}")
    x, = placed("expand", x, axes=tuple(i for i, n in enumerate(x.shape) if shape[i + lead] not in (-1, n)))
    a = x._array
    target = []
    for i, s in enumerate(shape):
        own = a.shape[i - lead] if i >= lead else None
        if s == -1 and own is None:
            raise ValueError(f"shape: -1 is allowed only where x has a dimension, got {shape}")
        if s == -1 or (own is not None and s == x.shape[i - lead]):  # kept: the array's own (a piece's)
            s = own
        if s < 0 or (own is not None and own not in (1, s)):
            raise ValueError(f"cannot expand x of shape {x.shape} to shape {shape}")
        target.append(s)
    src = a.shape
    out = array_module(a).broadcast_to(a, target).copy()  # a tensor of its own, as paddle's
    return op_output(out, lambda g: (unbroadcast(g, src),), x)


def numel(x: Tensor, name: Optional[str] = None) -> Tensor:
    """The number of elements, as a 0-d int64 tensor (paddle's)."""
    x = as_tensor(x)  # x.shape: the whole tensor's (auto-parallel), so the answer is a plain tensor
    return value_output(array_module(x._array).asarray(math.prod(x.shape), dtype=int64), "numel")


@param_aliases({"obj": "x"})
def is_tensor(x: Any) -> bool:
    """Whether x is a pycoll Tensor."""
    return isinstance(x, Tensor)


# ---- indexing ------------------------------------------------------------------------------

def _has_int_array(index: Any) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(is_array(i) and i.dtype.kind in "iu" for i in items)


def _as_view_index(index: Any) -> Any:
    """``index`` (arrays already) with each 0-d integer array as an int, and an Ellipsis after an
    index of ints alone: paddle's ``x[0]``, ``m[1, 1]`` and ``x[to_tensor(0)]`` are views of x,
    which NumPy gives for ``x[0, ...]`` (``x[0]`` is a scalar copy there, and a 0-d array index
    an advanced, copying one); an in-place op on the element then changes x."""
    items = index if isinstance(index, tuple) else (index,)
    items = tuple(int(i) if is_array(i) and i.ndim == 0 and i.dtype.kind in "iu" else i for i in items)
    if items and all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in items):
        return items + (Ellipsis,)
    return items if isinstance(index, tuple) else items[0]


_BASIC = (int, slice, type(None), type(Ellipsis))  # index items that are neither arrays nor lists


def _getitem(x: Tensor, index: Any) -> Tensor:
    x, = placed("index", x, index=index)
    a = x._array
    xp = array_module(a)
    if type(index) in _BASIC or (type(index) is tuple and all(type(i) in _BASIC for i in index)):
        given, repeats = index, False  # a basic index: no array to convert or check
        index = _as_view_index(given)
    else:
        given = index_arrays(index, xp)
        check_device_index("index", given, a.shape)
        index = _as_view_index(given)
        repeats = _has_int_array(index)  # integer arrays may pick an element twice: scatter-add
    shape = a.shape  # the backward keeps no values of x (see pycoll._graph's saved memory)

    def backward(g: Any) -> tuple:
        z = xp.zeros(shape, dtype=g.dtype)
        if repeats:
            scatter_add(z, index, g)
        else:
            z[index] = g
        return (z,)
    try:
        picked = a[index]
    except (IndexError, TypeError) as exc:  # NumPy's words, with the tensor's shape and the index given
        raise IndexError(f"indexing a Tensor of shape {list(shape)} with {given!r}: {exc}") from None
    return viewed(op_output(picked, backward, x), x, "index", index)


def clone(x: Tensor, name: Optional[str] = None) -> Tensor:
    """A copy of x that stays in the graph."""
    return op_output(x._array.copy(), lambda g: (g,), x)


# ---- methods (tensor.py imports no op module: the ops attach themselves) ------------------

for _name, _fn in {
    "reshape": reshape, "transpose": transpose, "flatten": flatten, "unsqueeze": unsqueeze,
    "squeeze": squeeze, "clone": clone, "__getitem__": _getitem,
    "split": split, "chunk": chunk, "tile": tile, "expand": expand, "numel": numel,
}.items():
    setattr(Tensor, _name, _fn)
del _name, _fn
Tensor.T = property(lambda x: transpose(x, list(range(x.ndim))[::-1]),
                    doc="The tensor with its axes reversed.")
