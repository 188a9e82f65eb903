"""Rooted collectives agree on their root before anything moves.

MPI does not stall on a small broadcast, reduce or scatter whose ranks name different roots: each
rank gets some rank's data (ranks that each take themselves for the root send and return),
silently. So the ranks first all-gather their roots (one int64 pair each) and, where they differ,
every rank raises the same ValueError naming each rank's, before anything of the call is sent:
the job goes on.

``scatter`` does this on every call, in the all-gather that also shares the root's verdict on its
list (:mod:`verdict`). ``broadcast`` and ``reduce``, which have no verdict, do it on their first
``ALWAYS`` calls on a group, then on every power of two (the 16th, 32nd, ...); a non-blocking one
starts its all-gather with the call, and its task ends the job on a difference (the call has
started: MPI cannot take it back), as ``PYCOLL_CHECK``'s comparison of a non-blocking call does.
A root computed wrongly (``src=rank``, a group rank for a global one) shows on the first call, and
a loop of them pays little more than the count (bench/RESULTS.md). The schedule depends only on
how many such calls the group has made, the same on every rank of a correct program.
``PYCOLL_CHECK=1`` compares every call. ``gather`` given different roots stalls in MPI (each root
waits for the others' parts), and the stall notices end the job naming each rank's root.
"""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from pycoll.distributed._failure import call_failed

ALWAYS = 8


def due(group: Any) -> bool:
    """Whether this broadcast or reduce on ``group`` compares its root (counts it)."""
    group.rooted_calls += 1
    n = group.rooted_calls
    return n <= ALWAYS or n & (n - 1) == 0


class Comparison:
    """A non-blocking call's comparison of roots (``root`` a group rank), started with it: a
    non-blocking all-gather of every rank's root, which its task completes with the call
    (``check.Checked``; a difference then ends the job, the call having started)."""

    __slots__ = ("group", "_fn", "_arg", "_table", "_request")

    def __init__(self, group: Any, fn: str, arg: str, root: int):
        self.group, self._fn, self._arg = group, fn, arg
        self._table, self._request = _all_gather(group, root, 0, blocking=False)

    def test(self, start: bool = True) -> bool:
        return self._request is None or self._request.test(start)

    def problem(self) -> Optional[str]:
        """Once complete: None when every rank named this rank's root, else what differs."""
        return difference(self.group, self._fn, self._arg, _rows(self._table))


def _all_gather(group: Any, root: int, extra: int, blocking: bool) -> Tuple[Any, Any]:
    """(the table every rank's [``extra``, root] lands in, the engine's request) of an
    all-gather numbered as the call it precedes."""
    backend = group.engine
    mine = backend.xp.asarray(np.array([extra, root], np.int64))
    table = backend.xp.zeros(2 * group.nranks, np.int64)  # (zeros: the tests' recording NCCL moves nothing)
    return table, backend.all_gather(table, mine, blocking, group.seq)


def _rows(table: Any) -> List[List[int]]:
    flat = [int(v) for v in table.tolist()]
    return [flat[i:i + 2] for i in range(0, len(flat), 2)]


def agreed(group: Any, fn: str, arg: str, root: int, extra: int = 0) -> List[List[int]]:
    """Every rank's [``extra``, root] (``root`` a group rank), in group rank order, from one
    blocking all-gather (under the caller's watch; its failure raised as call ``fn``'s); where
    the roots differ, a ValueError on every rank alike naming each one's (``arg``)."""
    try:
        rows = _rows(_all_gather(group, root, extra, blocking=True)[0])
    except Exception as exc:
        raise call_failed(fn, group.seq, group, exc) from exc
    problem = difference(group, fn, arg, rows)
    if problem is not None:
        raise ValueError(f"{problem}; nothing was sent")
    return rows


def difference(group: Any, fn: str, arg: str, rows: List[List[int]]) -> Optional[str]:
    """None where the ranks' roots (``rows``: [extra, root] per rank) are one, else each rank's, named."""
    roots = [group.ranks[r] for _, r in rows]
    if len(set(roots)) == 1:
        return None
    return (f"pycoll.distributed.{fn}: the ranks of {group.describe()} gave different {arg} {roots} (in rank "
            f"order); every rank must name the same (a global rank)")
