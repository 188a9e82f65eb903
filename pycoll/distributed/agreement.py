"""Collectives agree on their root and their tensors before anything moves.

MPI does not stall on a small broadcast, reduce or scatter whose ranks name different roots: each
rank gets some rank's data (ranks that each take themselves for the root send and return),
silently. Nor on an all-gather whose ranks give different sizes (the last shard of an uneven
split: the longer ranks receive the shorter one's block and whatever followed it in memory), or
an all-reduce of float32 on one rank and float64 on another, or SUM against MAX. So the ranks
first all-gather a few words each (:data:`_WORDS`: a verdict's size, the root, the collective,
the tensor's dtype and number of elements, the op, and the digest below) and, where they
differ, every rank raises the same ValueError naming each rank's (ranks in different collectives
are named so), before anything of the call is sent: the job goes on.

``scatter`` compares its roots and its received tensors on every call, in the all-gather that
also shares the root's verdict on its list (:mod:`verdict`). ``all_reduce``, ``reduce``,
``broadcast``, ``all_gather``, ``gather`` and ``reduce_scatter`` compare on every blocking call
where the engine finishes its calls on the host (MPI): a mismatch past any number of correct calls
(a SUM against a MAX in the 10th step, an evaluation's uneven last shard) is refused as the first
one is. A blocking call's comparison costs one 64-byte all-gather and a bytes comparison (~2.5 µs
beside MPI's own, bench/RESULTS.md): :class:`_HostTable` keeps each group's buffers, and the rows
are only read where they differ. Elsewhere the calls compare on a group's first ``ALWAYS``
collectives, then on every power of two (the 16th, 32nd, ...): on a stream-ordered engine (NCCL)
a host read of every call's table would stall the stream that overlaps DataParallel's buckets
with the backward pass, and a non-blocking call on MPI would start a second non-blocking
collective (all_gather's and gather's tasks still compare on every call: an evaluation's uneven
shard). The schedule depends only on the group's count of collectives made, the same on every
rank of a correct program. A call off the schedule folds its words into the group's digest of
such calls (:func:`passed`), which the next comparison carries: a difference there ends the job,
those calls having run (:func:`earlier_difference`). A non-blocking call starts its all-gather
with the call, and its task ends the job on a difference (the call has started: MPI cannot take
it back), as ``PYCOLL_CHECK``'s comparison of a non-blocking call does. ``PYCOLL_CHECK=1``
compares every call everywhere, in full (shapes, call numbers, ``sync_op``). ``gather`` given
different roots stalls in MPI before (its root's verdict is broadcast from each rank's root), and
the stall notices end the job naming each rank's root.
"""
from __future__ import annotations

import struct
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from pycoll.backends.reduce_op import op_name, reduce_op_value
from pycoll.distributed._failure import abort_job, call_failed

ALWAYS = 8
# a rank's words: [extra (a verdict's size), root, collective, dtype, elements, op; -1 where not
# compared] and the digest and count of the group's calls made since its last comparison without one
_CALL_WORDS = 6
_WORDS = 8
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


# non-blocking calls on the host compared on every call too (the others on the schedule: a second
# non-blocking collective per call made a loop of 1000 tasks on MPICH 20-100x slower, tasks piling up)
_EVERY_HOST_TASK = frozenset({"all_gather", "gather"})


def due(group: Any, fn: str, blocking: bool = True) -> bool:
    """Whether this collective ``fn`` on ``group`` (its ``collectives_made``-th, spelt out:
    all_reduce's hot path asks on every call) compares: on the host a blocking call always
    (and all_gather's and gather's tasks), else on the schedule."""
    if not group.engine.stream_ordered and (blocking or fn in _EVERY_HOST_TASK):
        return True
    n = group.seq - group.p2p_calls - group.collectives_refused
    return n <= ALWAYS or n & (n - 1) == 0


def on_call(group: Any, fn: str, arg: Optional[str], root: int, signed: List[int],
            blocking: bool) -> Optional["Comparison"]:
    """What call ``fn`` on ``group`` does about its ``root`` (a group rank; with ``arg``, its
    argument's name) and tensor (``signed``, its `signature`): on the schedule (:func:`due`) a
    blocking call compares now (a ValueError on every rank where they differ) and a non-blocking
    one starts the :class:`Comparison` its task settles (returned); off it, the call goes into
    the group's digest (:func:`passed`)."""
    if not due(group, fn, blocking):
        passed(group, fn, root, signed)
        return None
    if blocking:
        agreed(group, fn, arg, root, signed=signed)
        return None
    try:
        return Comparison(group, fn, arg, root, signed)
    except Exception as exc:
        raise call_failed(fn, group.seq, group, exc) from exc


def passed(group: Any, fn: str, root: int, signed: List[int]) -> None:
    """A call ``fn`` made without a comparison (off the schedule; ``root`` a group rank, ``signed``
    its `signature`): folded into the group's digest of such calls, which its next comparison
    carries. Python's hash of a tuple of ints is the same in every process."""
    if not group.unchecked_calls:
        group.unchecked_from = group.seq
    group.unchecked_digest = hash((group.unchecked_digest, _CALLS.index(fn), root, *signed))
    group.unchecked_calls += 1


def signature(arr: Any, op: Any = None) -> List[int]:
    """The [dtype, elements, op] words of a call on ``arr`` (op -1: none, or not a ReduceOp)."""
    value = reduce_op_value(op)
    return [_dtype_code(arr.dtype), int(arr.size), -1 if value is None else value]


