"""The per-call cost of the collectives' agreement (pycoll.distributed.agreement: every rank's
dtype, size, op and root compared before each blocking call on MPI): 5 x
10 000 blocking calls of 8 bytes on each rank (argv[2]: another size, in bytes), best of the 5,
printed by rank 0 with argv[1] as its label. Run it against a worktree of a commit without the agreement to compare:

    OMP_NUM_THREADS=1 python -m pycoll.launch --nproc_per_node 2 bench/agreement_cost.py now
    OMP_NUM_THREADS=1 PYTHONPATH=/tmp/before python -m pycoll.launch --nproc_per_node 2 bench/agreement_cost.py before
"""
import sys
import time

import numpy as np

import pycoll.distributed as dist

dist.init_parallel_env()
x = np.ones(int(sys.argv[2]) // 4 if len(sys.argv) > 2 else 2, np.float32)
best = {}
for _round in range(5):
    for name, call in (("all_reduce", lambda: dist.all_reduce(x)), ("all_gather", lambda: dist.all_gather([], x)),
                       ("broadcast", lambda: dist.broadcast(x, src=0))):
        dist.barrier()
        t = time.perf_counter()
        for _ in range(10000):
            call()
        dt = (time.perf_counter() - t) / 10000 * 1e6
        best[name] = min(best.get(name, 1e9), dt)
if dist.get_rank() == 0:
    print(sys.argv[1], " ".join(f"{k}={v:.2f}us" for k, v in best.items()), flush=True)
