# Execute this script using distributed launch with one card configs.
import pycoll
import pycoll.distributed as dist
dist.init_parallel_env()
print("The rank is %d" % dist.get_rank())