UNSIGNED = [-1, -1, -1]  # a call whose tensors are not compared


class Comparison:
    """A non-blocking call's comparison, started with it: a non-blocking all-gather of every
    rank's words, which its task completes with the call (``check.Checked``; a difference then
    ends the job, the call having started)."""

    __slots__ = ("group", "_fn", "_arg", "_since", "_table", "_request")

    def __init__(self, group: Any, fn: str, arg: Optional[str], root: int, signed: List[int]):
        self.group, self._fn, self._arg, self._since = group, fn, arg, (group.unchecked_from, group.seq)
        self._table, self._request = _all_gather(group, _words(group, 0, root, fn, signed), blocking=False)

    def test(self, start: bool = True) -> bool:
        return self._request is None or self._request.test(start)

    def problem(self) -> Optional[str]:
        """Once complete: None when every rank gave this rank's root and tensor and made the same
        calls since the comparison before, else what differs."""
        rows = _rows(self._table)
        return earlier_difference(self.group, self._since, rows) or difference(self.group, self._fn, self._arg, rows)


def _words(group: Any, extra: int, root: int, fn: str, signed: List[int]) -> List[int]:
    """This rank's words for a comparison on ``group``, which takes over its digest of the calls
    made without one (and starts a new digest)."""
    words = [extra, root, _CALLS.index(fn), *signed, group.unchecked_digest, group.unchecked_calls]
    group.unchecked_digest = group.unchecked_calls = 0
    return words


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
           signed: List[int] = UNSIGNED) -> List[List[int]]:
    """Every rank's words (``[extra, root, call, *signed]``; ``root`` a group rank, ``signed`` a
    `signature`), in group rank order, from one blocking all-gather (under the caller's watch;
    its failure raised as call ``fn``'s); where the collectives, the roots (with ``arg``, the
    root's argument) or the tensors differ, a ValueError on every rank alike naming each one's."""
    since = (group.unchecked_from, group.seq)
    words = _words(group, extra, root, fn, signed)
    try:
        if group.engine.stream_ordered:
            rows = _rows(_all_gather(group, words, blocking=True)[0])
        else:
            if group.host_table is None:
                group.host_table = _HostTable(group.nranks)
            rows = group.host_table.gathered(group, words)
            if rows is None:  # every rank's words are this rank's
                return [words] * group.nranks
    except Exception as exc:
        raise call_failed(fn, group.seq, group, exc) from exc
    earlier = earlier_difference(group, since, rows)
    if earlier is not None:
        abort_job(1, f"pycoll: {earlier}: stopping the job")
    problem = difference(group, fn, arg, rows)
    if problem is not None:
        raise ValueError(f"{problem}; nothing was sent")
    return rows


def earlier_difference(group: Any, since: Tuple[int, int], rows: List[List[int]]) -> Optional[str]:
    """None where every rank's digest of the calls it made without a comparison (since this
    rank's call ``since[0]``, up to ``since[1]``) is this rank's, else what that means: those
    calls ran, so their results are wrong and the group's calls cannot be put in step again."""
    first = rows[0][_CALL_WORDS:]
    if all(row[_CALL_WORDS:] == first for row in rows):
        return None
    counts = [row[_WORDS - 1] for row in rows]
    mine = f"this rank's #{since[0]} to #{since[1] - 1}" if counts[group.rank] else "none on this rank"
    return (f"pycoll.distributed: the ranks of {group.describe()} made different collectives among the calls that "
            f"ran without a comparison before this one ({mine}; ranks' counts of them {counts}): a dtype, size, "
            f"op or root differed, or a call was made on some ranks only, so "
            f"their results are wrong and the group cannot go on (non-blocking calls compare on the group's first "
            f"{ALWAYS} collectives and each power of two; PYCOLL_CHECK=1 compares every call before it runs)")


class _HostTable:
    """A host group's buffers for its blocking comparisons, made once (``group.host_table``; a
    blocking call is done with them when it returns): this rank's words and every rank's,
    packed by ``struct`` and compared as bytes, so that a call whose ranks agree costs the
    all-gather and little more."""

    _PACKED = struct.Struct(f"<{_WORDS}q")

    def __init__(self, nranks: int):
        self._mine = bytearray(self._PACKED.size)
        self._table = bytearray(self._PACKED.size * nranks)
        self._mine_view = np.frombuffer(self._mine, np.uint8)  # (the engine's arrays: MPI writes the bytearrays)
        self._table_view = np.frombuffer(self._table, np.uint8)

    def gathered(self, group: Any, words: List[int]) -> Optional[List[List[int]]]:
        """None where every rank gave ``words``, else every rank's, in group rank order."""
        self._PACKED.pack_into(self._mine, 0, *words)
        group.engine.all_gather(self._table_view, self._mine_view, True, group.seq)
        if self._table == self._mine * group.nranks:
            return None
        return [list(row) for row in self._PACKED.iter_unpack(self._table)]


def difference(group: Any, fn: str, arg: Optional[str], rows: List[List[int]]) -> Optional[str]:
    """None where the ranks' collectives and roots (``rows``: each rank's words) are one and
    their tensors alike, else each rank's, named."""
    first = rows[0]
    if all(row[1:_CALL_WORDS] == first[1:_CALL_WORDS] for row in rows) or (
            arg is None and all(row[2:_CALL_WORDS] == first[2:_CALL_WORDS] for row in rows)):
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
    signatures = [tuple(row[3:_CALL_WORDS]) for row in rows]
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
