"""``alltoall`` with a block of its own shape for each peer (paddle's documented example sends a
``(2, 3)`` block to one rank and a ``(3, 2)`` block to another).

Before any data moves, each rank tells each peer, in one small alltoall of int64 records, what
it sends that peer and what it expects from it (the pre-allocated output for that peer; nothing
when the output list is empty). Both ranks of a pair then make the same comparison, so a block
whose size or dtype does not match is refused on both, naming the peer and both blocks, with
nothing sent; and an empty output list gets blocks of the senders' shapes and dtypes.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from pycoll.distributed._failure import call_failed
from pycoll.distributed.watchdog import watchdog

MAX_DIMS = 16
_FIELDS = 4 + MAX_DIMS  # bytes, dtype kind, itemsize, ndim, then the dims
_NOTHING = [-1] * _FIELDS  # no pre-allocated output: anything is welcome

Block = Tuple[int, int, int, Tuple[int, ...]]  # bytes, dtype kind (its ord), itemsize, shape


def _record(arr: Any, fn: str, arg: str) -> List[int]:
    if arr.ndim > MAX_DIMS:
        raise ValueError(f"pycoll.distributed.{fn}: {arg} has {arr.ndim} dimensions; at most "
                         f"{MAX_DIMS} can be sent")
    return [int(arr.nbytes), ord(arr.dtype.kind), arr.dtype.itemsize, arr.ndim, *arr.shape,
            *[0] * (MAX_DIMS - arr.ndim)]


def _block(fields: Sequence[int]) -> Block:
    nbytes, kind, itemsize, ndim = fields[:4]
    return nbytes, kind, itemsize, tuple(fields[4:4 + ndim])


def _text(block: Block) -> str:
    nbytes, kind, itemsize, shape = block
    return f"{nbytes} bytes ({chr(kind)}{itemsize}{list(shape)})"


def _same(a: Block, b: Block) -> bool:
    """Whether block ``a`` can land where block ``b`` is expected: bytes and dtype agree."""
    return a[:3] == b[:3]


def dtype_of(block: Block, like: Any) -> np.dtype:
    """The dtype a received ``block`` is read as: ``like``'s when it matches, else the one its
    kind and size name (every numeric dtype and bool)."""
    _, kind, itemsize, _ = block
    if (ord(like.kind), like.itemsize) == (kind, itemsize):
        return like
    return np.dtype(f"{chr(kind)}{itemsize}")


def agree(group: Any, fn: str, sends: List[Any], targets: Optional[List[Any]]) -> List[Block]:
    """The block each group rank sends this rank, once every pair of ranks agrees on what travels
    between them; ValueError on both ranks of a pair that does not (nothing sent)."""
    ours = [_record(a, fn, f"in_tensor_list[{j}]") + (
        _record(targets[j], fn, f"out_tensor_list[{j}]") if targets else _NOTHING)
        for j, a in enumerate(sends)]
    backend, seq = group.engine, group.seq
    xp = backend.xp
    table = xp.asarray(np.array(ours, np.int64))
    theirs = xp.empty_like(table)
    watchdog.name, watchdog.group = fn, group
    try:
        backend.alltoall(theirs, table, True, seq)
    except Exception as exc:
        raise call_failed(fn, seq, group, exc) from exc
    finally:
        watchdog.group = None
    problems, incoming = [], []
    for i, row in enumerate(theirs.tolist()):
        peer = group.ranks[i]
        sent, expected = _block(row[:_FIELDS]), row[_FIELDS:]
        incoming.append(sent)
        if targets and not _same(sent, _block(ours[i][_FIELDS:])):
            problems.append(f"out_tensor_list[{i}] holds {_text(_block(ours[i][_FIELDS:]))} but rank "
                            f"{peer} sends {_text(sent)}")
        if expected != _NOTHING and not _same(_block(ours[i][:_FIELDS]), _block(expected)):
            problems.append(f"in_tensor_list[{i}] is {_text(_block(ours[i][:_FIELDS]))} but rank "
                            f"{peer} expects {_text(_block(expected))}")
    if problems:
        raise ValueError(f"pycoll.distributed.{fn}: " + "; ".join(problems) + " (refused on both "
                         "ranks of each pair; nothing was sent)")
    return incoming
