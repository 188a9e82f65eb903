"""Rank 0 waits for something rank 1 never joins: PYCOLL_TIMEOUT must end the wait.

argv: SLEEP_S MODE. MODE "sync": a blocking all_reduce, ended by the watchdog. MODE "async": a
task, whose wait() raises CollectiveError on rank 0 on the cpu backend (which reports it and
re-raises); on nccl wait() hands the call to the stream and the watchdog ends the job at the
synchronize after it. MODE "new_group": a sub-group's creation, ended by the watchdog.
Works on either backend: the tensor lives on the rank's device. Every rank first prints its
process id, so that tests can check none is left behind.
"""
import os
import sys
import time

import pycoll
import pycoll.distributed as dist

dist.init_parallel_env()
mode = sys.argv[2]
print(f"timeout.py started rank={dist.get_rank()} pid={os.getpid()}", flush=True)
x = pycoll.ones([8])
if dist.get_rank() == 1:
    time.sleep(float(sys.argv[1]))
elif mode == "sync":
    dist.all_reduce(x)
    x.numpy()  # on a GPU: the host waits here for the all_reduce
elif mode == "async":
    task = dist.all_reduce(x, sync_op=False)
    try:
        task.wait()
    except pycoll.CollectiveError as exc:
        print(f"caught CollectiveError: {exc}", flush=True)
        raise
    x.numpy()
else:
    dist.new_group([0, 1])
