"""When the ranks of an ``alltoall`` need not tell each other their block sizes.

Before its data moves, ``alltoall`` (and ``alltoall_single``) has every pair of ranks agree on
what travels between them (:mod:`peer_blocks`: a small alltoall of what each sends and expects,
then a small all-reduce so that a refusal is raised on every rank): two collectives, each of
which waits on the host for its result (on a GPU, two device-to-host copies). Most calls send
every peer a block of one shape and dtype, and expect such blocks back (a tensor split evenly,
an output list of such blocks). When every rank of the group does so with the same block,
nothing can disagree and every rank knows what it receives. One small alltoall finds that
out, exactly: each rank sends every peer its block's description (or that its blocks differ),
and every rank then holds every rank's. When they are all the same, the exchange and its
refusal step are skipped; otherwise the full exchange follows, with its own refusals, as
before.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence

import numpy as np

from pycoll.distributed.peer_blocks import MAX_DIMS, Block, exchange

BLOCK_WIDTH = 4 + MAX_DIMS  # bytes, dtype kind, itemsize, ndim, the dims (zeros past ndim)


def uniform_block(sends: List[Any], targets: Optional[List[Any]]) -> Optional[Block]:
    """The block this rank sends every peer, when all of ``sends`` have one shape and dtype and
    each of ``targets`` (the pre-allocated outputs; None when the output list is empty) takes
    such a block (the same bytes, dtype kind and itemsize, as :mod:`peer_blocks` requires);
    None otherwise."""
    first = sends[0]
    shape, dtype = first.shape, first.dtype
    if any(a.shape != shape or a.dtype != dtype for a in sends):
        return None
    nbytes, kind, itemsize = first.nbytes, dtype.kind, dtype.itemsize
    if targets is not None and any(t.nbytes != nbytes or t.dtype.kind != kind or t.dtype.itemsize != itemsize
                                   for t in targets):
        return None
    return nbytes, ord(kind), itemsize, tuple(shape)


def uniform_rows(sent: Sequence[int], received: Sequence[int]) -> Optional[List[int]]:
    """``[rows]``: ``alltoall_single``'s rows per peer, when this rank sends and expects that
    count to and from every peer; None otherwise."""
    rows = sent[0]
    return [rows] if all(n == rows for n in sent) and all(n == rows for n in received) else None


def everywhere(group: Any, fn: str, record: Optional[Sequence[int]], width: int) -> bool:
    """Whether every rank of ``group`` passed the same ``record`` (``width`` integers; None: this
    rank has none), told to every rank in one small alltoall of call ``fn`` on the group's engine,
    as the size exchange is, so that a peer's other call matches it no more than it matched that
    (a group of one agrees with itself). Every rank sees every record and gets the same answer."""
    if group.nranks == 1:
        return record is not None
    row = [0 if record is not None else 1, *(record or ()), *[0] * (width - len(record or ()))]
    rows = exchange(group, fn, [row] * group.nranks)
    return rows[0][0] == 0 and all(other == rows[0] for other in rows)


def block_record(block: Optional[Block]) -> Optional[List[int]]:
    """``block`` as :func:`everywhere` compares it (``BLOCK_WIDTH`` integers), or None."""
    if block is None:
        return None
    nbytes, kind, itemsize, shape = block
    return [nbytes, kind, itemsize, len(shape), *shape]


def split_rows(sizes: Optional[List[int]], arr: Any, nranks: int, fn: str, arg: str,
               tensor: str) -> List[int]:
    """Rows of ``arr`` per rank: ``sizes`` checked, or dim 0 split evenly."""
    rows = arr.shape[0]
    if sizes is None:
        if rows % nranks:
            raise ValueError(f"pycoll.distributed.{fn}: {tensor} has {rows} rows, which do not split "
                             f"evenly over {nranks} ranks; give {arg}")
        return [rows // nranks] * nranks
    if not isinstance(sizes, (list, tuple)) or len(sizes) != nranks or any(
            isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0 for n in sizes):
        raise ValueError(f"pycoll.distributed.{fn}: {arg}={sizes!r}; it needs one count >= 0 per "
                         f"rank of the group ({nranks})")
    if sum(sizes) != rows:
        raise ValueError(f"pycoll.distributed.{fn}: {arg}={list(sizes)} adds up to {sum(sizes)} "
                         f"but {tensor} has {rows} rows (dim 0)")
    return [int(n) for n in sizes]
