"""Every rank stalled in a wait that no other rank's call can match ends the job at once (the
stall notices' job-wide rule), and correct programs that stall for a while do not. argv[1] is
the mode:

- ``world_vs_group``: rank 0 calls the world's all_reduce, rank 1 the same on new_group([0, 1]).
- ``group_order``: the ranks make two groups over [0, 1] in opposite orders and all_reduce on
  "A" (rank 0's group 1, rank 1's group 2: different communicators).
- ``all_reduce_vs_send``: rank 0 calls all_reduce, rank 1 sends rank 0 a message.
- ``send_send``, ``recv_recv``: both ranks send (16 MB: no eager delivery) or receive first.
- ``batch_sends_only``: each rank's batch_isend_irecv holds only an isend to the other.
- ``slow_peers`` (correct): rank 1 computes past the notice delay before joining an all_reduce
  on a sub-group rank 0 waits in; then rank 0 waits in a recv while rank 1 computes, then sends.
- ``third_rank_slow`` (correct, 3 ranks): rank 0 waits in group [0, 1]'s all_reduce, rank 1 in
  group [1, 2]'s, for rank 2, which computes before joining; then rank 1 joins rank 0.
- ``stale_job_notice`` (correct): rank 0 waits in a recv long enough to tell every rank so,
  then, the message in, holds the interpreter's lock in one C call (its watchdog cannot withdraw
  the notice) while rank 1 waits in a recv from it: the two told waits are two recvs, which
  cannot match, but rank 0 cannot confirm, so nothing is concluded; then it sends.

Every rank prints ``stall_deadlocks.py OK`` with its results when it finishes.
"""
import re
import sys
import time

import numpy as np

import pycoll.distributed as dist

SLOW_S = 3.0  # three times the notice delay the tests set (PYCOLL_STALL_WARN=1)
BIG = 1 << 22  # float32 elements: 16 MB, past MPI's eager limit

dist.init_parallel_env()
mode, rank = sys.argv[1], dist.get_rank()
peer = 1 - rank
x = np.full(4, rank + 1.0, np.float32)
if mode == "world_vs_group":
    pair = dist.new_group([0, 1])
    dist.all_reduce(x, group=pair if rank == 1 else None)
elif mode == "after_a_waited_task":  # a task waited for to its end is not in flight (a probe: it hid this)
    pair = dist.new_group([0, 1])
    dist.all_reduce(np.ones(4, np.float32), group=pair, sync_op=False).wait()
    dist.all_reduce(x, group=pair if rank == 1 else None)
elif mode == "group_order":
    if rank == 0:
        a, b = dist.new_group([0, 1]), dist.new_group([0, 1])
    else:
        b, a = dist.new_group([0, 1]), dist.new_group([0, 1])
    dist.all_reduce(x, group=a)
elif mode == "all_reduce_vs_send":
    if rank == 0:
        dist.all_reduce(x)
    else:
        dist.send(np.ones(BIG, np.float32), dst=0)
elif mode == "send_send":
    dist.send(np.ones(BIG, np.float32), dst=peer)
    dist.recv(np.zeros(BIG, np.float32), src=peer)
elif mode == "recv_recv":
    dist.recv(np.zeros(BIG, np.float32), src=peer)
elif mode == "batch_sends_only":
    for task in dist.batch_isend_irecv([dist.P2POp(dist.isend, np.ones(BIG, np.float32), peer)]):
        task.wait()
elif mode == "slow_peers":
    pair = dist.new_group([0, 1])
    if rank == 1:
        time.sleep(SLOW_S)
    dist.all_reduce(x, group=pair)  # 1 + 2
    if rank == 0:
        dist.recv(x, src=1)
    else:
        time.sleep(SLOW_S)
        dist.send(x * 2, dst=0)
elif mode == "third_rank_slow":
    left, right = dist.new_group([0, 1]), dist.new_group([1, 2])
    if rank == 2:
        time.sleep(SLOW_S)
    if rank > 0:
        dist.all_reduce(x, group=right)  # ranks 1, 2: 2 + 3
    if rank < 2:
        dist.all_reduce(x, group=left)  # rank 0: 1 + 5, rank 1: 5 + 1
elif mode == "stale_job_notice":
    if rank == 0:
        dist.recv(x, src=1)  # rank 1's 2
        re.match(r"(a+)+$", "a" * 26 + "b")  # one C call: seconds with the interpreter's lock held
        dist.send(x + 1, dst=1)
    else:
        time.sleep(SLOW_S)
        dist.send(x, dst=0)
        dist.recv(x, src=0)  # 3
else:
    raise SystemExit(f"stall_deadlocks.py: unknown mode {mode!r}")
print(f"stall_deadlocks.py OK rank={rank} x={x.tolist()}", flush=True)
