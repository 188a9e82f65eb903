"""A user's mistake: the ranks reduce arrays of different sizes (256 KiB on rank 0, 128 KiB on
rank 1). MPI must refuse it at once; the cpu engine choosing its MPI call by the local size once
made the ranks make different calls, which hung until PYCOLL_TIMEOUT."""
import numpy as np

import pycoll.distributed as dist

dist.init_parallel_env()
rank = dist.get_rank()
dist.reduce(np.ones((1 << 16) if rank == 0 else (1 << 15), np.float32), dst=0)
print(f"reduce of different sizes returned on rank {rank}", flush=True)
