# doctest: +REQUIRES(env:DISTRIBUTED)
# execute this command in terminal: export PADDLE_TRAINER_ID=0
import pycoll.distributed as dist
env = dist.ParallelEnv()
print("The rank is %d" % env.rank)
