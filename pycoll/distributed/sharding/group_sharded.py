"""paddle's ``group_sharded_parallel`` and ``save_group_sharded_model``: ZeRO-style sharding
over a group, built from DataParallel (its reducer), the optimizer and the collectives.

Every trainable parameter is cut into one piece per rank (``pycoll.parallel.segments``: ZeRO's
even split, not paddle's whole-parameter greedy one, so one large weight divides too). Levels
(each also does what the ones before it do):

- ``os``: each rank keeps the optimizer state of its pieces and updates only those; gradients
  are all-reduced as DataParallel does and the parameters all-gathered after the step.
- ``os_g``: gradient buckets are reduce-scattered instead of all-reduced, so after backward a rank
  holds only its pieces of the averaged gradients.
- ``p_g_os``: parameters of more than ``segment_size`` elements (outside ``exclude_layer``) are
  held only as this rank's piece between uses and all-gathered just before their layer's forward
  (see ``model.py`` for when they are let go).

Training is plain data-parallel training at every level: the same losses and parameters.
"""
from __future__ import annotations

import os
from typing import Any, Optional, Sequence, Set, Tuple, Union

import numpy as np

import pycoll.distributed as dist
from pycoll._errors import AssertedArgument
from pycoll.amp import GradScaler
from pycoll.distributed.output_folder import make_output_folder
from pycoll.distributed.sharding.model import GroupShardedModel
from pycoll.distributed.sharding.optimizer import ShardedOptimizer
from pycoll.nn import Layer
from pycoll.parallel import DataParallel
from pycoll.serialization import save

LEVELS = ("os", "os_g", "p_g_os")
STAGES = {1: "os", 2: "os_g", 3: "p_g_os"}  # paddle's sharding stages (fleet, auto-parallel) -> levels


def group_sharded_parallel(model: Layer, optimizer: Any, level: str, scaler: Any = None,
                           group: Optional[dist.Group] = None, offload: bool = False,
                           sync_buffers: bool = False, buffer_max_size: int = 2 ** 23,
                           segment_size: int = 2 ** 20, sync_comm: bool = False,
                           dp_group: Optional[dist.Group] = None,
                           exclude_layer: Optional[Sequence[Union[str, int]]] = None
                           ) -> Tuple[GroupShardedModel, ShardedOptimizer, Any]:
    """``(model, optimizer, scaler)`` for sharded training at ``level`` over ``group`` (the world
    by default). ``offload=True`` keeps the optimizer state in host memory (and updates there).
    ``exclude_layer`` (layer class names or ``id(layer)``) and ``segment_size`` choose, at
    ``p_g_os``, the parameters that stay whole on every rank. ``dp_group`` (sharding inside data
    parallelism: the ranks holding this rank's pieces in the other replicas) averages the
    gradients over it too. ``buffer_max_size`` is the
    gradient bucket size in bytes. Buffers are broadcast from the group's first rank at wrap
    time, and with ``sync_buffers`` before every forward too (paddle's). ``sync_comm`` is accepted
    for paddle's signature (pycoll's gradient traffic overlaps backward)."""
    if level not in LEVELS:
        raise AssertedArgument(f"group_sharded_parallel: level={level!r}; it must be one of {', '.join(LEVELS)}")
    if isinstance(model, DataParallel):
        raise ValueError("group_sharded_parallel: model is already wrapped in DataParallel; pass the "
                         "layer itself")
    if not isinstance(model, Layer):
        raise TypeError(f"group_sharded_parallel: model must be a pycoll.nn.Layer, got {type(model).__name__}")
    if not hasattr(optimizer, "over"):  # an Optimizer, or a wrapper of one
        raise TypeError(f"group_sharded_parallel: optimizer must be a pycoll.optimizer.Optimizer built over "
                        f"model.parameters(), got {type(optimizer).__name__}")
    if group is not None and (not isinstance(group, dist.Group) or group.rank < 0):
        raise ValueError(f"group_sharded_parallel: group {group!r} does not contain this rank "
                         f"({dist.get_rank()}); pass a group of the ranks that train together")
    if dp_group is not None and (not isinstance(dp_group, dist.Group) or dp_group.rank < 0):
        raise ValueError(f"group_sharded_parallel: dp_group {dp_group!r} does not contain this rank "
                         f"({dist.get_rank()}); pass the ranks that hold this rank's pieces in the other replicas")
    if dp_group is not None and dp_group.nranks > 1 and not (dist.is_initialized() and dist.get_world_size(group) > 1):
        raise ValueError("group_sharded_parallel: dp_group with a sharding group of one rank; use "
                         "DataParallel(model, group=dp_group) instead")
    if isinstance(segment_size, bool) or not isinstance(segment_size, int) or segment_size < 0:
        raise ValueError(f"group_sharded_parallel: segment_size={segment_size!r}; it must be an int >= 0")
    if scaler is not None and not isinstance(scaler, GradScaler):
        raise TypeError(f"group_sharded_parallel: scaler must be a pycoll.amp.GradScaler or None, got {scaler!r}")
    missing = [entry for entry in exclude_layer or [] if not _names_a_layer(model, entry)]
    if missing:
        raise ValueError(f"group_sharded_parallel: exclude_layer names {missing}, which model does not "
                         f"have (give layer class names or id(layer))")
    sharded = shard_model(model, level, group, buffer_max_size / 2 ** 20, segment_size, exclude_layer or [],
                          dp_group, bool(sync_buffers))
    return sharded, ShardedOptimizer(optimizer, sharded, offload), scaler_over(scaler, group)


