"""Rank 0 waits in an all_reduce that rank 1 never joins: PYCOLL_TIMEOUT must end it."""
import sys
import time

import numpy as np

import pycoll
import pycoll.distributed as dist

dist.init_parallel_env()
if dist.get_rank() == 1:
    time.sleep(float(sys.argv[1]))
else:
    try:
        dist.all_reduce(np.ones(8))
    except pycoll.CollectiveError as exc:
        print(f"caught CollectiveError: {exc}", flush=True)
        raise
