# doctest: +REQUIRES(env:DISTRIBUTED)
# execute this command in terminal: export FLAGS_nccl_nrings=1
import pycoll.distributed as dist
env = dist.ParallelEnv()
print("The nrings is %d" % env.nrings)
