"""``alltoall`` with a block of its own shape for each peer (paddle's documented example sends a
``(2, 3)`` block to one rank and a ``(3, 2)`` block to another).

Before any data moves, each rank tells each peer, in one small alltoall of int64 records, what
it sends that peer and what it expects from it (the pre-allocated output for that peer; nothing
when the output list is empty). Both ranks of a pair then make the same comparison, so a block
whose size or dtype does not match is refused, naming the peer and both blocks, and every rank
of the group raises (one small all-reduce of who refused), with nothing sent; and an empty output list gets blocks of the senders' shapes and dtypes.
``alltoall_single`` makes the same exchange for its row counts (``agree_counts``).
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from pycoll.backends.reduce_op import ReduceOp
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


def _run(group: Any, fn: str, call: Callable[[Any, int], Any]) -> None:
    """``call(engine, seq)``, a blocking call of the group's engine, under the watchdog."""
    watchdog.name, watchdog.group = fn, group
    try:
        call(group.engine, group.seq)
    except Exception as exc:
        raise call_failed(fn, group.seq, group, exc) from exc
    finally:
        watchdog.group = None


def exchange(group: Any, fn: str, rows: List[List[int]]) -> List[List[int]]:
    """Row j of ``rows`` to group rank j, in one small alltoall; the rows the ranks sent this one."""
    table = group.engine.xp.asarray(np.array(rows, np.int64))
    theirs = group.engine.xp.empty_like(table)
    _run(group, fn, lambda engine, seq: engine.alltoall(theirs, table, True, seq))
    return theirs.tolist()


def _refuse_together(group: Any, fn: str, problems: List[str]) -> None:
    """Raise on every rank of the group if any rank found a problem: the data's alltoall is
    collective, so a rank that went on would wait for the refusing ones."""
    flags = np.zeros(group.nranks, np.int64)
    flags[group.rank] = 1 if problems else 0
    flags = group.engine.xp.asarray(flags)
    _run(group, fn, lambda engine, seq: engine.all_reduce(flags, engine.plan(flags.dtype, ReduceOp.MAX), True, seq))
    refused = [group.ranks[i] for i, flag in enumerate(flags.tolist()) if flag]
    if problems:
        raise ValueError(f"pycoll.distributed.{fn}: " + "; ".join(problems) + " (refused on every rank of the "
                         "group; nothing was sent)")
    if refused:
        raise ValueError(f"pycoll.distributed.{fn}: rank(s) {refused} refused their parts (each says why); "
                         f"nothing was sent")


def agree_counts(group: Any, fn: str, sent: List[int], received: List[int]) -> None:
    """``alltoall_single``'s check: the rows this rank sends each peer are the rows that peer
    expects from it, and the other way round; ValueError on both ranks of a pair that disagree
    (nothing sent)."""
    problems = []
    for i, (they_send, they_expect) in enumerate(exchange(group, fn, [[n, m] for n, m in zip(sent, received)])):
        peer = group.ranks[i]
        if they_send != received[i]:
            problems.append(f"out_split_sizes[{i}]={received[i]} but rank {peer} sends {they_send} rows")
        if they_expect != sent[i]:
            problems.append(f"in_split_sizes[{i}]={sent[i]} but rank {peer} expects {they_expect} rows")
    _refuse_together(group, fn, problems)


def rows(fn: str, sends: List[Any], targets: Optional[List[Any]]) -> List[List[int]]:
    """What this rank tells group rank j (row j): the block it sends j and the block it expects
    from j (``targets[j]``; anything when there are no targets). Checked here, before anything
    moves (ValueError for a block of too many dimensions)."""
    return [_record(a, fn, f"in_tensor_list[{j}]") + (
        _record(targets[j], fn, f"out_tensor_list[{j}]") if targets else _NOTHING)
        for j, a in enumerate(sends)]


def agree(group: Any, fn: str, ours: List[List[int]], expects: bool) -> List[Block]:
    """The block each group rank sends this rank, once every pair of ranks agrees on what travels
    between them (``ours``: this rank's :func:`rows`; ``expects``: whether they name pre-allocated
    outputs); ValueError on both ranks of a pair that does not (nothing sent)."""
    problems, incoming = [], []
    for i, row in enumerate(exchange(group, fn, ours)):
        peer = group.ranks[i]
        sent, expected = _block(row[:_FIELDS]), row[_FIELDS:]
        incoming.append(sent)
        if expects and not _same(sent, _block(ours[i][_FIELDS:])):
            problems.append(f"out_tensor_list[{i}] holds {_text(_block(ours[i][_FIELDS:]))} but rank "
                            f"{peer} sends {_text(sent)}")
        if expected != _NOTHING and not _same(_block(ours[i][:_FIELDS]), _block(expected)):
            problems.append(f"in_tensor_list[{i}] is {_text(_block(ours[i][:_FIELDS]))} but rank "
                            f"{peer} expects {_text(_block(expected))}")
    _refuse_together(group, fn, problems)
    return incoming
