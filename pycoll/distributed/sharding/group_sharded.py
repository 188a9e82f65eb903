"""paddle's ``group_sharded_parallel``, level ``"os"``: each rank keeps the optimizer state of
its share of the parameters and updates only those; after the step every parameter is
broadcast from the rank that owns it. Gradients are averaged as DataParallel does, so training
is plain data-parallel training, with 1/N of the optimizer state per rank.

Ownership is paddle's greedy split: parameters from the largest down, each to the rank that
owns the fewest elements so far. The levels that also shard gradients (``"os_g"``) and
parameters (``"p_g_os"``) are refused by name: pycoll does not have them yet.
"""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

import pycoll.distributed as dist
from pycoll.parallel import DataParallel
from pycoll.serialization import save

LEVELS = ("os", "os_g", "p_g_os")


def owners(sizes: List[int], nranks: int) -> List[int]:
    """The owner (a group rank) of each of parameters of ``sizes`` elements."""
    load = [0] * nranks
    owner = [0] * len(sizes)
    for i in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        owner[i] = min(range(nranks), key=lambda r: (load[r], r))
        load[owner[i]] += sizes[i]
    return owner


class ShardedOptimizer:
    """``optimizer`` stepping this rank's share of the parameters over ``group``; the others
    arrive from their owners after each step. Its state is this rank's share's."""

    def __init__(self, optimizer: Any, group: Optional[dist.Group]):
        self._group = group
        self._params = list(optimizer._parameter_list)
        size = dist.get_world_size(group)
        self._owners = [(group.ranks if group is not None else list(range(size)))[r]
                        for r in owners([int(np.prod(p.shape)) for p in self._params], size)]
        me = dist.get_rank()
        self._inner = optimizer.restricted_to([p for p, o in zip(self._params, self._owners) if o == me])

    def step(self) -> None:
        self._inner.step()
        for param, owner in zip(self._params, self._owners):
            dist.broadcast(param, src=owner, group=self._group)

    def clear_grad(self, set_to_zero: bool = True) -> None:
        for param in self._params:
            param.clear_gradient(set_to_zero)

    clear_gradients = clear_grad

    def state_dict(self) -> Dict[str, Any]:
        """This rank's share of the optimizer state."""
        return self._inner.state_dict()

    def set_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Take this rank's share from ``state_dict`` (a whole or a sharded one)."""
        self._inner.set_state_dict(state_dict)

    def get_lr(self) -> float:
        return self._inner.get_lr()

    def set_lr(self, value: float) -> None:
        self._inner.set_lr(value)


def group_sharded_parallel(model: Any, optimizer: Any, level: str, scaler: Any = None,
                           group: Optional[dist.Group] = None, offload: bool = False,
                           sync_buffers: bool = False, buffer_max_size: int = 2 ** 23,
                           segment_size: int = 2 ** 20, sync_comm: bool = False,
                           dp_group: Optional[dist.Group] = None,
                           exclude_layer: Optional[List[Any]] = None) -> Tuple[Any, Any, Any]:
    """``(model, optimizer, scaler)`` for sharded training at ``level`` over ``group`` (the world
    by default): the model under DataParallel, the optimizer a :class:`ShardedOptimizer`."""
    if level not in LEVELS:
        raise ValueError(f"group_sharded_parallel: level={level!r}; it must be one of {', '.join(LEVELS)}")
    if level != "os":
        raise ValueError(f"group_sharded_parallel: level={level!r} (sharding gradients"
                         f"{' and parameters' if level == 'p_g_os' else ''} too) is not in pycoll yet; "
                         f"level='os' shards the optimizer state")
    if isinstance(model, DataParallel):
        raise ValueError("group_sharded_parallel: model is already wrapped in DataParallel; pass the "
                         "layer itself")
    if group is not None and (not isinstance(group, dist.Group) or group.rank < 0):
        raise ValueError(f"group_sharded_parallel: group {group!r} does not contain this rank "
                         f"({dist.get_rank()}); pass a group of the ranks that train together")
    if offload:
        raise ValueError("group_sharded_parallel: offload=True is not in pycoll yet")
    if dp_group is not None:
        raise ValueError("group_sharded_parallel: dp_group (sharding inside data parallelism) is "
                         "not in pycoll yet")
    names = {name for name, _ in model.named_sublayers()}
    missing = [layer for layer in exclude_layer or [] if isinstance(layer, str) and layer not in names]
    if missing:
        raise ValueError(f"group_sharded_parallel: exclude_layer names {missing}, which model does not have")
    return DataParallel(model, group=group), ShardedOptimizer(optimizer, group), scaler


def save_group_sharded_model(model: Any, output: str, optimizer: Optional[ShardedOptimizer] = None) -> None:
    """Save the whole model (``output/model.pdmodel``) and, with ``optimizer``, the whole
    optimizer state gathered from every rank (``output/model.pdopt``), from the first rank."""
    states: List[Any] = []
    if optimizer is not None:
        mine = {k: v.numpy() for k, v in optimizer.state_dict().items()}
        dist.all_gather_object(states, mine, group=optimizer._group)
    if dist.get_rank() != 0:
        return
    os.makedirs(output, exist_ok=True)
    save(model.state_dict(), os.path.join(output, "model.pdmodel"))  # DataParallel keeps its layer's keys
    if optimizer is not None:
        whole = {k: v for state in states for k, v in state.items()}
        save(whole, os.path.join(output, "model.pdopt"))