def scaler_over(scaler: Any, group: Optional[dist.Group]) -> Any:
    """``scaler`` (a ``pycoll.amp.GradScaler``, or None) made to skip a step on every rank of
    ``group`` (None: the world) when any rank's gradients hold inf or NaN: with sharded or
    model-parallel gradients each rank checks only its own, and the ranks must agree."""
    if scaler is None or not scaler.is_enable():
        return scaler
    xp = (group if group is not None else dist.get_group(0)).array_module

    def any_rank(found: bool) -> bool:
        flag = xp.asarray([int(found)], dtype=xp.int32)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=group)
        return bool(int(flag[0]))
    scaler._combine_found_inf = any_rank
    return scaler


def shard_model(model: Layer, level: str, group: Optional[dist.Group], comm_buffer_size: float = 25,
                segment_size: int = 2 ** 20, exclude_layer: Sequence[Union[str, int]] = (),
                dp_group: Optional[dist.Group] = None, sync_buffers: bool = False) -> GroupShardedModel:
    """The model side of ``level`` over ``group`` (arguments checked by the caller), gradients
    averaged over ``dp_group`` too: fleet's sharding builds it as well, before it sees the
    optimizer."""
    several = dist.is_initialized() and dist.get_world_size(group) > 1
    lazy = _lazy_parameters(model, exclude_layer, segment_size) if level == "p_g_os" and several else set()
    return GroupShardedModel(model, group, level, lazy, dp_group=dp_group, sync_buffers=sync_buffers,
                             comm_buffer_size=comm_buffer_size)


def _names(entry: Union[str, int], layer: Layer) -> bool:
    """paddle's exclude_layer entries: a layer class name or ``id(layer)``."""
    return entry in (type(layer).__name__, id(layer))


def _names_a_layer(model: Layer, entry: Union[str, int]) -> bool:
    return any(_names(entry, layer) for layer in model.sublayers(include_self=True))


def _lazy_parameters(model: Layer, exclude: Sequence[Union[str, int]], segment_size: int) -> Set[int]:
    """ids of the parameters held only in use at p_g_os: those of more than ``segment_size``
    elements in layers not excluded (paddle's rule)."""
    kept = {id(p) for layer in model.sublayers(include_self=True)
            if any(_names(entry, layer) for entry in exclude)
            for p in layer.parameters()}
    return {id(p) for p in model.parameters() if p.array.size > segment_size and id(p) not in kept}


def save_group_sharded_model(model: GroupShardedModel, output: str,
                             optimizer: Optional[ShardedOptimizer] = None) -> None:
    """Save the whole model (``output/model.pdmodel``) and, with ``optimizer``, the whole
    optimizer state gathered from every rank (``output/model.pdopt``), from the group's first
    rank. Collective at every level (paddle's is local at ``os``/``os_g``): call it on every rank
    of the sharding group, not under ``if rank == 0:``; it returns once the files are written.
    Every rank makes the folder ``output`` first, so a bad path raises on every rank before
    anything is sent."""
    if not isinstance(model, GroupShardedModel):
        raise TypeError(f"save_group_sharded_model: model must be what group_sharded_parallel returned, "
                        f"got {type(model).__name__}")
    if optimizer is not None and not isinstance(optimizer, ShardedOptimizer):
        raise TypeError(f"save_group_sharded_model: optimizer must be what group_sharded_parallel returned "
                        f"or None, got {type(optimizer).__name__}")
    output = make_output_folder("save_group_sharded_model", "output", output)
    model.get_all_parameters()
    whole = optimizer.whole_state_dict() if optimizer is not None else None
    state = {k: np.array(v.numpy()) for k, v in model.state_dict().items()}
    model.release_parameters()
    if dist.get_rank() == (model.shard_group.ranks[0] if model.shard_group is not None else 0):
        save(state, os.path.join(output, "model.pdmodel"))  # the layer's own keys
        if whole is not None:
            save(whole, os.path.join(output, "model.pdopt"))
    dist.barrier(group=model.shard_group)  # the files are there when any rank returns
