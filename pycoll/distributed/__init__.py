"""``pycoll.distributed``: paddle-style collectives, groups, launch and spawn.

    import pycoll.distributed as dist
    dist.init_parallel_env()
    dist.all_reduce(x)            # x: pycoll.Tensor or numpy.ndarray, reduced in place
"""
from typing import List

from pycoll.backends.reduce_op import ReduceOp
from pycoll.distributed import stream
from pycoll.distributed.collective import (all_gather, all_reduce, alltoall, alltoall_single, barrier,
                                           broadcast, can_reduce, gather, reduce, reduce_scatter, scatter)
from pycoll.distributed.entry_attr import CountFilterEntry, ProbabilityEntry, ShowClickEntry
from pycoll.distributed.env import (ParallelEnv, create_nccl_config, destroy_process_group, get_backend,
                                    get_group, get_rank, get_world_size, init_parallel_env, is_initialized,
                                    new_group)
from pycoll.distributed.gloo import gloo_barrier, gloo_init_parallel_env, gloo_release
from pycoll.distributed.group import Group
from pycoll.distributed.group_shutdown import restart_process_group, shutdown_process_group
from pycoll.distributed.objects import (all_gather_object, broadcast_object_list, recv_object_list,
                                        scatter_object_list, send_object_list)
from pycoll.distributed.p2p import P2POp, batch_isend_irecv, irecv, isend, recv, send, wait
from pycoll.distributed.parallel_mode import ParallelMode
from pycoll.distributed.spawn import SpawnContext, SpawnError, spawn
from pycoll.distributed.task import Task

def is_available() -> bool:
    """Whether pycoll's distributed package can be used here (paddle's ``is_available``): it can
    wherever pycoll imports (MPI comes with it)."""
    return True


_PARALLEL = ("fused_allreduce_gradients", "ColumnParallelLinear", "RowParallelLinear",
             "VocabParallelEmbedding", "split", "split_layers", "DataParallel")
_AUTO_PARALLEL = ("ProcessMesh", "Placement", "Shard", "Replicate", "Partial", "ReduceType", "shard_tensor", "reshard",
                  "unshard_dtensor", "shard_layer", "shard_dataloader", "to_static", "DistModel", "Strategy",
                  "dtensor_from_fn", "dtensor_from_local", "shard_optimizer", "shard_scaler", "ShardingStage1", "ShardingStage2",
                  "ShardingStage3", "get_mesh", "set_mesh", "local_map", "LocalLayer", "parallelize",
                  "ColWiseParallel", "RowWiseParallel", "PrepareLayerInput", "PrepareLayerOutput",
                  "SequenceParallelBegin", "SequenceParallelEnd", "SequenceParallelEnable",
                  "SequenceParallelDisable", "ContextParallel", "PrepareContextParallel", "SplitPoint",
                  "in_auto_parallel_align_mode")
_LAZY = {  # name -> the module above this layer that holds it, imported on first use
    **{name: "pycoll.parallel" for name in _PARALLEL},
    **{name: "pycoll.distributed.auto_parallel" for name in _AUTO_PARALLEL},
    "ConvParallel": "pycoll.distributed.auto_parallel.intermediate",
    "DistAttr": "pycoll.distributed.auto_parallel.dist_attr",
    "to_distributed": "pycoll.distributed.auto_parallel.high_level_api",
    "InMemoryDataset": "pycoll.distributed.dataset", "QueueDataset": "pycoll.distributed.dataset",
    "save_state_dict": "pycoll.distributed.checkpoint", "load_state_dict": "pycoll.distributed.checkpoint",
    "load_merged_state_dict": "pycoll.distributed.checkpoint",
    **{name: "pycoll.distributed.checkpoint"  # paddle's flex checkpoint descriptions
       for name in ("ShardedWeight", "ShardedStateDict", "shard_weight", "build_sharded_state_dict")},
    "group_sharded_parallel": "pycoll.distributed.sharding",  # paddle's dist.<name> too
    "save_group_sharded_model": "pycoll.distributed.sharding",
}
# What a tensor-side function hands over to when it spans ranks (it reaches this face through
# sys.modules, never importing the layers above it): name -> module, imported on first use; not in __all__
_HANDOVERS = {"class_split_margin_cross_entropy": "pycoll.distributed.fleet.layers.mpu.margin_loss"}
_SUBPACKAGES = ("fleet", "sharding", "auto_parallel", "parallel", "communication", "rpc",
                "flex_checkpoint")  # dist.fleet.init(...) without an import


def __getattr__(name: str):
    """Paddle's data- and model-parallel API, reached as ``dist.<name>``: it lives a layer above
    (``pycoll.parallel``, auto-parallel, datasets, checkpoints, fleet), imported on first use (the
    one upward arrow of this package's face; no module of the distributed layer itself imports
    that layer). ``from pycoll.distributed import *`` reaches the names of ``__all__`` this way too."""
    import importlib

    if name in _LAZY or name in _HANDOVERS:
        return getattr(importlib.import_module(_LAZY.get(name) or _HANDOVERS[name]), name)
    if name in _SUBPACKAGES:
        return importlib.import_module(f"pycoll.distributed.{name}")
    if name == "launch":  # paddle's dist.launch is the launcher's function, bound over the package's
        # name (an import of the package pycoll.distributed.launch binds the package, callable alike)
        function = importlib.import_module("pycoll.distributed.launch.main").launch
        globals()["launch"] = function
        return function
    raise AttributeError(f"module 'pycoll.distributed' has no attribute {name!r}")


def __dir__() -> List[str]:  # the names __getattr__ serves too
    return sorted(set(globals()) | set(__all__) | set(_HANDOVERS) | set(_SUBPACKAGES))


__all__ = [
    "ReduceOp", "Group", "Task", "ParallelEnv", "ParallelMode", "SpawnContext", "SpawnError",
    "init_parallel_env", "is_initialized", "destroy_process_group", "shutdown_process_group",
    "restart_process_group", "get_rank", "get_world_size",
    "new_group", "get_group", "get_backend", "spawn",
    "all_reduce", "reduce", "broadcast", "all_gather", "scatter", "reduce_scatter", "alltoall",
    "send", "recv", "isend", "irecv", "barrier", "can_reduce", "gather", "alltoall_single",
    "all_gather_object", "broadcast_object_list", "scatter_object_list", "send_object_list",
    "recv_object_list", "P2POp",
    "batch_isend_irecv", "wait", "is_available", "stream", "create_nccl_config", "gloo_init_parallel_env",
    "gloo_barrier", "gloo_release", "CountFilterEntry", "ProbabilityEntry", "ShowClickEntry", "launch", *_LAZY,
]
