"""DataParallel's averaging of row gradients (``Embedding(sparse=True)`` weights), as rows.

Such a weight's gradient is the rows its lookups touched (``pycoll.tensor.RowsGrad``, paddle's
SelectedRows). All-reducing it in a bucket would make it dense: the whole table, every step, on
every rank. Paddle's reducer instead all-gathers each rank's rows, and so does this module: the
averaged gradient is every rank's rows, concatenated, each scaled by 1/world (repeats add up
wherever it is used, so this equals the dense average). A step then moves ``world x rows looked up``
rows in place of the table's.

The ranks first exchange what each holds for every such weight (one small all-gather): a number of
rows, ``ABSENT`` (no gradient: the weight was not used on that rank) or ``DENSE`` (the gradient was
made dense: a read of ``.grad``, a hook, a weight tied to a dense use). The choice that follows is
the same on every rank: nothing where no rank has a gradient (it stays None, as paddle's), an
all-reduce of the dense gradient where any rank has one dense or where the rows gathered would
outnumber the table's (then the table is the cheaper message), the rows' all-gather otherwise.
"""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence

import numpy as np

import pycoll.distributed as dist
from pycoll import _graph
from pycoll.tensor import RowsGrad, grad_tensor

ABSENT, DENSE = -1, -2  # what a rank holds for a weight, in place of its number of rows


def average(params: Sequence[Any], shapes: Sequence[tuple], group: Optional[Any], world: int, xp: Any) -> None:
    """Average the gradients of ``params`` (of ``shapes``) over ``group``'s ``world`` ranks, in
    ``.grad``: rows where every rank's are rows, dense otherwise. Every rank calls it with the same
    parameters in the same order."""
    held = xp.asarray([_held(p) for p in params], dtype=np.int64)
    everyone = xp.empty((world, len(params)), dtype=np.int64)
    dist.all_gather(everyone, held, group=group)
    for param, shape, counts in zip(params, shapes, everyone.T.tolist()):
        if all(c == ABSENT for c in counts):
            continue
        if DENSE in counts or world * max(counts) >= shape[0]:
            _average_dense(param, shape, group, world, xp)
        else:
            _average_rows(param, shape, counts, group, world, xp)


def _held(param: Any) -> int:
    grad = param.grad
    if grad is None:
        return ABSENT
    rows = grad.pending if isinstance(grad, RowsGrad) else None
    return DENSE if rows is None else len(rows.ids)


def _average_dense(param: Any, shape: tuple, group: Optional[Any], world: int, xp: Any) -> None:
    """All-reduce the dense gradient (zeros on a rank without one), then scale it by 1/world."""
    grad = param.grad
    if grad is None:
        dense = xp.zeros(shape, dtype=param.array.dtype)
    else:
        dense = grad.array if getattr(grad.array.flags, "writeable", True) else grad.array.copy()
    dist.all_reduce(dense, group=group)
    dense *= dense.dtype.type(1.0 / world)
    if grad is None or dense is not grad.array:
        param.grad = grad_tensor(dense)


def _average_rows(param: Any, shape: tuple, counts: List[int], group: Optional[Any], world: int,
                  xp: Any) -> None:
    """All-gather every rank's rows (padded to the most any rank holds) and keep them, scaled by
    1/world, as the gradient's rows."""
    dtype, most = param.array.dtype, max(counts)
    if most == 0:  # every rank's rows were cleared: nothing to send
        RowsGrad.set_rows_of(param, _graph.RowsValue(xp.zeros(0, dtype=np.int64), xp.zeros((0,) + tuple(shape[1:]),
                                                                                           dtype=dtype), shape, dtype))
        return
    width = math.prod(shape[1:])
    ids, rows = xp.zeros(most, dtype=np.int64), xp.zeros((most, width), dtype=dtype)
    mine = param.grad.pending if param.grad is not None else None
    if mine is not None and len(mine.ids):
        ids[:len(mine.ids)] = mine.ids
        rows[:len(mine.ids)] = mine.rows.reshape(len(mine.ids), width)
    all_ids, all_rows = xp.empty((world, most), dtype=np.int64), xp.empty((world, most, width), dtype=dtype)
    dist.all_gather(all_ids, ids, group=group)
    dist.all_gather(all_rows, rows, group=group)
    n = [max(c, 0) for c in counts]
    kept_ids = xp.concatenate([all_ids[r, :n[r]] for r in range(world)])
    kept_rows = xp.concatenate([all_rows[r, :n[r]] for r in range(world)])
    kept_rows *= dtype.type(1.0 / world)
    RowsGrad.set_rows_of(param, _graph.RowsValue(
        kept_ids, kept_rows.reshape((len(kept_ids),) + tuple(shape[1:])), shape, dtype))
