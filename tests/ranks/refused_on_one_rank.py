"""A call refused on one rank only (bad input there, raised before anything moved) while its
peers wait in it: the job ends within seconds naming the refusal (the refusal check where a peer
made the call, the stall notices' refusal rule, or the job-wide rule with a wait inside
new_group). argv[1] is the mode (two ranks):

- ``alltoall``: rank 0's in_tensor_list has 3 entries (refused), then it all_reduces; rank 1
  waits in the alltoall.
- ``all_gather``: rank 0's pre-filled tensor_list holds tensors of the wrong size (refused),
  then it all_reduces; rank 1 waits in the all_gather.
- ``then_recv``: rank 0 refuses a broadcast (src out of range), then receives from rank 1, which
  waits in the broadcast: the job-wide rule, whose message on rank 0 names the refusal.
- ``new_group``: rank 1 refuses new_group([0, 5]) and all_reduces; rank 0 waits inside
  new_group([0, 1]), made by its members alone (the cpu backend), which is told as their call.
- ``retry``: rank 0 refuses an all_reduce (a string op) while rank 1 waits in it, and would
  then all_reduce properly after a pause: the refusal check ends the job first.

Every rank catches its own refusal, prints ``refused_on_one_rank.py OK`` with its result if it
finishes, and waits in the next call otherwise.
"""
import sys
import time

import numpy as np

import pycoll.distributed as dist

SLOW_S = 3.0  # three times the notice delay the tests set (PYCOLL_STALL_WARN=1)

dist.init_parallel_env()
mode, rank = sys.argv[1], dist.get_rank()
x = np.full(4, rank + 1.0, np.float32)


def refused(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        print(f"rank {rank} refused: {type(exc).__name__}: {exc}", flush=True)
    else:
        raise AssertionError(f"{fn.__name__} was not refused")


if mode == "alltoall":
    if rank == 0:
        refused(dist.alltoall, [], [np.ones(1, np.float32)] * 3)
    else:
        dist.alltoall([], [np.ones(1, np.float32)] * 2)
    dist.all_reduce(x)
elif mode == "all_gather":
    if rank == 0:
        refused(dist.all_gather, [np.zeros(2, np.float32), np.zeros(2, np.float32)], x)
    else:
        dist.all_gather([], x)
    dist.all_reduce(x)
elif mode == "then_recv":
    if rank == 0:
        refused(dist.broadcast, x, src=7)
        dist.recv(x, src=1)
    else:
        dist.broadcast(x, src=0)
        dist.send(x, dst=0)
elif mode == "new_group":
    if rank == 0:
        dist.new_group([0, 1])
    else:
        refused(dist.new_group, [0, 5])
    dist.all_reduce(x)
elif mode == "retry":
    if rank == 0:
        refused(dist.all_reduce, x, op="sum")
        time.sleep(SLOW_S)
    dist.all_reduce(x)  # 1 + 2
else:
    raise SystemExit(f"refused_on_one_rank.py: unknown mode {mode!r}")
print(f"refused_on_one_rank.py OK rank={rank} x={x.tolist()}", flush=True)
