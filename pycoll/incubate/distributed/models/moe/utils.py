"""paddle's ``paddle.incubate.distributed.models.moe.utils``: counting a gate's choices per expert
and rank (``count_by_gate``) and cutting them to the experts' capacity (``limit_by_capacity``).

With ``world_size`` ranks of ``num_expert`` experts each, a count has ``world_size * num_expert``
entries, entry ``w * num_expert + e`` for expert ``e`` of rank ``w``: the local count says how
many of this rank's tokens go there, the global count (its all-to-all) how many tokens of rank
``w`` come to this rank's expert ``e``. No gradients flow through either."""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

import pycoll.distributed as dist
from pycoll.device import array_module
from pycoll.incubate.distributed.models.moe import routing
from pycoll.tensor import Tensor, wrap

__all__ = ["count_by_gate", "limit_by_capacity"]


def _alltoall(counts: Any, group: Optional[dist.Group]) -> Any:
    """Block ``w`` of this rank's counts to rank ``w``; what each rank sends here, in rank order."""
    xp = array_module(counts)
    out = xp.empty_like(counts)
    dist.alltoall_single(out, xp.ascontiguousarray(counts), group=group)
    return out


def _index_array(gate: Any, fn: str) -> Any:
    if not isinstance(gate, Tensor):
        raise TypeError(f"{fn}: the gate index must be an integer Tensor, got {type(gate).__name__}")
    if gate.array.dtype.kind not in "iu":
        raise TypeError(f"{fn}: the gate index must hold integers, got dtype {gate.array.dtype}")
    return gate.array


def _check_world(world_size: int, group: Optional[dist.Group], fn: str) -> None:
    if isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1:
        raise ValueError(f"{fn}: world_size must be an int >= 1, got {world_size!r}")
    if world_size > 1 and dist.get_world_size(group) != world_size:
        raise ValueError(f"{fn}: world_size={world_size}, but the group has {dist.get_world_size(group)} ranks; "
                         f"they must agree")


def _counts(gate: Any, num_expert: int, world_size: int, group: Optional[dist.Group]) -> Tuple[Any, Any]:
    local = routing.number_count(gate, num_expert * world_size)
    return local, (_alltoall(local, group) if world_size > 1 else local)


def count_by_gate(gate: Tensor, num_expert: int, world_size: int, require_pos: bool = True,
                  group: Optional[dist.Group] = None) -> Tuple[Optional[Tensor], Tensor, Tensor]:
    """``(pos, local_expert_count, global_expert_count)`` of the expert indices ``gate``
    (``[tokens]`` or ``[tokens, k]``, -1 for none): ``pos`` lists the flat positions of the
    valid choices grouped by global expert (None unless ``require_pos``)."""
    arr = _index_array(gate, "count_by_gate")
    _check_world(world_size, group, "count_by_gate")
    local, remote = _counts(arr, num_expert, world_size, group)
    xp = array_module(local)
    pos = wrap(routing.assign_pos(arr, xp.cumsum(local))) if require_pos else None
    return pos, wrap(local), wrap(remote)


def limit_by_capacity(topk_idx: Tensor, num_expert: int, world_size: int, capacity: int,
                      group: Optional[dist.Group] = None) -> Tuple[Tensor, Tensor, Tensor]:
    """``(new_local_count, new_global_count, topk_idx)``: each expert takes at most ``capacity``
    tokens from all ranks together (rank 0's first, then rank 1's...; on a rank, in token order);
    the choices over capacity become -1 in the ``topk_idx`` returned."""
    arr = _index_array(topk_idx, "limit_by_capacity")
    _check_world(world_size, group, "limit_by_capacity")
    if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or capacity < 0:
        raise ValueError(f"limit_by_capacity: capacity must be an int >= 0, got {capacity!r}")
    _, remote = _counts(arr, num_expert, world_size, group)
    xp = array_module(remote)
    new_remote = routing.limit_by_capacity(remote, xp.full(num_expert, int(capacity), dtype=np.int64), world_size)
    new_local = _alltoall(new_remote, group) if world_size > 1 else new_remote
    pruned = routing.prune_gate_by_capacity(arr, new_local, num_expert, world_size)
    return wrap(new_local), wrap(new_remote), wrap(pruned)
