import pycoll
pycoll.distributed.init_parallel_env()
pycoll.distributed.get_backend()
