import pycoll
import pycoll.distributed as dist
dist.init_parallel_env()
gid = pycoll.distributed.new_group([2,4,6])
pycoll.distributed.get_group(gid.id)
