"""Rooted calls whose ranks name different roots (each its own rank, the common slip) are refused
on every rank before anything is sent, naming each rank's root, and the job goes on: MPI completed
a small broadcast, reduce or scatter so, each rank getting some rank's data. scatter compares on
every call (with the root's verdict on its list); blocking broadcasts and reduces on a group's
first 8 collectives, then on each power of two (agreement.due). Two ranks; argv[1] "group"
runs the calls on a new group of both ranks, "task" makes a non-blocking broadcast with src=rank,
whose task ends the job."""
import sys

import numpy as np

import pycoll.distributed as dist

dist.init_parallel_env()
rank = dist.get_rank()
if sys.argv[1:] == ["task"]:  # started, it cannot be taken back: its task ends the job
    dist.broadcast(np.ones(2, np.float32), src=rank, sync_op=False).wait()
    raise SystemExit(f"rank {rank}: a non-blocking broadcast with src=rank was not stopped")
group = dist.new_group([0, 1]) if sys.argv[1:] == ["group"] else None
where = "group 1 (ranks [0, 1])" if group is not None else "world (ranks [0, 1])"


def refused(fn, arg, call):
    x = np.full(2, rank + 1.0, np.float32)
    try:
        call(x)
    except ValueError as exc:
        want = (f"pycoll.distributed.{fn}: the ranks of {where} gave different {arg} [0, 1] (in rank order); "
                f"every rank must name the same (a global rank); nothing was sent")
        assert str(exc) == want, exc
    else:
        raise AssertionError(f"rank {rank}: {fn} with {arg}=rank went through")
    assert x.tolist() == [rank + 1.0] * 2, (fn, x)  # nothing was sent
    y = np.ones(1, np.float32)
    dist.all_reduce(y, group=group)  # the group is in step: the job goes on
    assert y.tolist() == [2.0], (fn, y)


refused("broadcast", "src", lambda x: dist.broadcast(x, src=rank, group=group))
refused("reduce", "dst", lambda x: dist.reduce(x, dst=rank, group=group))
refused("scatter", "src", lambda x: dist.scatter(x, [x, x], src=rank, group=group))

# the schedule: agreed broadcasts bring the group's collectives to 15, and the 16th is compared again
x = np.zeros(3, np.float32)
made = (group if group is not None else dist.get_group()).collectives_made
assert made == 6, made  # the 3 refused calls (refused by the comparison: they count) and the all_reduces
for i in range(15 - made):
    dist.broadcast(x, src=i % 2, group=group)
refused("broadcast", "src", lambda x: dist.broadcast(x, src=rank, group=group))
print(f"rooted roots OK rank={rank}", flush=True)
