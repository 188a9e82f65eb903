# doctest: +REQUIRES(env:DISTRIBUTED)
# execute this command in terminal: export FLAGS_selected_gpus=1
import pycoll.distributed as dist
env = dist.ParallelEnv()
print("The device id are %d" % env.device_id)
