import pycoll
pycoll.distributed.init_parallel_env()
tindata = pycoll.randn(shape=[2, 3])
gp = pycoll.distributed.new_group([2, 4, 6])
pycoll.distributed.all_reduce(tindata, group=gp, sync_op=False)
