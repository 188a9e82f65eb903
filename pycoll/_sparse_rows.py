"""The rows a sparse gradient touched, for the optimizers' ``lazy_mode``.

paddle's ``Embedding(sparse=True)`` gives its weight a SelectedRows gradient: the looked-up rows
alone, and Adam's ``lazy_mode`` updates just those rows. pycoll's weight gets its gradient as rows
(``pycoll.tensor.RowsGrad``), which the optimizers read as long as nothing has made it dense; once
something has (DataParallel's buckets, a clip, a read of ``.grad``), the optimizer asks which rows
to update here (`rows_to_update`), from the ids the embedding recorded on its weight
(`record_rows`). The record gathers the ids of every backward since the last
step (gradient accumulation: the union of rows) and starts afresh at the first backward after a
step or after the gradient is cleared (``Tensor.clear_gradient``, `forget_rows`). The rows updated are those recorded
plus every row whose gradient is not zero: a gradient summed over ranks (DataParallel) or set by
hand reaches rows this rank did not look up, and all ranks then update the same rows.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from pycoll.device import array_module, to_module

_RECORD = "_sparse_grad_rows"  # on the parameter: [ids looked up (repeats kept), whether a step used them]


def record_rows(param: Any, ids: Any) -> None:
    """Add the row ids ``ids`` (any shape) to those ``param``'s sparse gradient touched (made
    unique when read: most steps read the gradient's own rows instead, pycoll.tensor.RowsGrad)."""
    ids = ids.reshape(-1)
    record = param.__dict__.get(_RECORD)
    if record is None or record[1]:
        param.__dict__[_RECORD] = [ids, False]
    else:
        record[0] = array_module(ids).concatenate((record[0], ids))


def rows_to_update(param: Any, grad: Any) -> Optional[Any]:
    """The sorted row ids a lazy update of ``param`` changes, given its gradient ``grad`` (an array
    of its shape, in grad's array module), or None when its gradient is not a sparse one (update
    every row). Marks the record used: the next backward starts a new one."""
    record = param.__dict__.get(_RECORD)
    if record is None or grad.ndim == 0:
        return None
    record[1] = True
    xp = array_module(grad)
    nonzero = xp.flatnonzero((grad.reshape(grad.shape[0], -1) != 0).any(axis=1))
    return xp.unique(xp.concatenate((to_module(record[0], xp).astype(nonzero.dtype), nonzero)))


def forget_rows(param: Any) -> None:
    """Drop ``param``'s record (its gradient was cleared)."""
    if _RECORD in getattr(param, "__dict__", ()):
        del param.__dict__[_RECORD]


def record_for_piece(param: Any, piece: Any, lo: int, hi: int, shape: Sequence[int]) -> None:
    """Give ``piece``, a flat stand-in for elements ``[lo, hi)`` of ``param`` (of ``shape``;
    sharding steps such pieces), ``param``'s record as the elements of its rows within the piece,
    so that a lazy update of the piece changes those alone; ``param``'s record is then used. No
    record: none."""
    forget_rows(piece)
    record = param.__dict__.get(_RECORD)
    if record is None:
        return
    record[1] = True
    xp = array_module(record[0])
    width = math.prod(shape[1:])  # elements per row
    elements = (xp.unique(record[0])[:, None] * width + xp.arange(width)[None, :]).reshape(-1)
    piece.__dict__[_RECORD] = [elements[(elements >= lo) & (elements < hi)] - lo, False]
