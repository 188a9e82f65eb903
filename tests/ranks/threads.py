"""Each rank prints the threads its OpenMP/BLAS libraries run with (threadpoolctl's view)."""
import os

import threadpoolctl

import pycoll.distributed as dist

dist.init_parallel_env()
pools = sorted({f"{p['user_api']}={p['num_threads']}" for p in threadpoolctl.threadpool_info()})
print(f"threads OK rank={dist.get_rank()} omp={os.environ.get('OMP_NUM_THREADS')} "
      f"pools={','.join(pools)}", flush=True)
