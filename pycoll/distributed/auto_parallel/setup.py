"""What a DistModel is made of, fixed when it is made: its one mesh and the data-parallel dimension
(the one ``shard_dataloader`` splits the batch along), how many inputs and labels a step takes,
and the model and optimizer a step runs (DataParallel or sharding, gradient merge)."""
from __future__ import annotations

import inspect
from typing import Any, List, Optional, Tuple

import pycoll.distributed as dist
from pycoll.distributed.auto_parallel.dtensor import is_dist_tensor
from pycoll.distributed.auto_parallel.loader import ShardDataloader
from pycoll.distributed.auto_parallel.mesh import ProcessMesh
from pycoll.distributed.auto_parallel.optimizer import ShardOptimizer
from pycoll.distributed.auto_parallel.placements import Placement
from pycoll.distributed.auto_parallel.strategy import Strategy
from pycoll.distributed.fleet.gradient_merge import GradientMergeOptimizer
from pycoll.distributed.sharding import group_sharded_parallel
from pycoll.distributed.sharding.group_sharded import STAGES
from pycoll.nn import Layer
from pycoll.parallel import DataParallel
from pycoll.parallel.sync_batch_norm import SyncBatchNorm
from pycoll.tensor import Tensor

def build(layer: Layer, optimizer: Any, strategy: Strategy, dp: Optional[dist.Group]) -> Tuple[Layer, Any]:
    """The model and optimizer a step runs: ``layer`` under DataParallel over the data-parallel
    group ``dp`` (or sharded over it, per ``strategy.sharding``), its BatchNorms normalising over
    the whole batch (SyncBatchNorm over ``dp``: paddle's rule makes the batch whole for a batch
    norm), the optimizer under gradient merge per ``strategy.gradient_merge``."""
    sharding, merge = strategy.sharding, strategy.gradient_merge
    if dp is not None:
        layer = SyncBatchNorm.convert_sync_batchnorm(layer, dp)  # the same parameters and statistics
    model: Layer = layer
    if sharding.enable and optimizer is not None:
        size = 1 if dp is None else dp.nranks
        if dp is None or any(p.is_shard() for p in placements_of(layer)):
            raise ValueError("strategy.sharding.enable: pycoll shards over the data-parallel mesh "
                             "dimension (shard_dataloader's shard_dims) of a model whose weights are "
                             "all Replicate; this model " + ("has no data-parallel dimension" if dp is None
                                                             else "has sharded weights"))
        if sharding.was_set("degree") and sharding.degree != size:
            raise ValueError(f"strategy.sharding.degree={sharding.degree}: pycoll shards over the "
                             f"data-parallel dimension, of {size} ranks here")
        model, optimizer, _ = group_sharded_parallel(layer, optimizer, STAGES[sharding.stage], group=dp)
    elif dp is not None:
        model = DataParallel(layer, group=dp)
    if merge.enable and optimizer is not None:
        optimizer = GradientMergeOptimizer(optimizer, merge.k_steps, merge.avg)
    return model, optimizer


def unwrap_shard_optimizer(optimizer: Any, strategy: Strategy, mesh: Optional[ProcessMesh],
                           dp_axis: Optional[int]) -> Any:
    """The optimizer inside a ``shard_optimizer`` (None and others as they are); its sharding
    stage becomes ``strategy.sharding`` (over the data-parallel dimension only)."""
    if not isinstance(optimizer, ShardOptimizer):
        return optimizer
    if optimizer.gradient_accumulation_steps > 1:
        raise ValueError(f"to_static: shard_optimizer(gradient_accumulation_steps="
                         f"{optimizer.gradient_accumulation_steps}): a DistModel accumulates gradients "
                         f"through strategy.gradient_merge (enable, k_steps)")
    stage = optimizer.sharding_stage
    if stage is not None:
        axis = None if mesh is None else (stage.mesh or mesh).dim_index(stage.sharding_mesh_dim,
                                                                          "sharding_mesh_dim")
        if axis is None or axis != dp_axis or (stage.mesh is not None and stage.mesh != mesh):
            if mesh is None or dp_axis is None:
                where = ("; this DistModel has no data-parallel dimension: give to_static a dist.shard_dataloader "
                         "whose shard_dims names the sharding dimension")
            else:
                where = f", {mesh.dim_names[dp_axis]!r} of {mesh} here"
            raise ValueError(f"to_static: {stage!r}: pycoll shards over the data-parallel dimension of the "
                             f"model's mesh (shard_dataloader's shard_dims){where}")
        strategy.sharding.enable, strategy.sharding.stage = True, stage.stage
    return optimizer._inner_opt


