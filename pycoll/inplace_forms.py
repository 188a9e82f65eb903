"""paddle's in-place forms ``cast_``, ``transpose_``, ``t_``, ``where_`` and
``fill_diagonal_tensor_`` (with ``fill_diagonal_tensor``, its out-of-place op), as functions and
Tensor methods.

Each runs the op (cast, transpose, t, where, diagonal_scatter) and makes x hold the result through
`pycoll.inplace_ops.in_place`, whose rules they share: the gradient flows through the op, and a
leaf that takes a gradient is refused outside no_grad. ``cast_`` changes x's dtype, ``transpose_``
and ``t_`` its shape.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from pycoll._tensor_ops import as_tensor
from pycoll.dtypes import DTypeLike
from pycoll.index_writes import diagonal_scatter
from pycoll.inplace_ops import in_place
from pycoll.math_ops import cast
from pycoll.reshape_ops import t
from pycoll.search_ops import where
from pycoll.shape_ops import transpose
from pycoll.tensor import Tensor


def cast_(x: Tensor, dtype: DTypeLike) -> Tensor:
    """x converted to `dtype`, in place (floats to integers truncate towards zero)."""
    return in_place(x, "cast_", lambda: cast(x, dtype), keep_shape=False)


def transpose_(x: Tensor, perm: Sequence[int], name: Optional[str] = None) -> Tensor:
    """x with its dimensions permuted by `perm`, in place."""
    return in_place(x, "transpose_", lambda: transpose(x, perm), keep_shape=False)


def t_(input: Tensor, name: Optional[str] = None) -> Tensor:  # noqa: A002 - paddle's name
    """A 2-D x transposed in place (0-d and 1-D ones stay as they are)."""
    return in_place(input, "t_", lambda: t(input), keep_shape=False)


def fill_diagonal_tensor(x: Tensor, y: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1,
                         name: Optional[str] = None) -> Tensor:
    """x with the diagonal of dimensions `dim1` and `dim2` (at `offset`) replaced by y, whose shape
    is that diagonal's: x's other dimensions, then the diagonal's length (``diagonal_scatter``).
    The gradient reaches x off the diagonal and y on it."""
    return diagonal_scatter(x, y, offset, dim1, dim2)


def fill_diagonal_tensor_(x: Tensor, y: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1,
                          name: Optional[str] = None) -> Tensor:
    """``fill_diagonal_tensor`` in place."""
    return in_place(x, "fill_diagonal_tensor_", lambda: diagonal_scatter(x, y, offset, dim1, dim2))


def where_(condition: Any, x: Any = None, y: Any = None, name: Optional[str] = None) -> Tensor:
    """x = where(condition, x, y): x keeps its values where `condition` holds and takes y's
    elsewhere; condition and y broadcast to x's shape (not beyond it). Returns x."""
    if x is None or y is None:
        raise ValueError("where_: x and y must both be given")
    x = as_tensor(x)
    return in_place(x, "where_", lambda: where(condition, x, y))


for _fn in (cast_, transpose_, t_, fill_diagonal_tensor, fill_diagonal_tensor_, where_):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
