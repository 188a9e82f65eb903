"""More of paddle's shape ops: flip, roll, rot90, repeat_interleave, unbind/unstack, moveaxis,
swapaxes/permute/t/matrix_transpose, tensor_split/hsplit/vsplit/dsplit, broadcast_to/expand_as/broadcast_tensors/
broadcast_shape, atleast_1d/2d/3d, ravel, view/view_as, narrow, slice, strided_slice and crop
(also Tensor methods).

Most are compositions of `shape_ops`' differentiable ops (indexing, reshape, transpose, expand),
which give them their gradients; flip, roll and rot90 are ops of their own.

Memory follows paddle 3.3.1's dygraph, op by op (measured: an in-place op on the result, or on x
afterwards, shows whether the two share memory): unbind, moveaxis, swapaxes/permute/t/matrix_transpose,
atleast_*, ravel, view/view_as, narrow, slice and strided_slice give views of x (an in-place op on
one writes x, in the graph too: `shape_ops.viewed`), and so do tensor_split/hsplit/vsplit/dsplit at
listed indices; flip, roll, rot90 (x itself for k % 4 == 0), unstack, tensor_split/hsplit/vsplit/dsplit
into n pieces, crop and broadcast_to give results in memory of their own (C-contiguous, one copy:
unstack's, tensor_split's and crop's view of x is taken, then cloned, so it is never registered
as a view).
"""
from __future__ import annotations

import builtins as _builtins
from typing import Any, List, Optional, Sequence, Union

import numpy as np

from pycoll._param_aliases import param_aliases
from pycoll import _graph
from pycoll._tensor_ops import as_tensor, normalize_axes, op_output, placed, unwatched, value_output
from pycoll.device import array_module
from pycoll.dtypes import convert_dtype, int64
from pycoll.search_ops import gather
from pycoll.shape_ops import axis_arg, clone, expand, flatten, int_list, reshape, transpose, viewed
from pycoll.tensor import Tensor, wrap
from pycoll.torch_forms import ints_as_list

_slice = _builtins.slice  # this module defines paddle's slice()


def flip(x: Any, axis: Union[int, Sequence[int]], name: Optional[str] = None) -> Tensor:
    """x reversed along `axis` (an int or a list of ints), in memory of its own (paddle's)."""
    x, = placed("flip", as_tensor(x), axes=None)  # auto-parallel: computed whole, as paddle's is
    axes = normalize_axes(axis, x.ndim)
    if len(set(axes)) != len(axes):
        raise ValueError(f"flip: axis has duplicates, got {axis!r}; name each axis once")
    xp = array_module(x._array)
    return op_output(xp.flip(x._array, axes).copy(), lambda g: (xp.flip(g, axes),), x)


@param_aliases({"input": "x", "dims": "axis"})
def roll(x: Any, shifts: Union[int, Sequence[int]], axis: Any = None, name: Optional[str] = None) -> Tensor:
    """x's elements shifted cyclically by `shifts` along `axis` (None: along x flattened)."""
    x = as_tensor(x)
    a = x._array
    xp = array_module(a)
    shifts = int_list(shifts, "shifts")
    axes = normalize_axes(axis, a.ndim) or None  # an empty axis list too: x flattened, as paddle's
    if axes is not None and len(axes) != len(shifts):
        raise ValueError(f"roll: shifts and axis must have the same length, got {shifts} and {axis}")
    x, = placed("roll", x, axes=axes)
    a = x._array
    if axes is None:
        if len(shifts) != 1:
            raise ValueError(f"roll: without axis, shifts must be one int, got {shifts}")
        src = a.shape
        return op_output(xp.roll(a.reshape(-1), shifts[0]).reshape(src),
                         lambda g: (xp.roll(g.reshape(-1), -shifts[0]).reshape(src),), x)
    back = [-s for s in shifts]
    return op_output(xp.roll(a, shifts, axes), lambda g: (xp.roll(g, back, axes),), x)


