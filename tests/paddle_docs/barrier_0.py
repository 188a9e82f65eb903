import pycoll
from pycoll.distributed import init_parallel_env
pycoll.set_device(f'gpu:{pycoll.distributed.ParallelEnv().dev_id}')
init_parallel_env()
pycoll.distributed.barrier()
