"""Ops on the memory behind a tensor, paddle's names: ``as_strided`` (a view of x's elements at
given strides), ``set_`` (x takes another tensor's memory, maybe at strides of its own),
``resize_`` (x's elements, truncated or extended, in a new shape) and ``reconstruct_from_`` (x
takes another tensor's memory as it is).

As paddle's, ``offset`` counts bytes from the first element of x's memory; strides count
elements. The gradient of ``as_strided`` adds the result's gradient up at the elements each
position reads (an element read twice gets both).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from pycoll import _graph
from pycoll._tensor_ops import as_tensor, op_output, placed
from pycoll.device import array_module
from pycoll.inplace_ops import LeafInplaceError, in_place
from pycoll.shape_ops import concat, flatten, int_list, reshape, scatter_add
from pycoll.tensor import Tensor, wrap


def _row_major(shape: Sequence[int]) -> list:
    strides, step = [], 1
    for n in reversed(shape):
        strides.insert(0, step)
        step *= max(n, 1)
    return strides


def as_strided(x: Tensor, shape: Sequence[int], stride: Sequence[int], offset: int = 0,
               name: Optional[str] = None) -> Tensor:
    """A tensor of `shape` whose element (i, j, ...) is x's flat element offset / itemsize +
    i * stride[0] + j * stride[1] + ...; over x's own memory (a view) when x is contiguous."""
    x, = placed("_all_whole", as_tensor(x))  # auto-parallel: strides address the whole tensor's memory
    shape, stride = int_list(shape, "as_strided: shape"), int_list(stride, "as_strided: stride")
    if len(shape) != len(stride):
        raise ValueError(f"as_strided: shape and stride must have the same length, got {shape} and {stride}")
    if any(n < 0 for n in shape) or any(s < 0 for s in stride):
        raise ValueError(f"as_strided: shape and stride must be >= 0, got {shape} and {stride}")
    a = x._array
    xp = array_module(a)
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0 or offset % a.itemsize:
        raise ValueError(f"as_strided: offset counts bytes and must be a multiple of the itemsize "
                         f"{a.itemsize} that is >= 0, got {offset!r}")
    start = offset // a.itemsize
    count = 1
    for n in shape:
        count *= n
    last = start + sum((n - 1) * s for n, s in zip(shape, stride))
    if count and last >= a.size:
        raise ValueError(f"as_strided: shape {shape} at strides {stride} from offset {offset} reads element "
                         f"{last}, past x's {a.size} elements")
    positions = xp.full(tuple(shape), start, dtype=xp.int64)
    for axis, (n, s) in enumerate(zip(shape, stride)):
        positions = positions + (xp.arange(n, dtype=xp.int64) * s).reshape((n,) + (1,) * (len(shape) - axis - 1))
    if a.flags.c_contiguous and count:
        flat = a.reshape(-1)[start:]
        out = xp.lib.stride_tricks.as_strided(flat, tuple(shape), tuple(s * a.itemsize for s in stride))
    else:
        out = a.reshape(-1)[positions]

    def backward(g: Any) -> tuple:
        grad = xp.zeros(a.size, dtype=g.dtype)
        scatter_add(grad, positions.reshape(-1), g.reshape(-1))
        return (grad.reshape(a.shape),)
    return op_output(out, backward, x)


def set_(x: Tensor, source: Optional[Tensor] = None, shape: Optional[Sequence[int]] = None,
         stride: Optional[Sequence[int]] = None, offset: int = 0, name: Optional[str] = None) -> Tensor:
    """x takes `source`'s memory (its dtype too), seen at `shape` (default source's), `stride`
    (default row-major for that shape) and `offset` (bytes); without a source, x becomes an empty
    tensor of its dtype. Outside the graph x shares source's memory; in it, the gradient reaches
    source."""
    if not isinstance(x, Tensor):
        raise TypeError(f"set_: x must be a Tensor, got {type(x).__name__}")
    if source is None:
        view = wrap(array_module(x._array).empty(0, dtype=x._array.dtype))  # x's dtype and place
    else:
        if not isinstance(source, Tensor):
            raise TypeError(f"set_: source must be a Tensor or None, got {type(source).__name__}")
        shape = source.shape if shape is None else int_list(shape, "set_: shape")
        view = as_strided(source, shape, _row_major(shape) if stride is None else stride, offset)
    if view.grad_node is not None:
        return in_place(x, "set_", lambda: view, keep_shape=False)
    if _graph.is_grad_enabled() and not x.stop_gradient and x.grad_node is None:
        raise LeafInplaceError("set_: a leaf tensor that takes a gradient (stop_gradient=False) cannot be "
                               "changed in place; do it under pycoll.no_grad()")
    x._array = view._array
    x._bump_inplace_version()
    return x


def resize_(x: Tensor, shape: Sequence[int], fill_zero: bool = False, name: Optional[str] = None) -> Tensor:
    """x's elements in row-major order, cut to or extended to the size of `shape`, in that shape, in
    place. New elements are 0 (paddle leaves them unset unless `fill_zero`; pycoll always zeroes them)."""
    shape = int_list(shape, "resize_: shape")
    if any(n < 0 for n in shape):
        raise ValueError(f"resize_: shape must be >= 0 in every dimension, got {shape}")
    size = 1
    for n in shape:
        size *= n

    def compute() -> Tensor:
        flat = flatten(x) if x.ndim else reshape(x, [1])
        if size <= flat.shape[0]:
            return reshape(flat[:size], shape)
        extra = wrap(array_module(x._array).zeros(size - flat.shape[0], dtype=x._array.dtype))  # on x's place
        return reshape(concat([flat, extra]), shape)
    return in_place(x, "resize_", compute, keep_shape=False)


def reconstruct_from_(x: Tensor, other: Tensor) -> None:
    """x takes other's memory as it is (its shape and dtype too), sharing it, and other's
    stop_gradient; x's place in the graph stays. Returns None (paddle's)."""
    if not isinstance(other, Tensor):
        raise TypeError(f"reconstruct_from_: other must be a Tensor, got {type(other).__name__}")
    x._array = other._array
    x.stop_gradient = other.stop_gradient


def _allocation(a: Any) -> Any:
    """What holds the memory behind array ``a``: CuPy's allocation, or the object at the end of
    a NumPy array's chain of bases (the first array, or the buffer it was made on)."""
    pointer = getattr(a, "data", None)
    if hasattr(pointer, "mem"):  # a CuPy MemoryPointer
        return pointer.mem
    while getattr(a, "base", None) is not None:
        a = a.base
    return a


def _is_shared_buffer_with(x: Tensor, other: Tensor) -> bool:
    """Whether x and `other` are views of one piece of memory (paddle's private check, which its
    ``set_`` example calls); not whether the elements they see overlap."""
    if not isinstance(other, Tensor):
        raise TypeError(f"_is_shared_buffer_with: other must be a Tensor, got {type(other).__name__}")
    return _allocation(x._array) is _allocation(other._array)


for _fn in (as_strided, set_, resize_, reconstruct_from_, _is_shared_buffer_with):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
