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
    setup.py        what a DistModel is made of (mesh, data dimension, wrapped model)
    dist_model.py   to_static, DistModel
"""
from pycoll.distributed.auto_parallel.dist_model import DistModel, to_static
from pycoll.distributed.auto_parallel.dtensor import (DistParameter, DistTensor, dtensor_from_local,
                                                      is_dist_tensor, reshard, shard_tensor, unshard_dtensor)
from pycoll.distributed.auto_parallel.layers import shard_layer
from pycoll.distributed.auto_parallel.loader import ShardDataloader, shard_dataloader
from pycoll.distributed.auto_parallel.mesh import ProcessMesh
from pycoll.distributed.auto_parallel.placements import Partial, Placement, ReduceType, Replicate, Shard
from pycoll.distributed.auto_parallel.program import Program
from pycoll.distributed.auto_parallel.strategy import Strategy

__all__ = ["DistModel", "DistParameter", "DistTensor", "Partial", "Placement", "ProcessMesh", "Program",
           "ReduceType", "Replicate", "Shard", "ShardDataloader", "Strategy", "dtensor_from_local", "is_dist_tensor",
           "reshard", "shard_dataloader", "shard_layer", "shard_tensor", "to_static", "unshard_dtensor"]
