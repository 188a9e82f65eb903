"""What ``Tensor.shape`` and ``Tensor.size`` give, as in paddle 3.3: `Size`, a list of ints that
also equals the tuple of the same ints, and `TensorSize`, the number of elements (an int) that can
be called for the shape (``x.size()``) or one dimension (``x.size(1)``).

A Size prints as ``pycoll.Size([2, 3])`` (``print``, ``str``, ``repr``): paddle's text with pycoll's
name, so a log of a paddle script run on pycoll reads as paddle's once ``paddle`` is replaced by
``pycoll``. Put into an f-string or ``format`` it reads ``[2, 3]``, as the list it is: pycoll's own
messages say ``got shape {x.shape}`` (paddle's, from C++, read ``[2, 3]`` too). ``Tensor.shape``
builds one from the array's shape tuple with `size_of`, which skips the checks of ``Size(...)``
(the ints are NumPy's own): ``.shape`` is read everywhere and must stay cheap.
"""
from __future__ import annotations

import operator
from typing import Any, Iterable, Optional, Union

_new_list = list.__new__
_extend = list.extend


class Size(list):
    """paddle's ``Size``: a list of ints (a shape) that equals a list or a tuple of the same ints,
    whose slices, sums and products are Sizes again, and which is, as paddle's and any list,
    unhashable (``tuple(size)`` is the hashable form)."""

    __slots__ = ()

    def __init__(self, sizes: Iterable[Any] = ()):
        try:
            items = list(sizes)
        except TypeError:
            raise TypeError(f"Size() takes an iterable of ints, got {type(sizes).__name__}") from None
        for i, v in enumerate(items):
            if isinstance(v, bool) or not hasattr(v, "__index__"):
                raise TypeError(f"Size() takes an iterable of ints, item {i} is {type(v).__name__}")
        super().__init__(operator.index(v) for v in items)

    def __repr__(self) -> str:
        return f"pycoll.Size({list.__repr__(self)})"

    def __format__(self, format_spec: str) -> str:
        return format(list.__repr__(self), format_spec)

    def __eq__(self, other: Any) -> Any:
        if isinstance(other, tuple):
            return list.__eq__(self, list(other))
        return list.__eq__(self, other)

    def __ne__(self, other: Any) -> Any:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # type: ignore[assignment]  # a list: unhashable, as paddle's Size

    def __getitem__(self, index: Any, _get: Any = list.__getitem__) -> Any:
        if type(index) is slice:  # the type test (not isinstance) keeps x.shape[0] fast
            return size_of(_get(self, index))
        return _get(self, index)

    def __add__(self, other: Any) -> "Size":
        if not isinstance(other, (list, tuple)):
            return NotImplemented
        return size_of(list.__add__(self, list(other)))

    def __radd__(self, other: Any) -> "Size":
        if not isinstance(other, (list, tuple)):
            return NotImplemented
        return size_of(list(other) + list(self))

    def __mul__(self, times: Any) -> "Size":
        out = list.__mul__(self, times)
        return out if out is NotImplemented else size_of(out)

    __rmul__ = __mul__

    def numel(self) -> int:
        """The number of elements of a tensor of this shape (1 for ``[]``)."""
        n = 1
        for d in self:
            n *= d
        return n

    def __reduce__(self) -> tuple:
        return (Size, (list(self),))


def size_of(dims: Iterable[int]) -> Size:
    """A Size of `dims` (ints, e.g. an array's shape tuple), without ``Size()``'s checks."""
    s = _new_list(Size)
    _extend(s, dims)
    return s


class TensorSize(int):
    """paddle's ``Tensor.size``: the number of elements, an int that can also be called:
    ``x.size()`` is x's shape (a Size), ``x.size(dim)`` the size of dimension `dim`. Arithmetic
    on it gives plain ints."""

    as_shape: tuple

    def __call__(self, dim: Optional[int] = None) -> Union[Size, int]:
        shape = self.as_shape
        if dim is None:
            return size_of(shape)
        if isinstance(dim, bool) or not hasattr(dim, "__index__"):
            raise TypeError(f"size(): dim must be an int, got {type(dim).__name__}")
        try:
            return shape[operator.index(dim)]
        except IndexError:
            raise IndexError(f"size(): dim {dim} is out of range for a tensor of {len(shape)} "
                             f"dimensions") from None

    def __reduce__(self) -> tuple:
        return (int, (int(self),))


def tensor_size(shape: tuple, count: int) -> TensorSize:
    """The TensorSize of an array of `shape` holding `count` elements."""
    t = int.__new__(TensorSize, count)
    t.as_shape = shape  # paddle's attribute name
    return t