def placements_of(layer: Layer) -> List[Placement]:
    return [p for t in layer.parameters() if is_dist_tensor(t) for p in t.placements]


def mesh_and_data_axis(layer: Layer, loader: Any) -> Tuple[Optional[ProcessMesh], Optional[int]]:
    """The one mesh of the sharded parameters and the loader, and the loader's data axis."""
    mesh, axis, owner = None, None, None
    if isinstance(loader, ShardDataloader):
        mesh, axis = loader.mesh_and_axis(0)
        owner = "loader"
    for name, p in layer.named_parameters():
        if not is_dist_tensor(p):
            continue
        if mesh is None:
            mesh, owner = p.process_mesh, name
        elif p.process_mesh != mesh:
            raise ValueError(f"parameter {name!r} lies on {p.process_mesh}, but {owner} on {mesh}: "
                             f"pycoll runs a DistModel on one mesh")
        if axis is not None and not p.placements[axis].is_replicated():
            raise ValueError(f"parameter {name!r} is {p.placements[axis]!r} along mesh dimension "
                             f"{mesh.dim_names[axis]!r}, which splits the data; weights may be split "
                             f"along a model-parallel dimension only")
    if mesh is not None:
        mesh.check_in_job("mesh")
        if mesh.coordinate() is None:
            raise ValueError(f"this rank ({dist.get_rank()}) is not on the model's mesh {mesh}; every "
                             f"rank that runs the DistModel must be")
    return mesh, axis


def feed_counts(loader: Any, layer: Layer) -> Tuple[Optional[int], Optional[int]]:
    """(inputs, labels) a step takes: from a sample of the loader's dataset (the last field is
    the label, paddle's rule), else the inputs from the layer's forward signature."""
    dataset = getattr(loader, "dataset", None)
    try:
        sample = dataset[0] if dataset is not None and len(dataset) else None
    except (TypeError, IndexError, KeyError, NotImplementedError):
        sample = None
    if isinstance(sample, dict):
        sample = list(sample.values())
    if isinstance(sample, (list, tuple)) and len(sample) >= 2:
        return len(flatten(list(sample[:-1]))), len(flatten([sample[-1]]))
    params = inspect.signature(layer.forward).parameters.values()
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return None, None
    return sum(1 for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
               and p.default is p.empty), None


def check_optimizer(layer: Layer, optimizer: Any) -> None:
    held = {id(p) for p in getattr(optimizer, "_parameter_list", layer.parameters())}
    missing = [n for n, p in layer.named_parameters() if not p.stop_gradient and id(p) not in held]
    if missing:
        raise ValueError(f"optimizer does not update parameters {missing} of the layer: make it after "
                         f"shard_tensor / shard_layer replaced them (parameters=layer.parameters())")


def flatten(args: Any) -> List[Any]:
    out: List[Any] = []
    for i, item in enumerate(args):
        if isinstance(item, (list, tuple)):
            out += flatten(item)
        elif isinstance(item, Tensor) or hasattr(item, "__array_interface__") or hasattr(item, "__cuda_array_interface__"):
            out.append(item)
        else:
            raise TypeError(f"DistModel: the inputs and labels must be Tensors, arrays or lists of them; "
                            f"argument {i} is {type(item).__name__}")
    return out


def as_list(outputs: Any) -> List[Any]:
    return list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]


def flat_outputs(outputs: Any) -> List[Any]:
    """A model's outputs as one list, as paddle's engine flattens them: lists and tuples in
    order, a dict's values by sorted key, nested."""
    if isinstance(outputs, dict):
        return [leaf for key in sorted(outputs) for leaf in flat_outputs(outputs[key])]
    if isinstance(outputs, (list, tuple)):
        return [leaf for item in outputs for leaf in flat_outputs(item)]
    return [outputs]
