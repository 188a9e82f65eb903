# doctest: +REQUIRES(env:DISTRIBUTED)
# execute this command in terminal: export PADDLE_CURRENT_ENDPOINT=127.0.0.1:6170
import pycoll.distributed as dist
env = dist.ParallelEnv()
print("The current endpoint are %s" % env.current_endpoint)
