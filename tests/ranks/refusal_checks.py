"""Collectives refused on some ranks only, and on every rank (argv[1] the mode):

- ``broadcast`` (2 ranks): rank 1 gives src=5 (refused, caught), rank 0 broadcasts from 0; then
  both broadcast from 0. MPI sends rank 0's small message without waiting, so rank 1's second
  broadcast would take the first's data: the job must end at the refusal instead.
- ``reduce`` (2 ranks): the destination, rank 0, gives a string op (refused, caught), rank 1
  sends; then both reduce and all_reduce properly.
- ``loop`` (2 ranks): rank 1 refuses the first of five all_reduces (caught) and goes on.
- ``every_rank`` (3 ranks): every rank refuses the same calls, on the world and on the group
  [2, 1] (rank 0 computing meanwhile), catching each; the job goes on, every later value right.

Each rank prints ``refusal_checks.py VALUE rank=R ...`` for every value it computes, and
``refusal_checks.py OK rank=R`` at the end.
"""
import sys

import numpy as np

import pycoll.distributed as dist

dist.init_parallel_env()
mode, rank = sys.argv[1], dist.get_rank()


def refused(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except (TypeError, ValueError):
        return
    raise AssertionError(f"{fn.__name__} was not refused")


def show(x):
    print(f"refusal_checks.py VALUE rank={rank} {x.tolist()}", flush=True)


if mode == "broadcast":
    first = np.array([1.0 + rank], np.float32)
    if rank == 1:
        refused(dist.broadcast, first, src=5)
    else:
        dist.broadcast(first, src=0)
    second = np.array([100.0 * (rank + 1)], np.float32)
    dist.broadcast(second, src=0)
    show(second)
elif mode == "reduce":
    x = np.array([1.0 + rank], np.float32)
    if rank == 0:
        refused(dist.reduce, x, dst=0, op="sum")
    else:
        dist.reduce(x, dst=0)
    y = np.array([100.0 * (rank + 1)], np.float32)
    dist.reduce(y, dst=0)
    show(y)
elif mode == "loop":
    for step in range(5):
        x = np.array([step + 1.0], np.float32)
        if rank == 1 and step == 0:
            refused(dist.all_reduce, x, op="sum")
            continue
        dist.all_reduce(x)
        show(x)
elif mode == "every_rank":
    x = np.full(2, rank + 1.0, np.float32)
    refused(dist.broadcast, x, src=7)
    refused(dist.all_reduce, x, op="sum")
    refused(dist.all_gather, [np.zeros(3, np.float32)] * 3, x)
    group = dist.new_group([2, 1])
    if rank in (1, 2):
        refused(dist.reduce, x, dst=0, group=group)  # rank 0 is not in the group
        dist.all_reduce(x, group=group)
        show(x)
    dist.all_reduce(x)
    show(x)
print(f"refusal_checks.py OK rank={rank}", flush=True)
