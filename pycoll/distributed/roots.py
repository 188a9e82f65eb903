"""Rooted collectives agree on their root before anything moves.

MPI does not stall on a small broadcast, reduce or scatter whose ranks name different roots: each
rank gets some rank's data (ranks that each take themselves for the root send and return),
silently. So the ranks first all-gather their roots (one int64 pair each) and, where they differ,
every rank raises the same ValueError naming each rank's, before anything of the call is sent:
the job goes on.

``scatter`` does this on every call, in the all-gather that also shares the root's verdict on its
list (:mod:`verdict`). ``broadcast`` and ``reduce``, which have no verdict, do it on their first
``ALWAYS`` blocking calls on a group, then on every power of two (the 16th, 32nd, ...): a root
computed wrongly (``src=rank``, a group rank for a global one) shows on the first call, and a loop
of them pays little more than the count (bench/RESULTS.md). The schedule depends only on how many such calls the group has
made, the same on every rank of a correct program. ``PYCOLL_CHECK=1`` compares every call.
``gather`` given different roots stalls in MPI (each root waits for the others' parts), and the
stall notices end the job naming each rank's root.
"""
from __future__ import annotations

from typing import Any, List

import numpy as np

ALWAYS = 8


def due(group: Any) -> bool:
    """Whether this blocking broadcast or reduce on ``group`` compares its root (counts it)."""
    group.rooted_calls += 1
    n = group.rooted_calls
    return n <= ALWAYS or n & (n - 1) == 0


def gathered(group: Any, root: int, extra: int = 0) -> List[List[int]]:
    """Every rank's [``extra``, root] (``root`` a group rank), in group rank order: one blocking
    all-gather, numbered as the call it precedes (the caller watches it and wraps its failures)."""
    backend = group.engine
    mine = backend.xp.asarray(np.array([extra, root], np.int64))
    table = backend.xp.empty(2 * group.nranks, np.int64)
    backend.all_gather(table, mine, True, group.seq)
    flat = [int(v) for v in table.tolist()]
    return [flat[i:i + 2] for i in range(0, len(flat), 2)]


def check_same(group: Any, fn: str, arg: str, rows: List[List[int]]) -> None:
    """ValueError, on every rank alike, where the ranks' roots (``rows``: `gathered`) differ."""
    roots = [group.ranks[r] for _, r in rows]
    if len(set(roots)) > 1:
        raise ValueError(f"pycoll.distributed.{fn}: the ranks of {group.describe()} gave different {arg} "
                         f"{roots} (in rank order); every rank must name the same (a global rank); "
                         f"nothing was sent")
