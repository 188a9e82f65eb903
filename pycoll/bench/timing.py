"""The one timing loop of pycoll's benchmarks: pycoll-bench and the peer comparisons in
``bench/`` time their calls here.

A block is a number of back-to-back calls of one contender, timed on each rank from a barrier
until its last call has finished (``sync()`` drains a GPU stream; the stream is drained before
the barrier too, so that no earlier work is counted). Contenders are timed in interleaved
rounds, the order flipping from round to round, so that the machine's noise falls on all
alike. The ranks' times then combine as nccl-tests' ``-a`` says: rank 0's, the average, the
minimum or the maximum (the slowest rank's).
"""
from __future__ import annotations

import statistics
import time
from typing import Callable, List, Optional, Sequence

import numpy as np
from mpi4py import MPI

Run = Callable[[], None]
RANK0, AVERAGE, MINIMUM, MAXIMUM = 0, 1, 2, 3  # how the ranks' times combine (nccl-tests' -a)
_REDUCTIONS = {AVERAGE: MPI.SUM, MINIMUM: MPI.MIN, MAXIMUM: MPI.MAX}


def no_wait() -> None:
    """The sync of calls that have finished when they return (MPI's, on host memory)."""


def interleaved_blocks(comm: MPI.Comm, runs: Sequence[Run], calls: Sequence[int],
                       syncs: Optional[Sequence[Run]] = None) -> List[List[float]]:
    """This rank's seconds of every block: ``[i][k]`` is ``runs[i]``'s block in round ``k``,
    of ``calls[k]`` calls. Round ``k`` times the runs in order when ``k`` is even, in reverse
    when odd. ``syncs[i]()`` waits for ``runs[i]``'s calls (None: calls finish on return)."""
    syncs = syncs if syncs is not None else [no_wait] * len(runs)
    seconds: List[List[float]] = [[] for _ in runs]
    for k, count in enumerate(calls):
        order = range(len(runs)) if k % 2 == 0 else reversed(range(len(runs)))
        for i in order:
            run, sync = runs[i], syncs[i]
            sync()
            comm.Barrier()
            start = time.perf_counter()
            for _ in range(count):
                run()
            sync()
            seconds[i].append(time.perf_counter() - start)
    return seconds


def combine(comm: MPI.Comm, seconds: Sequence[float], how: int) -> List[float]:
    """The ranks' ``seconds`` (the same count on every rank) combined element by element:
    ``how`` is RANK0, AVERAGE, MINIMUM or MAXIMUM."""
    mine = np.array(seconds, dtype=np.float64)
    if how == RANK0:
        comm.Bcast(mine, root=0)
        return mine.tolist()
    total = np.empty_like(mine)
    comm.Allreduce(mine, total, op=_REDUCTIONS[how])
    return (total / comm.Get_size() if how == AVERAGE else total).tolist()


def time_calls(comm: MPI.Comm, runs: Sequence[Run], iters: int, warmup: int, rounds: int,
               sync: Run = no_wait) -> List[float]:
    """Seconds per call of each of ``runs`` on this rank (pycoll-bench's measurement):
    ``warmup`` untimed calls each, then ``iters`` calls each, made in ``rounds`` interleaved
    blocks. ``sync()`` waits for calls that return before they finish (a GPU stream)."""
    rounds = max(1, min(rounds, iters))
    counts = [iters // rounds + (1 if r < iters % rounds else 0) for r in range(rounds)]
    blocks = interleaved_blocks(comm, runs, [warmup, *counts], [sync] * len(runs))
    return [sum(b[1:]) / iters for b in blocks]


def median_per_call(comm: MPI.Comm, runs: Sequence[Run], iters: int, rounds: int,
                    warmup: Optional[int] = None,
                    syncs: Optional[Sequence[Run]] = None) -> List[float]:
    """Each run's median over ``rounds`` interleaved blocks of ``iters`` calls of the slowest
    rank's seconds per call (the peer benchmarks' measurement); a first round of ``warmup``
    calls each (default ``iters``) is not counted. Every rank gets the same values."""
    counts = [iters if warmup is None else warmup] + [iters] * rounds
    blocks = interleaved_blocks(comm, runs, counts, syncs)
    return [statistics.median(combine(comm, b[1:], MAXIMUM)) / iters for b in blocks]
