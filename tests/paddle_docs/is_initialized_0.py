import pycoll
print(pycoll.distributed.is_initialized())
pycoll.distributed.init_parallel_env()
print(pycoll.distributed.is_initialized())
