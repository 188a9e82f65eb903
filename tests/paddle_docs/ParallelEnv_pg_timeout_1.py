# execute this command in terminal: export PADDLE_PG_TIMEOUT=1800000
import pycoll.distributed as dist
env = dist.ParallelEnv()
# the pg_timeout of process group 1800000
