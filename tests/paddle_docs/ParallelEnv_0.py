import pycoll
import pycoll.distributed as dist
def train():
    # 1. initialize parallel environment
    dist.init_parallel_env()
    # 2. get current ParallelEnv
    parallel_env = dist.ParallelEnv()
    print("rank: ", parallel_env.rank)
    print("world_size: ", parallel_env.world_size)
if __name__ == '__main__':
    # 1. start by ``pycoll.distributed.spawn`` (default)
    dist.spawn(train, nprocs=2)
    # 2. start by ``pycoll.distributed.launch``
    train()
