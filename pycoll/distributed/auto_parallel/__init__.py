"""paddle's auto-parallel front door, eagerly: ``ProcessMesh`` and placements, distributed tensors
(``shard_tensor``, ``reshard``, ``unshard_dtensor``), ``shard_layer``, ``shard_dataloader``, and
``to_static`` -> ``DistModel``. Reached as ``pycoll.distributed.<name>``.

    mesh.py         ProcessMesh
    placements.py   Shard / Replicate / Partial, and the blocks they cut
    transitions.py  the collectives that move a local piece between placements
    dtensor.py      distributed tensors and parameters; shard_tensor, reshard (differentiable)
    layers.py       shard_layer; a sharded nn.Linear as a column- or row-parallel layer
    loader.py       shard_dataloader
    program.py      the record of a step, printed as a program
    state.py        DistModel's state dict and the model's part of its programs
    strategy.py     dist.Strategy
    propagation.py  a split batch through eager ops: placements, and gradients summed over it
    optimizer.py    shard_optimizer, ShardingStage1/2/3
    local.py        local_map, LocalLayer: code on the local pieces, its results declared distributed
    intermediate.py parallelize and its plans (ColWiseParallel, RowWiseParallel, ...)
    api.py          paddle's module path for the functions (dist.auto_parallel.api.<name>)
    setup.py        what a DistModel is made of (mesh, data dimension, wrapped model)
    dist_model.py   to_static, DistModel
"""
from pycoll.distributed.auto_parallel.dist_model import DistModel, to_static
from pycoll.distributed.auto_parallel.dtensor import (DistParameter, DistTensor, dtensor_from_fn, dtensor_from_local,
                                                      is_dist_tensor, reshard, shard_tensor)
from pycoll.distributed.auto_parallel.intermediate import (ColWiseParallel, ContextParallel, PlanBase,
                                                           PrepareContextParallel, PrepareLayerInput,
                                                           PrepareLayerOutput, RowWiseParallel,
                                                           SequenceParallelBegin, SequenceParallelDisable,
                                                           SequenceParallelEnable, SequenceParallelEnd, SplitPoint,
                                                           parallelize)
from pycoll.distributed.auto_parallel.layers import shard_layer
from pycoll.distributed.auto_parallel.loader import ShardDataloader, shard_dataloader
from pycoll.distributed.auto_parallel.local import LocalLayer, local_map, unshard_dtensor
from pycoll.distributed.auto_parallel.mesh import ProcessMesh, create_mesh, get_mesh, set_mesh
from pycoll.distributed.auto_parallel.optimizer import (ShardingStage1, ShardingStage2, ShardingStage3,
                                                        ShardOptimizer, in_auto_parallel_align_mode,
                                                        shard_optimizer, shard_scaler)
from pycoll.distributed.auto_parallel.placements import Partial, Placement, ReduceType, Replicate, Shard
from pycoll.distributed.auto_parallel.program import Program
from pycoll.distributed.auto_parallel.strategy import Strategy
from pycoll.distributed.auto_parallel import api, propagation
from pycoll.distributed.auto_parallel.clip_norms import split_groups
from pycoll.parallel.clip_norms import completing
from pycoll.optimizer.optimizer import set_default_norm_sums

propagation.follow()
set_default_norm_sums(completing(split_groups))  # a clip's norms over the whole of a split gradient

__all__ = ["ColWiseParallel", "ContextParallel", "DistModel", "DistParameter", "DistTensor", "LocalLayer",
           "Partial", "PlanBase", "PrepareContextParallel", "PrepareLayerInput", "PrepareLayerOutput",
           "RowWiseParallel", "SequenceParallelBegin", "SequenceParallelDisable", "SequenceParallelEnable",
           "SequenceParallelEnd", "SplitPoint", "parallelize", "Placement", "ProcessMesh", "Program",
           "ReduceType", "Replicate", "Shard", "ShardDataloader", "ShardOptimizer",
           "ShardingStage1", "ShardingStage2", "ShardingStage3", "Strategy", "api", "dtensor_from_fn", "shard_scaler",
           "create_mesh", "dtensor_from_local", "get_mesh", "in_auto_parallel_align_mode", "is_dist_tensor", "local_map", "set_mesh",
           "shard_optimizer",
           "reshard", "shard_dataloader", "shard_layer", "shard_tensor", "to_static", "unshard_dtensor"]
