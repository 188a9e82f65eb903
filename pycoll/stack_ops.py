"""paddle's ops that assemble one tensor from several: vstack/row_stack, hstack, dstack,
column_stack, block_diag, cartesian_prod and combinations.

Each is a composition of `shape_ops`' differentiable ops (reshape, concat, stack, indexing), which
gives it its gradient, to any order.
"""
from __future__ import annotations

from typing import Any, List, Sequence

import numpy as np

from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module, to_module
from pycoll.diag_ops import meshgrid
from pycoll.reshape_ops import atleast_1d, atleast_2d, atleast_3d
from pycoll.shape_ops import concat, reshape, stack
from pycoll.tensor import Tensor, wrap


def _tensors(x: Sequence[Any], fn: str, name: str = "x") -> List[Tensor]:
    if isinstance(x, Tensor) or not isinstance(x, (list, tuple)) or not x:
        raise TypeError(f"{fn}: {name} must be a non-empty list or tuple of tensors, got {type(x).__name__}")
    return [as_tensor(t) for t in x]


def vstack(x: Sequence[Tensor], name: Any = None) -> Tensor:
    """The tensors (each at least 2-D: a 1-D [n] is [1, n]) joined along axis 0."""
    return concat([atleast_2d(t) for t in _tensors(x, "vstack")], axis=0)


row_stack = vstack


def hstack(x: Sequence[Tensor], name: Any = None) -> Tensor:
    """The tensors joined along axis 1, or along axis 0 when they are 1-D (0-d ones count as [1])."""
    tensors = [atleast_1d(t) for t in _tensors(x, "hstack")]
    return concat(tensors, axis=0 if tensors[0].ndim == 1 else 1)


def dstack(x: Sequence[Tensor], name: Any = None) -> Tensor:
    """The tensors (each at least 3-D: [n] is [1, n, 1], [m, n] is [m, n, 1]) joined along axis 2."""
    return concat([atleast_3d(t) for t in _tensors(x, "dstack")], axis=2)


def column_stack(x: Sequence[Tensor], name: Any = None) -> Tensor:
    """The tensors as columns: a 0-d or 1-D [n] one becomes [n, 1]; joined along axis 1."""
    tensors = [reshape(t, [t.size, 1]) if t.ndim < 2 else t for t in _tensors(x, "column_stack")]
    return concat(tensors, axis=1)


def _zeros(like: Tensor, rows: int, cols: int) -> Tensor:
    return wrap(array_module(like._array).zeros((rows, cols), like._array.dtype))


def block_diag(inputs: Sequence[Tensor], name: Any = None) -> Tensor:
    """The block-diagonal matrix of the inputs (each 0-d, 1-D [n] as [1, n], or 2-D), zeros
    elsewhere; the inputs must share one dtype."""
    blocks = []
    for k, t in enumerate(_tensors(inputs, "block_diag", "inputs")):
        if t.ndim > 2:
            raise ValueError(f"block_diag: inputs[{k}] must be 0-D, 1-D or 2-D, got shape {t.shape}")
        blocks.append(reshape(t, [1, t.size]) if t.ndim < 2 else t)
    dtypes = {str(b.dtype) for b in blocks}
    if len(dtypes) > 1:
        raise TypeError(f"block_diag: inputs must share one dtype, got {sorted(dtypes)}")
    total = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape
        pieces = ([_zeros(b, r, left)] if left else []) + [b]
        if total - left - c:
            pieces.append(_zeros(b, r, total - left - c))
        rows.append(concat(pieces, axis=1) if len(pieces) > 1 else b)
        left += c
    return concat(rows, axis=0)


def cartesian_prod(x: Sequence[Tensor], name: Any = None) -> Tensor:
    """All tuples of one element from each 1-D input, in order, as the rows of a [N, len(x)]
    tensor (one input: that input itself)."""
    tensors = _tensors(x, "cartesian_prod")
    for k, t in enumerate(tensors):
        if t.ndim != 1:
            raise ValueError(f"cartesian_prod: x[{k}] must be 1-D, got shape {t.shape}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([reshape(g, [-1]) for g in meshgrid(tensors)], axis=1)


def combinations(x: Tensor, r: int = 2, with_replacement: bool = False, name: Any = None) -> Tensor:
    """The length-r combinations of the 1-D x's elements (itertools' order), as the rows of an
    [N, r] tensor; with_replacement allows an element more than once. r = 0 gives an empty [0]
    tensor, r > len(x) without replacement an empty [0, r] one."""
    x = as_tensor(x)
    if x.ndim != 1:
        raise ValueError(f"combinations: x must be 1-D, got shape {x.shape}")
    if isinstance(r, bool) or not isinstance(r, int) or r < 0:
        raise ValueError(f"combinations: r must be a non-negative int, got {r!r}")
    if r == 0:
        return x[:0]
    index = _combination_rows(x.shape[0], r, with_replacement)
    if not len(index):
        return reshape(x[:0], [0, r])
    return x[to_module(index, array_module(x._array))]


def _combination_rows(n: int, r: int, with_replacement: bool) -> np.ndarray:
    """itertools.combinations(range(n), r) (or combinations_with_replacement) as an int64 [N, r]
    array, built a column at a time with whole-array ops instead of a Python tuple per row (300
    elements choose 2: 0.3 ms, where the tuples took 9). Each row in lexicographic order grows by
    every value after its last one (from its last one, with replacement), in increasing order, so
    the rows stay in itertools' order; a row with nothing left to grow by drops out."""
    rows = np.arange(n, dtype=np.int64)[:, None]
    for _ in range(r - 1):
        first_next = rows[:, -1] + (0 if with_replacement else 1)
        counts = n - first_next
        total = int(counts.sum())
        starts = np.cumsum(counts) - counts
        step = np.arange(total, dtype=np.int64) - np.repeat(starts, counts)
        rows = np.concatenate([np.repeat(rows, counts, axis=0), (np.repeat(first_next, counts) + step)[:, None]], axis=1)
    return rows
