"""Collectives agree on their root and their tensors before anything moves.

MPI does not stall on a small broadcast, reduce or scatter whose ranks name different roots: each
rank gets some rank's data (ranks that each take themselves for the root send and return),
silently. Nor on an all-gather whose ranks give different sizes (the last shard of an uneven
split: the longer ranks receive the shorter one's block and whatever followed it in memory), or
an all-reduce of float32 on one rank and float64 on another, or SUM against MAX. So the ranks
first all-gather a few words each (:data:`_WORDS`: a verdict's size, the root, the collective,
the tensor's dtype and number of elements, the op) and, where they differ, every rank raises the
same ValueError naming each rank's (ranks in different collectives are named so), before
anything of the call is sent: the job goes on.

``scatter`` compares its roots on every call, in the all-gather that also shares the root's
verdict on its list (:mod:`verdict`). ``all_reduce``, ``reduce``, ``broadcast``, ``all_gather``,
``gather`` and ``reduce_scatter`` compare on a group's first ``ALWAYS`` collectives, then on every
power of two (the 16th, 32nd, ...); ``all_gather`` and ``gather`` on MPI compare on every call (an
evaluation's uneven last shard comes after any number of training steps). A non-blocking call
starts its all-gather with the call, and its task ends the job on a difference (the call has
started: MPI cannot take it back), as ``PYCOLL_CHECK``'s comparison of a non-blocking call does.
A root computed wrongly (``src=rank``) or an uneven split shows on the first call, and a loop of
them pays little more than the count (bench/RESULTS.md). The schedule depends only on the group's
count of collectives made, the same on every rank of a correct program. ``PYCOLL_CHECK=1``
compares every call. ``gather`` given different roots stalls in MPI before (its root's verdict is
broadcast from each rank's root), and the stall notices end the job naming each rank's root.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from pycoll.backends.reduce_op import op_name, reduce_op_value
from pycoll.distributed._failure import call_failed

ALWAYS = 8
# a rank's words: [extra (a verdict's size), root, collective, dtype, elements, op]; -1 where not compared
_WORDS = 6
_CALLS = ("all_reduce", "reduce", "broadcast", "all_gather", "gather", "reduce_scatter", "scatter")
_DTYPES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16", "float32",
           "float64", "complex64", "complex128", "bfloat16", "float8_e4m3fn", "float8_e5m2")
_OTHER_DTYPE = len(_DTYPES)  # (no tensor has another)
_DTYPE_CODES: Dict[Any, int] = {}  # dtype -> its place in _DTYPES, filled on first sight (dtype.name costs µs)


def _dtype_code(dtype: Any) -> int:
    code = _DTYPE_CODES.get(dtype)
    if code is None:
        code = _DTYPE_CODES[dtype] = _DTYPES.index(dtype.name) if dtype.name in _DTYPES else _OTHER_DTYPE
    return code


# compared on every call where the calls finish on the host (MPI): an evaluation's uneven last
# shard meets an all_gather after any number of training steps, and a blocking host call pays a
# few microseconds more; on NCCL the comparison's host read would stall the stream (the schedule)
_EVERY_HOST_CALL = frozenset({"all_gather", "gather"})


def due(group: Any, fn: str) -> bool:
    """Whether this collective ``fn`` on ``group`` (its ``collectives_made``-th, spelt out:
    all_reduce's hot path asks on every call) compares."""
    if fn in _EVERY_HOST_CALL and not group.engine.stream_ordered:
        return True
    n = group.seq - group.p2p_calls - group.collectives_refused
    return n <= ALWAYS or n & (n - 1) == 0


def signature(arr: Any, op: Any = None) -> List[int]:
    """The [dtype, elements, op] words of a call on ``arr`` (op -1: none, or not a ReduceOp)."""
    value = reduce_op_value(op)
    return [_dtype_code(arr.dtype), int(arr.size), -1 if value is None else value]


_UNSIGNED = [-1, -1, -1]  # a call whose tensors are not compared (scatter's verdict)


class Comparison:
    """A non-blocking call's comparison, started with it: a non-blocking all-gather of every
    rank's words, which its task completes with the call (``check.Checked``; a difference then
    ends the job, the call having started)."""

    __slots__ = ("group", "_fn", "_arg", "_table", "_request")

    def __init__(self, group: Any, fn: str, arg: Optional[str], root: int, signed: List[int]):
        self.group, self._fn, self._arg = group, fn, arg
        self._table, self._request = _all_gather(group, _words(0, root, fn, signed), blocking=False)

    def test(self, start: bool = True) -> bool:
        return self._request is None or self._request.test(start)

    def problem(self) -> Optional[str]:
        """Once complete: None when every rank gave this rank's root and tensor, else what differs."""
        return difference(self.group, self._fn, self._arg, _rows(self._table))


def _words(extra: int, root: int, fn: str, signed: List[int]) -> List[int]:
    return [extra, root, _CALLS.index(fn), *signed]


def _all_gather(group: Any, words: List[int], blocking: bool) -> Tuple[Any, Any]:
    """(the table every rank's ``words`` land in, the engine's request) of an all-gather
    numbered as the call it precedes."""
    backend = group.engine
    mine = backend.xp.asarray(np.array(words, np.int64))
    table = backend.xp.zeros(_WORDS * group.nranks, np.int64)  # (zeros: the tests' recording NCCL moves nothing)
    return table, backend.all_gather(table, mine, blocking, group.seq)


def _rows(table: Any) -> List[List[int]]:
    flat = table.tolist()  # (Python ints, from NumPy and CuPy alike)
    return [flat[i:i + _WORDS] for i in range(0, len(flat), _WORDS)]


def agreed(group: Any, fn: str, arg: Optional[str], root: int, extra: int = 0,
           signed: List[int] = _UNSIGNED) -> List[List[int]]:
    """Every rank's words (``[extra, root, call, *signed]``; ``root`` a group rank, ``signed`` a
    `signature`), in group rank order, from one blocking all-gather (under the caller's watch;
    its failure raised as call ``fn``'s); where the collectives, the roots (with ``arg``, the
    root's argument) or the tensors differ, a ValueError on every rank alike naming each one's."""
    try:
        rows = _rows(_all_gather(group, _words(extra, root, fn, signed), blocking=True)[0])
    except Exception as exc:
        raise call_failed(fn, group.seq, group, exc) from exc
    problem = difference(group, fn, arg, rows)
    if problem is not None:
        raise ValueError(f"{problem}; nothing was sent")
    return rows


def difference(group: Any, fn: str, arg: Optional[str], rows: List[List[int]]) -> Optional[str]:
    """None where the ranks' collectives and roots (``rows``: each rank's words) are one and
    their tensors alike, else each rank's, named."""
    first = rows[0]
    if all(row[1:] == first[1:] for row in rows) or (arg is None and all(row[2:] == first[2:] for row in rows)):
        return None  # (the common answer, found first)
    calls = [row[2] for row in rows]
    if len(set(calls)) > 1:
        named = "; ".join(f"rank {rank}: {_CALLS[call]}" for rank, call in zip(group.ranks, calls))
        return (f"pycoll.distributed.{fn}: the ranks of {group.describe()} are in different collectives ({named}); "
                f"every rank must make the same calls in the same order")
    roots = [group.ranks[row[1]] for row in rows]
    if arg is not None and len(set(roots)) > 1:
        return (f"pycoll.distributed.{fn}: the ranks of {group.describe()} gave different {arg} {roots} (in rank "
                f"order); every rank must name the same (a global rank)")
    signatures = [tuple(row[3:]) for row in rows]
    if len(set(signatures)) == 1:
        return None
    with_op = any(op >= 0 for _, _, op in signatures)
    tensors = "; ".join(f"rank {rank}: {_described(words, with_op)}" for rank, words in zip(group.ranks, signatures))
    return (f"pycoll.distributed.{fn}: the ranks of {group.describe()} gave different tensors ({tensors}); every rank "
            f"must give the same dtype and number of elements" + (" and the same op" if with_op else ""))


def _described(words: Tuple[int, ...], with_op: bool) -> str:
    dtype, size, op = words
    text = f"{_DTYPES[dtype] if dtype < _OTHER_DTYPE else 'another dtype'} of {size} element{'s' * (size != 1)}"
    return text + (f", op={op_name(op) if op >= 0 else '?'}" if with_op else "")