def rot90(x: Any, k: int = 1, axes: Sequence[int] = (0, 1), name: Optional[str] = None) -> Tensor:
    """x rotated by 90 degrees `k` times in the plane of `axes` (from the first towards the second),
    in memory of its own; x itself where k is a multiple of 4 (paddle's, both)."""
    given = as_tensor(x)
    x, = placed("_all_whole", given)  # auto-parallel: moves a split between dimensions, computed whole
    if x.ndim < 2:
        raise ValueError(f"rot90: x must have at least 2 dimensions (a plane to rotate in), got shape {x.shape}")
    axes = list(normalize_axes(list(axes), x.ndim))
    if len(axes) != 2 or axes[0] == axes[1]:
        raise ValueError(f"rot90: axes must be two different axes, got {axes}")
    if k % 4 == 0:
        return given
    xp = array_module(x._array)
    return op_output(xp.rot90(x._array, k, axes).copy(), lambda g: (xp.rot90(g, -k, axes),), x)


@param_aliases({"input": "x", "dim": "axis"})
def repeat_interleave(x: Any, repeats: Any, axis: Optional[int] = None, name: Optional[str] = None, *,
                      output_size: Optional[int] = None) -> Tensor:
    """Each element (slice along `axis`; None: of x flattened) repeated `repeats` times (an int, or
    a 1-D tensor with one count per element). paddle 3.3's ``output_size``, the length of the
    result along `axis`, is checked when given."""
    x = as_tensor(x)
    if axis is None:
        x, axis = flatten(x), 0
    ax = axis_arg(axis, x.ndim)
    xp = array_module(x._array)
    if not isinstance(repeats, (Tensor, int, np.integer)) or isinstance(repeats, bool):
        raise TypeError(f"repeat_interleave: repeats must be an int or a 1-D Tensor of ints, got "
                        f"{type(repeats).__name__} {repeats!r:.60}; for one count per element give "
                        f"paddle.to_tensor({repeats!r:.40})")
    counts = repeats._array if isinstance(repeats, Tensor) else int(repeats)
    n = x.shape[ax]  # x.shape: the whole (auto-parallel)
    if isinstance(repeats, Tensor) and counts.size != 1 and counts.shape != (n,):
        raise ValueError(f"repeat_interleave: repeats must hold one count per element along axis {ax} ({n}), "
                         f"got shape {list(counts.shape)}")
    low = int(counts.min()) if isinstance(repeats, Tensor) and counts.size else counts
    if low < 0:
        raise ValueError(f"repeat_interleave: repeats must be >= 0, got {low}")
    index = xp.repeat(xp.arange(n), counts)
    if output_size is not None and output_size != index.shape[0]:
        raise ValueError(f"repeat_interleave: output_size={output_size!r}, but the repeats make {index.shape[0]} "
                         f"along axis {ax}")
    return gather(x, wrap(index), ax)


@param_aliases({"dim": "axis"})
def unbind(input: Any, axis: int = 0) -> List[Tensor]:  # noqa: A002 - paddle's name
    """The slices of `input` along `axis`, that axis removed: views of input (paddle's). One op
    with a slice per output: its backward writes the slices' gradients into one zero array (an
    index per slice would add a zero array of x's size per slice: quadratic in an RNN's loop)."""
    x = as_tensor(input)
    ax = axis_arg(axis, x.ndim, "unbind")
    lead = (_slice(None),) * ax
    if not unwatched([x]):  # distributed (x.shape: the whole) or hooked: each slice an index op
        return [x[lead + (i,)] for i in range(x.shape[ax])]
    a = x._array
    outs = [wrap(a[lead + (i,)]) for i in range(a.shape[ax])]
    if not outs:
        return outs
    xp = array_module(a)

    def backward(grads: Any) -> tuple:
        grads = grads if len(outs) > 1 else [grads]
        whole = xp.zeros(a.shape, dtype=next(g for g in grads if g is not None).dtype)
        for i, g in enumerate(grads):
            if g is not None:
                whole[lead + (i,)] = g
        return (whole,)
    _graph.record(outs, backward, [x])
    return [viewed(out, x, "index", lead + (i,)) for i, out in enumerate(outs)]


def unstack(x: Any, axis: int = 0, num: Optional[int] = None) -> List[Tensor]:
    """``unbind``'s slices, each in memory of its own (paddle's unstack copies where unbind gives
    views); `num`, if given, must be the size of `axis`."""
    parts = unbind(x, axis)
    if num is not None and num != len(parts):
        raise ValueError(f"unstack: num ({num}) must equal the size of axis {axis} ({len(parts)})")
    return [clone(p) for p in parts]


