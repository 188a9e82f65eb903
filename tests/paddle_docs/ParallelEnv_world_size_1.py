# doctest: +REQUIRES(env:DISTRIBUTED)
# execute this command in terminal: export PADDLE_TRAINERS_NUM=4
import pycoll.distributed as dist
env = dist.ParallelEnv()
print("The world_size is %d" % env.world_size)
