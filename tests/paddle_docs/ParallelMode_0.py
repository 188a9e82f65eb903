# doctest: +REQUIRES(env: DISTRIBUTED)
import pycoll
parallel_mode = pycoll.distributed.ParallelMode
print(parallel_mode.DATA_PARALLEL)