@ints_as_list("dims")
def permute(input: Any, dims: Sequence[int]) -> Tensor:  # noqa: A002 - paddle's name
    """``transpose`` under torch's name; the dims are a list or ints one by one (``x.permute(1, 0)``)."""
    return transpose(input, int_list(dims, "dims"))


def moveaxis(x: Any, source: Any, destination: Any, name: Optional[str] = None) -> Tensor:
    """x with the axes `source` moved to the positions `destination`, the others in order."""
    x = as_tensor(x)
    src = list(normalize_axes(source, x.ndim))
    dst = list(normalize_axes(destination, x.ndim))
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source and destination must have the same length, got {source} and {destination}")
    for arg, axes, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(axes)) != len(axes):
            raise ValueError(f"moveaxis: each axis of {arg} must be unique, got {given} (of a {x.ndim}-D tensor)")
    rest = [i for i in range(x.ndim) if i not in src]
    perm = [0] * x.ndim
    for s, d in zip(src, dst):
        perm[d] = s
    others = iter(rest)
    for i in range(x.ndim):
        if i not in dst:
            perm[i] = next(others)
    return transpose(x, perm)


swapaxes = transpose  # paddle's other name of transpose (also swapdims): swapaxes(x, 0, 2) swaps two axes


def t(input: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002 - paddle's name
    """A 2-D tensor transposed; a 0-d or 1-D one as it is."""
    x = as_tensor(input)
    if x.ndim > 2:
        raise ValueError(f"t: input must have at most 2 dimensions, got shape {x.shape}")
    return transpose(x, [1, 0]) if x.ndim == 2 else x


def matrix_transpose(x: Any, name: Optional[str] = None) -> Tensor:
    """x with its last two axes swapped (x must have at least 2 dimensions)."""
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: x must have at least 2 dimensions, got shape {x.shape}")
    perm = list(range(x.ndim))
    perm[-2], perm[-1] = perm[-1], perm[-2]
    return transpose(x, perm)


@param_aliases({"input": "x", "dim": "axis", "indices_or_sections": "num_or_indices",
                "indices": "num_or_indices", "sections": "num_or_indices"})
def tensor_split(x: Any, num_or_indices: Any, axis: Any = 0, name: Optional[str] = None) -> List[Tensor]:
    """x cut along `axis` into `num_or_indices` pieces (the first size % n one longer), or at the
    listed indices (NumPy's array_split). As paddle's, n pieces are in memory of their own (its
    split) and pieces at indices are views of x (its slice)."""
    x = as_tensor(x)
    ax = axis_arg(axis, x.ndim)
    size = x.shape[ax]  # the whole (auto-parallel)
    counted = isinstance(num_or_indices, (int, np.integer)) and not isinstance(num_or_indices, bool)
    if counted:
        n = int(num_or_indices)
        if n <= 0:
            raise ValueError(f"tensor_split: num_or_indices must be > 0, got {n}")
        cuts = np.cumsum([size // n + (1 if i < size % n else 0) for i in range(n)])[:-1].tolist()
    else:
        cuts = int_list(num_or_indices, "num_or_indices")
    bounds = [0] + cuts + [size]
    lead = (_slice(None),) * ax
    pieces = [x[lead + (_slice(lo, hi),)] for lo, hi in zip(bounds[:-1], bounds[1:])]  # -1: from the end
    return [clone(p) for p in pieces] if counted else pieces


def hsplit(x: Any, num_or_indices: Any, name: Optional[str] = None) -> List[Tensor]:
    """tensor_split along axis 1 (axis 0 for a 1-D x)."""
    x = as_tensor(x)
    return tensor_split(x, num_or_indices, 1 if x.ndim > 1 else 0)


def vsplit(x: Any, num_or_indices: Any, name: Optional[str] = None) -> List[Tensor]:
    """tensor_split along axis 0 of an x with at least 2 dimensions."""
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"vsplit: x must have at least 2 dimensions, got shape {x.shape}")
    return tensor_split(x, num_or_indices, 0)


def dsplit(x: Any, num_or_indices: Any, name: Optional[str] = None) -> List[Tensor]:
    """tensor_split along axis 2 of an x with at least 3 dimensions."""
    x = as_tensor(x)
    if x.ndim < 3:
        raise ValueError(f"dsplit: x must have at least 3 dimensions, got shape {x.shape}")
    return tensor_split(x, num_or_indices, 2)


def broadcast_shape(x_shape: Sequence[int], y_shape: Sequence[int]) -> List[int]:
    """The shape two tensors of these shapes broadcast to (ValueError if they do not)."""
    try:
        return list(np.broadcast_shapes(tuple(x_shape), tuple(y_shape)))
    except ValueError:
        raise ValueError(f"broadcast_shape: shapes {list(x_shape)} and {list(y_shape)} do not broadcast") from None


@param_aliases({"input": "x", "size": "shape"})
def broadcast_to(x: Any, shape: Any, name: Optional[str] = None) -> Tensor:
    """x broadcast to `shape` (``expand``)."""
    return expand(x, shape)


@param_aliases({"input": "x", "other": "y"})
def expand_as(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """x broadcast to y's shape."""
    x, y = placed("expand_as", as_tensor(x), as_tensor(y))
    return expand(x, y.shape)


def broadcast_tensors(input: Sequence[Any], name: Optional[str] = None) -> List[Tensor]:  # noqa: A002
    """The tensors broadcast to their common shape."""
    tensors = [as_tensor(t) for t in input]
    shape = list(np.broadcast_shapes(*(tuple(t.shape) for t in tensors)))
    return [expand(t, shape) for t in tensors]


def _atleast(inputs: tuple, ndim: int) -> Union[Tensor, List[Tensor]]:
    outs = []
    for v in inputs:
        x = as_tensor(v)
        shape = list(x.shape)  # the whole (auto-parallel: reshape speaks of whole shapes)
        if len(shape) < ndim:  # 0-d -> [1..]; 1-D [n] -> [1, n] / [1, n, 1]; 2-D -> [m, n, 1]
            if not shape:
                shape = [1] * ndim
            elif len(shape) == 1:
                shape = [1, shape[0], 1][:ndim]
            else:
                shape = shape + [1]
            x = reshape(x, shape)
        outs.append(x)
    return outs[0] if len(outs) == 1 else outs


def atleast_1d(*inputs: Any, name: Optional[str] = None) -> Union[Tensor, List[Tensor]]:
    """Each input with at least 1 dimension (one tensor for one input, else a list)."""
    return _atleast(inputs, 1)


def atleast_2d(*inputs: Any, name: Optional[str] = None) -> Union[Tensor, List[Tensor]]:
    """Each input with at least 2 dimensions (a 1-D [n] becomes [1, n])."""
    return _atleast(inputs, 2)


def atleast_3d(*inputs: Any, name: Optional[str] = None) -> Union[Tensor, List[Tensor]]:
    """Each input with at least 3 dimensions ([n] becomes [1, n, 1], [m, n] becomes [m, n, 1])."""
    return _atleast(inputs, 3)


def ravel(input: Any) -> Tensor:  # noqa: A002 - paddle's name
    """x flattened to 1-D."""
    return flatten(as_tensor(input))


@ints_as_list("shape_or_dtype")
@param_aliases({"dtype": "shape_or_dtype", "size": "shape_or_dtype"})
def view(x: Any, shape_or_dtype: Any, name: Optional[str] = None) -> Tensor:
    """x reshaped (sharing memory where NumPy/CuPy can) to a shape (a list, or ints one by one:
    ``x.view(-1, 3)``), or its memory read as another dtype (``x.view('float32')``; the last
    dimension rescaled; no gradient)."""
    x = as_tensor(x)
    if isinstance(shape_or_dtype, (list, tuple, Tensor)):
        return reshape(x, shape_or_dtype)
    a, dtype = x._array, convert_dtype(shape_or_dtype)
    if dtype.itemsize > a.dtype.itemsize and (a.ndim == 0 or a.shape[-1] % (dtype.itemsize // a.dtype.itemsize)):
        times = dtype.itemsize // a.dtype.itemsize
        raise ValueError(f"view: x's last dimension ({a.shape[-1] if a.ndim else 'none, a 0-d tensor'}) must be a "
                         f"multiple of {times} to view {a.dtype} as {dtype}")
    return value_output(a.view(dtype), "view", x)


def view_as(x: Any, other: Any, name: Optional[str] = None) -> Tensor:
    """x reshaped to other's shape."""
    return reshape(x, as_tensor(other).shape)


def narrow(input: Any, dim: int, start: Any, length: int) -> Tensor:  # noqa: A002 - paddle's names
    """`length` elements of `input` along `dim` from `start` (negative counts from the end)."""
    x = as_tensor(input)
    ax = axis_arg(dim, x.ndim)
    size = x.shape[ax]  # the whole size (x[...] below takes its piece: auto-parallel)
    start = int(start.item() if isinstance(start, Tensor) else start)
    start = start + size if start < 0 else start
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise ValueError(f"narrow: start {start} and length {length} must lie within dim {ax} of size {size}")
    return x[(_slice(None),) * ax + (_slice(start, start + length),)]


def strided_slice(x: Any, axes: Sequence[int], starts: Any, ends: Any, strides: Any,
                  name: Optional[str] = None) -> Tensor:
    """x[starts:ends:strides] along each of `axes` (Python's slice rules: out-of-range bounds
    are clamped, negative ones count from the end)."""
    x = as_tensor(x)
    axes = list(normalize_axes(int_list(axes, "axes"), x.ndim))
    starts, ends, strides = int_list(starts, "starts"), int_list(ends, "ends"), int_list(strides, "strides")
    if not len(axes) == len(starts) == len(ends) == len(strides):
        raise ValueError(f"strided_slice: axes, starts, ends and strides must have the same length, got "
                         f"{axes}, {starts}, {ends}, {strides}")
    key = [_slice(None)] * x.ndim
    for ax, lo, hi, step in zip(axes, starts, ends, strides):
        if step == 0:
            raise ValueError("strided_slice: strides must not be 0")
        key[ax] = _slice(lo, hi, step)
    return x[tuple(key)]


def slice(input: Any, axes: Sequence[int], starts: Any, ends: Any) -> Tensor:  # noqa: A001,A002
    """input[starts:ends] along each of `axes` (see strided_slice)."""
    n = len(int_list(axes, "axes"))
    return strided_slice(input, axes, starts, ends, [1] * n)


def crop(x: Any, shape: Any = None, offsets: Any = None, name: Optional[str] = None) -> Tensor:
    """The block of x of `shape` (default x's; -1 keeps the rest of a dimension) starting at
    `offsets` (default zeros), in memory of its own (paddle's)."""
    x = as_tensor(x)
    shape = list(x.shape) if shape is None else int_list(shape, "shape")
    offsets = [0] * x.ndim if offsets is None else int_list(offsets, "offsets")
    if len(shape) != x.ndim or len(offsets) != x.ndim:
        raise ValueError(f"crop: shape and offsets need one entry per dimension of x {x.shape}, got {shape} "
                         f"and {offsets}")
    key = []
    for n, off, size in zip(x.shape, offsets, shape):
        size = n - off if size == -1 else size
        if off < 0 or size < 0 or off + size > n:
            raise ValueError(f"crop: offsets {offsets} and shape {shape} must lie within x's shape {x.shape}")
        key.append(_slice(off, off + size))
    return clone(x[tuple(key)])


def shape(input: Any) -> Tensor:  # noqa: A002 - paddle's name
    """input's shape as a 1-D int64 tensor (paddle's ``paddle.shape``)."""
    x = as_tensor(input)  # x.shape: the whole tensor's (auto-parallel), so the answer is a plain tensor
    return value_output(array_module(x._array).asarray(x.shape, dtype=int64).reshape(-1), "shape")


def rank(input: Any) -> Tensor:  # noqa: A002 - paddle's name
    """input's number of dimensions as a 0-d int32 tensor."""
    x = as_tensor(input)
    return value_output(array_module(x._array).asarray(x.ndim, dtype="int32"), "rank")  # a plain tensor (paddle's)


_METHODS = (flip, roll, rot90, repeat_interleave, unbind, unstack, moveaxis, t, tensor_split, hsplit,
            vsplit, dsplit, broadcast_to, expand_as, broadcast_tensors, atleast_1d, atleast_2d, atleast_3d, ravel,
            view, view_as, narrow, slice, strided_slice, permute, rank)
for _fn in _METHODS:
    setattr(Tensor, _fn.__name__, _fn)
del _fn
Tensor.swapaxes = Tensor.swapdims = swapaxes  # type: ignore[attr-defined]
