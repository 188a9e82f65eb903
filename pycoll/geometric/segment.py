"""Segment reductions, paddle's ``segment_sum`` / ``segment_mean`` / ``segment_max`` /
``segment_min`` (``paddle.geometric``'s, which ``paddle.incubate`` names too), and the one op
under them and under the message passing ops: `segment_reduce`, rows of data combined by the
segment each one belongs to.

As paddle's: a segment that no row belongs to is 0; the gradient of a max or min reaches every
row that equals its segment's result (ties all take it), a mean's is divided by the segment's
row count.
"""
from __future__ import annotations

from typing import Any, Optional

from pycoll._fp_quiet import quiet as fp_quiet
from pycoll._tensor_ops import as_tensor, op_output
from pycoll.device import array_module, to_module
from pycoll.index_ops import _ufunc_at
from pycoll.tensor import Tensor

REDUCE_OPS = ("sum", "mean", "max", "min")


def segment_ids(ids: Any, rows: int, fn: str, arg: str) -> Any:
    """`ids` as a 1-D integer array of `rows` entries, each >= 0 (a column [rows, 1] taken as
    paddle takes it: graph_khop_sampler's edges come so)."""
    a = as_tensor(ids)._array
    if a.dtype.kind not in "iu":
        raise TypeError(f"{fn}: {arg} must hold integers (int32 or int64), got dtype {a.dtype}")
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != 1 or a.shape[0] != rows:
        raise ValueError(f"{fn}: {arg} must be 1-D with {rows} entries (one per row), got shape {list(a.shape)}")
    if a.size and int(a.min()) < 0:
        raise ValueError(f"{fn}: {arg} must be >= 0, got {int(a.min())}")
    return a


def segment_reduce(data: Tensor, ids: Any, num: int, reduce_op: str, fn: str) -> Tensor:
    """A tensor of `num` rows: row k combines (by `reduce_op`) the rows i of data with ids[i] == k,
    0 where there are none. `ids` is an integer array checked by `segment_ids`."""
    if reduce_op not in REDUCE_OPS:
        raise ValueError(f"{fn}: reduce_op must be one of {list(REDUCE_OPS)}, got {reduce_op!r}")
    a = data._array
    xp = array_module(a)
    ids = to_module(ids, xp)
    if ids.size and int(ids.max()) >= num:
        raise ValueError(f"{fn}: an index {int(ids.max())} is past the {num} rows of the output")
    shape = (num,) + a.shape[1:]
    counts = xp.bincount(ids, minlength=num).astype(a.dtype)
    present = (counts > 0).reshape((num,) + (1,) * (a.ndim - 1))
    with fp_quiet():  # inf + -inf is NaN, a sum past the dtype's range inf: answers
        if reduce_op in ("sum", "mean"):
            out = xp.zeros(shape, dtype=a.dtype)
            _ufunc_at(xp, "add", out, ids, a)
            if reduce_op == "mean":
                out = out / xp.maximum(counts, 1).reshape(present.shape).astype(a.dtype)
        else:
            # from the dtype's far end (paddle's: a segment of -inf rows has the maximum -inf)
            if a.dtype.kind in "fc":
                start = -xp.inf if reduce_op == "max" else xp.inf
            else:
                start = xp.iinfo(a.dtype).min if reduce_op == "max" else xp.iinfo(a.dtype).max
            out = xp.full(shape, start, dtype=a.dtype)
            _ufunc_at(xp, "maximum" if reduce_op == "max" else "minimum", out, ids, a)
            out = xp.where(present, out, 0).astype(a.dtype, copy=False)

    def backward(g: Any) -> tuple:
        rows = g[ids]
        if reduce_op == "mean":
            return (rows / xp.maximum(counts, 1)[ids].reshape((-1,) + (1,) * (a.ndim - 1)).astype(g.dtype),)
        if reduce_op in ("max", "min"):
            return (xp.where(a == out[ids], rows, 0).astype(g.dtype, copy=False),)
        return (rows,)
    return op_output(out.astype(a.dtype, copy=False), backward, data)


def _check_sorted(ids: Any, fn: str) -> None:
    """paddle's segment ops take ids in ascending order; ValueError naming the first pair out of it."""
    falls = array_module(ids).flatnonzero(ids[1:] < ids[:-1])
    if falls.size:
        i = int(falls[0])
        raise ValueError(f"{fn}: segment_ids must be sorted, got segment_ids[{i}] = {int(ids[i])} > "
                         f"segment_ids[{i + 1}] = {int(ids[i + 1])}")


def _segment(reduce_op: str) -> Any:
    def segment(data: Tensor, segment_ids: Tensor, name: Optional[str] = None) -> Tensor:
        fn = f"segment_{reduce_op}"
        data = as_tensor(data)
        if data.ndim < 1:
            raise ValueError(f"{fn}: data must have at least 1 dimension, got shape {data.shape}")
        ids = _ids(segment_ids, data.shape[0], fn, "segment_ids")
        _check_sorted(ids, fn)
        num = int(ids.max()) + 1 if ids.size else 0
        return segment_reduce(data, ids, num, reduce_op, fn)
    segment.__name__ = segment.__qualname__ = f"segment_{reduce_op}"
    segment.__doc__ = (f"The {reduce_op} of data's rows by segment: row k of the result combines the rows i "
                       f"with segment_ids[i] == k (ids sorted, >= 0; max(ids) + 1 rows; 0 where none).")
    return segment


_ids = segment_ids  # the segment functions take an argument of that name
segment_sum = _segment("sum")
segment_mean = _segment("mean")
segment_max = _segment("max")
segment_min = _segment("min")
