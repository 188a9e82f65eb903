"""paddle's ``paddle.distributed.parallel`` module path: the parallel environment, DataParallel
and ``sync_params_buffers`` (the same objects as ``pycoll.distributed.<name>`` and
``pycoll.parallel.<name>``). It sits in the data-parallel layer, above ``pycoll.distributed``."""
from pycoll.distributed import ParallelEnv, get_rank, get_world_size, init_parallel_env, is_initialized
from pycoll.parallel import DataParallel, sync_params_buffers

__all__ = ["DataParallel", "ParallelEnv", "get_rank", "get_world_size", "init_parallel_env", "is_initialized",
           "sync_params_buffers"]
