"""A rank's piece of a flattened whole tensor, as a Tensor that knows where it lies."""
from __future__ import annotations

from typing import Any

from pycoll.device import place_of
from pycoll.tensor import Tensor


class FlatBlock(Tensor):
    """A Tensor that is the elements ``[block_offset, block_offset + size)`` of a flattened whole
    tensor of ``whole_size`` elements, held by this rank alone: sharding's piece of a parameter's
    optimizer state. ``dist.save_state_dict`` and ``load_state_dict`` take it as that block (a
    ShardedWeight of whole shape ``[whole_size]``), so a checkpoint holds, and gives back, every
    rank's own piece; elsewhere it is a plain Tensor."""

    @classmethod
    def over(cls, array: Any, block_offset: int, whole_size: int) -> "FlatBlock":
        """A FlatBlock over ``array`` itself (1-D; no copy)."""
        block = cls(array, place=place_of(array), zero_copy=True)
        block.block_offset, block.whole_size = block_offset, whole_size
        return block
