"""``pycoll.distributed``: paddle-style collectives, groups, launch and spawn.

    import pycoll.distributed as dist
    dist.init_parallel_env()
    dist.all_reduce(x)            # x: pycoll.Tensor or numpy.ndarray, reduced in place
"""
from pycoll.backends.reduce_op import ReduceOp
from pycoll.distributed.collective import (all_gather, all_reduce, alltoall, barrier, broadcast,
                                           can_reduce, irecv, isend, recv, reduce, reduce_scatter,
                                           scatter, send)
from pycoll.distributed.env import (ParallelEnv, destroy_process_group, get_backend, get_group,
                                    get_rank, get_world_size, init_parallel_env, is_initialized,
                                    new_group)
from pycoll.distributed.group import Group
from pycoll.distributed.spawn import SpawnContext, SpawnError, spawn
from pycoll.distributed.task import Task



_UPPER_LAYER = {  # name -> module: data and model parallelism live a layer above (pycoll.parallel)
    "fused_allreduce_gradients": "pycoll.parallel.fused",
    "ColumnParallelLinear": "pycoll.parallel.mp_layers",
    "RowParallelLinear": "pycoll.parallel.mp_layers",
    "VocabParallelEmbedding": "pycoll.parallel.mp_layers",
    "split": "pycoll.parallel.split",
    "split_layers": "pycoll.parallel.split",
}


def __getattr__(name: str):
    # reached as dist.<name>, as in paddle, but imported on first use so that this layer never
    # imports the one above it at import time
    if name in _UPPER_LAYER:
        import importlib

        return getattr(importlib.import_module(_UPPER_LAYER[name]), name)
    raise AttributeError(f"module 'pycoll.distributed' has no attribute {name!r}")


__all__ = [
    "ReduceOp", "Group", "Task", "ParallelEnv", "SpawnContext", "SpawnError",
    "init_parallel_env", "is_initialized", "destroy_process_group", "get_rank", "get_world_size",
    "new_group", "get_group", "get_backend", "spawn",
    "all_reduce", "reduce", "broadcast", "all_gather", "scatter", "reduce_scatter", "alltoall",
    "send", "recv", "isend", "irecv", "barrier", "can_reduce", *_UPPER_LAYER,
]
