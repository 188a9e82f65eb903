"""Rank 0 waits in an all_reduce that rank 1 never joins: PYCOLL_TIMEOUT must end the wait.

argv: SLEEP_S MODE. MODE "sync": a blocking call, ended by the watchdog. MODE "async": a task,
whose wait() raises CollectiveError on rank 0, which reports it and re-raises.
"""
import sys
import time

import numpy as np

import pycoll
import pycoll.distributed as dist

dist.init_parallel_env()
if dist.get_rank() == 1:
    time.sleep(float(sys.argv[1]))
elif sys.argv[2] == "sync":
    dist.all_reduce(np.ones(8))
else:
    task = dist.all_reduce(np.ones(8), sync_op=False)
    try:
        task.wait()
    except pycoll.CollectiveError as exc:
        print(f"caught CollectiveError: {exc}", flush=True)
        raise
