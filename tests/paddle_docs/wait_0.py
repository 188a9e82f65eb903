import pycoll
pycoll.distributed.init_parallel_env()
tindata = pycoll.randn(shape=[2, 3])
pycoll.distributed.all_reduce(tindata, sync_op=True)
pycoll.distributed.wait(tindata)
