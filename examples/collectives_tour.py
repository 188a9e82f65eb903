"""A tour of pycoll's collectives on NumPy arrays. Run it on any number of ranks:

    python -m pycoll.launch --nproc_per_node 2 examples/collectives_tour.py
"""
import numpy as np

import pycoll.distributed as dist

dist.init_parallel_env()
rank, world = dist.get_rank(), dist.get_world_size()

x = np.full(4, rank + 1.0, dtype=np.float32)
dist.all_reduce(x)                                  # in place: every rank gets the sum
total = np.float32(world * (world + 1) / 2)
assert (x == total).all()

gathered = []
dist.all_gather(gathered, np.array([rank * 10]))    # one array per rank, in rank order
assert [int(g[0]) for g in gathered] == [r * 10 for r in range(world)]

weights = np.arange(3.0) if rank == 0 else np.zeros(3)
dist.broadcast(weights, src=0)                      # rank 0's values everywhere
assert (weights == np.arange(3.0)).all()

mean = np.array([float(rank)])
task = dist.all_reduce(mean, op=dist.ReduceOp.AVG, sync_op=False)
task.wait()                                         # asynchronous: overlap work before wait()

print(f"rank {rank}/{world}: all_reduce sum={x[0]:g}, all_gather={[int(g[0]) for g in gathered]}, "
      f"broadcast={weights.tolist()}, mean rank={mean[0]:g}", flush=True)
