"""A job started by several launchers (--nnodes): every rank reports its place and a sum over the
whole world; with ``hold`` the job runs until it is stopped (at most 60 s)."""
import sys
import time

import numpy as np

import pycoll.distributed as dist

dist.init_parallel_env()
rank, world = dist.get_rank(), dist.get_world_size()
x = np.array([float(rank)])
dist.all_reduce(x)
print(f"nodes OK rank={rank} world={world} sum={x[0]:g}", flush=True)
if sys.argv[1:] == ["hold"]:
    end = time.monotonic() + 60
    while time.monotonic() < end:
        dist.barrier()
        time.sleep(0.05)
