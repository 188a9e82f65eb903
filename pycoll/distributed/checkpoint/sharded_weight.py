"""paddle's flex-checkpoint descriptions of a state dict's pieces: a :class:`ShardedWeight` says
which block of a whole tensor (``global_shape``) this rank's ``local_tensor`` is — its shape and
its ``global_offset`` — for tensors split by hand (tensor parallel layers, sharded optimizer
states) rather than by placements. ``save_state_dict`` writes each distinct block once and
``load_state_dict`` fills a ShardedWeight's local tensor, in place, with its block of the saved
whole, whatever blocks saved it.

    w = dist.shard_weight("w", local_rows, axis=0, group=tp_group)   # this rank's rows of w
    dist.save_state_dict({"w": w}, "ckpt")
"""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from pycoll.distributed.auto_parallel.dtensor import is_dist_tensor
from pycoll.distributed.group import Group
from pycoll.parallel.flat_block import FlatBlock
from pycoll.tensor import Tensor


def _ints(name: str, value: Any, key: Any) -> Tuple[int, ...]:
    try:
        out = tuple(int(v) for v in value)
    except TypeError:
        raise TypeError(f"ShardedWeight {key!r}: {name} must be a sequence of ints, got {value!r}") from None
    if any(v < 0 for v in out):
        raise ValueError(f"ShardedWeight {key!r}: {name}={list(out)} has a negative entry")
    return out


class ShardedWeight:
    """The block of a whole tensor this rank holds (paddle's ``ShardedWeight``): ``local_tensor``
    (its shape ``local_shape``) lies at ``global_offset`` in a tensor of ``global_shape``. A
    distributed tensor given as ``local_tensor`` stands for its local piece. Flattened blocks
    (``is_flattened``, paddle's sharding stage 2 form) are not supported."""

    def __init__(self, key: str, local_tensor: Tensor, local_shape: Sequence[int], global_shape: Sequence[int],
                 global_offset: Sequence[int], is_flattened: bool = False,
                 flattened_range: Optional[slice] = None) -> None:
        if not isinstance(key, str):
            raise TypeError(f"ShardedWeight: key must be a str, got {type(key).__name__}")
        if not isinstance(local_tensor, Tensor):
            raise TypeError(f"ShardedWeight {key!r}: local_tensor must be a pycoll.Tensor, got "
                            f"{type(local_tensor).__name__}")
        if is_flattened or flattened_range is not None:
            raise NotImplementedError(f"ShardedWeight {key!r}: flattened blocks (is_flattened=True, "
                                      f"flattened_range) are not supported by pycoll's checkpoints")
        if is_dist_tensor(local_tensor):
            local_shape, local_tensor = local_tensor._local_shape, local_tensor._local_value()
        self.key = key
        self.local_tensor = local_tensor
        self.local_shape = _ints("local_shape", local_shape, key)
        self.global_shape = _ints("global_shape", global_shape, key)
        self.global_offset = _ints("global_offset", global_offset, key)
        self.is_flattened, self.flattened_range = False, None
        if tuple(local_tensor._array.shape) != self.local_shape:
            raise ValueError(f"ShardedWeight {key!r}: local_shape={list(self.local_shape)} but local_tensor "
                             f"has shape {list(local_tensor._array.shape)}")
        if not len(self.local_shape) == len(self.global_shape) == len(self.global_offset):
            raise ValueError(f"ShardedWeight {key!r}: local_shape {list(self.local_shape)}, global_shape "
                             f"{list(self.global_shape)} and global_offset {list(self.global_offset)} must have "
                             f"one entry per dimension")
        if any(o + n > g for o, n, g in zip(self.global_offset, self.local_shape, self.global_shape)):
            raise ValueError(f"ShardedWeight {key!r}: a block of shape {list(self.local_shape)} at "
                             f"{list(self.global_offset)} does not fit in global_shape {list(self.global_shape)}")

    def bounds(self) -> List[Tuple[int, int]]:
        """[start, stop) per dimension of the block in the whole tensor."""
        return [(o, o + n) for o, n in zip(self.global_offset, self.local_shape)]

    def __str__(self) -> str:
        return (f"ShardedWeight(\n  key={self.key},\n  local_tensor={type(self.local_tensor).__name__}"
                f"(shape={list(self.local_shape)}),\n  local_shape={self.local_shape},\n  global_shape="
                f"{self.global_shape},\n  global_offset={self.global_offset},\n  flattened_range=None\n)")

    __repr__ = __str__


def as_block(key: str, value: Any) -> Any:
    """``value`` as the checkpoint sees it: a FlatBlock as its ShardedWeight, others as they are."""
    if not isinstance(value, FlatBlock):
        return value
    return ShardedWeight(key, value, [value._array.size], [value.whole_size], [value.block_offset])


ShardedStateDict = Union[Dict[str, ShardedWeight], "OrderedDict[str, ShardedWeight]"]
"""paddle's name for a state dict of ShardedWeights (a type, as paddle's)."""


def shard_weight(key: str, weight: Tensor, axis: int, group: Group) -> ShardedWeight:
    """``weight`` as this rank's block of a whole tensor split evenly along ``axis`` over
    ``group``'s ranks, in group-rank order (paddle's ``shard_weight``)."""
    if not isinstance(group, Group):
        raise TypeError(f"shard_weight: group must be a pycoll.distributed.Group, got {type(group).__name__}")
    if not group.is_member():
        raise ValueError(f"shard_weight: this rank is not in {group.describe()}, over which {key!r} is split")
    if not isinstance(weight, Tensor):
        raise TypeError(f"shard_weight: weight must be a pycoll.Tensor, got {type(weight).__name__}")
    shape = list(weight.shape)
    if isinstance(axis, bool) or not isinstance(axis, int) or not 0 <= axis < len(shape):
        raise ValueError(f"Shard axis {axis} is invalid for tensor with shape {shape}")
    whole, offset = list(shape), [0] * len(shape)
    whole[axis] *= group.nranks
    offset[axis] = group.rank * shape[axis]
    return ShardedWeight(key, weight, shape, whole, offset)


def build_sharded_state_dict(state_dict: Dict[str, Tensor], shard_rules: Optional[Dict[str, int]] = None,
                             prefix: str = "") -> Dict[str, ShardedWeight]:
    """``state_dict`` as ShardedWeights keyed ``prefix + key``: the tensors named in
    ``shard_rules`` split along their axis over fleet's model-parallel group (``shard_weight``),
    the others whole on every rank (paddle's ``build_sharded_state_dict``)."""
    rules = shard_rules or {}
    if not isinstance(rules, dict):
        raise TypeError(f"build_sharded_state_dict: shard_rules must be a dict of key -> axis, got "
                        f"{type(shard_rules).__name__}")
    group = None
    if any(key in rules for key in state_dict):
        from pycoll.distributed.fleet import get_hybrid_communicate_group

        group = get_hybrid_communicate_group().get_model_parallel_group()
    out: Dict[str, ShardedWeight] = {}
    for key, tensor in state_dict.items():
        name = f"{prefix}{key}"
        if key in rules:
            out[name] = shard_weight(name, tensor, rules[key], group)
        else:
            shape = list(tensor.shape)
            out[name] = ShardedWeight(name, tensor, shape, shape, [0] * len(shape))
    return out
