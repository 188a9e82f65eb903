"""Ranks stalled in calls that can never match end the job at once (the stall notices), and
ranks that are only slow do not. argv[1] is the mode:

- ``barrier_vs_all_reduce``: after three all_reduces, rank 0 calls barrier and rank 1 all_reduce
  (both #4 on the world).
- ``blocking_vs_task``: rank 0 calls all_reduce, rank 1 all_reduce(sync_op=False) and waits for
  its task (MPI never matches the two).
- ``subgroup``: on 3 ranks, rank 1 calls barrier and rank 2 all_gather on the group [1, 2] (its
  #2) while rank 0 waits in the world's all_reduce for them.
- ``extra_broadcasts``: both ranks broadcast 8 times, then rank 0 broadcasts three times more (a
  root once left each at once) and calls barrier (its #12); rank 1 calls all_reduce (its #9). The
  ranks first compare their calls (pycoll.distributed.agreement): both raise at #9.
- ``extra_broadcasts_task``: the same with rank 0's extra broadcasts non-blocking (compared on
  the group's first 8 collectives and powers of two only): as their root it completes them
  alone, and waits in barrier #12 while rank 1 waits in all_reduce #9: different counts of
  collectives made.
- ``gather_roots``: each rank gathers to itself (gather #1, roots 0 and 1).
- ``slow``: rank 1 sleeps past the notice delay before joining the same all_reduce.
- ``p2p_shift`` (3 ranks): rank 0 first sends rank 2 a message (its #1, rank 2's too; rank 1
  makes no such call), then all three gather to rank 0 and all_reduce. Rank 2 sleeps: rank 0 waits
  in the gather (its #2) for it, rank 1 in the same gather (its #1: on MPI the ranks first compare
  their tensors, pycoll.distributed.agreement). Two ranks stalled at different numbers, in a
  correct program: rank 2, not stalled, tells nothing, so nothing is concluded.
- ``stale_notice`` (2 ranks): rank 0 sends rank 1 a message (its #1) and waits in all_reduce (its
  #2) for rank 1, which is late (its #1), long enough to tell rank 1 so; then, the all_reduce done,
  rank 0 holds the interpreter's lock in one C call for seconds (its watchdog cannot withdraw the
  notice) while rank 1 waits in barrier (its #2). Rank 1 holds a notice of all_reduce #2 and waits
  in barrier #2, in a correct program: rank 0 cannot confirm, so nothing is concluded.

Every rank prints ``stall_mismatch.py OK`` with its results when it finishes.
"""
import re
import sys
import time

import numpy as np

import pycoll.distributed as dist

SLOW_S = 3.0  # past the notice delay the tests set (PYCOLL_STALL_WARN=1)

dist.init_parallel_env()
mode, rank = sys.argv[1], dist.get_rank()
x = np.full(4, rank + 1.0)
if mode == "barrier_vs_all_reduce":
    for _ in range(3):
        dist.all_reduce(x)
    if rank == 0:
        dist.barrier()
    else:
        dist.all_reduce(x)
elif mode == "blocking_vs_task":
    if rank == 0:
        dist.all_reduce(x)
    else:
        dist.all_reduce(x, sync_op=False).wait()
elif mode == "subgroup":
    pair = dist.new_group([1, 2])
    if rank > 0:
        dist.all_reduce(x, group=pair)  # #1 on the pair
        if rank == 1:
            dist.barrier(group=pair)
        else:
            dist.all_gather([], x, group=pair)
    dist.all_reduce(x)
elif mode.startswith("extra_broadcasts"):
    for _ in range(8):
        dist.broadcast(x, src=0)
    if rank == 0:
        for _ in range(3):
            dist.broadcast(x, src=0, sync_op=not mode.endswith("task"))
        dist.barrier()
    else:
        dist.all_reduce(x)
elif mode == "gather_roots":
    dist.gather(x, [], dst=rank)
elif mode == "slow":
    if rank == 1:
        time.sleep(SLOW_S)
    dist.all_reduce(x)
elif mode == "p2p_shift":
    if rank == 0:
        dist.send(x, dst=2)
    elif rank == 2:
        time.sleep(SLOW_S)
        dist.recv(x, src=0)
    dist.gather(x, [] if rank == 0 else None, dst=0)
    dist.all_reduce(x)
elif mode == "stale_notice":
    message = np.arange(4.0)
    if rank == 0:
        task = dist.isend(message, dst=1)
        dist.all_reduce(x)
        re.match(r"(a+)+$", "a" * 27 + "b")  # one C call: seconds with the interpreter's lock held
        dist.barrier()
        task.wait()
    else:
        time.sleep(SLOW_S)
        dist.all_reduce(x)
        dist.barrier()
        dist.recv(message, src=0)
        assert message.tolist() == [0.0, 1.0, 2.0, 3.0], message
else:
    raise SystemExit(f"stall_mismatch.py: unknown mode {mode!r}")
print(f"stall_mismatch.py OK rank={rank} x={x.tolist()}", flush=True)
