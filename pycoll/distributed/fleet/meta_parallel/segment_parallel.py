"""paddle's ``fleet.meta_parallel.SegmentParallel``: the wrapper ``fleet.distributed_model`` gives
for sep (segment / sequence) parallelism, ``sep_degree > 1`` without model parallelism: the ranks
of a sep group hold the same parameters and each runs its own segment of every sequence (the
script splits the sequence and exchanges what attention needs over ``hcg.get_sep_parallel_group()``).

At wrap it gives every rank of the hybrid group's sep group its first rank's parameters and
buffers, then (where there are several) of the data-parallel group, as paddle's; forward runs
``layers``. Backward leaves each rank its own gradients, as paddle's: ``fleet.distributed_optimizer``'s
step (or the script's ``fused_allreduce_gradients(params, hcg)``) averages them over the data-parallel
ranks and sums them over the sep ranks (each rank's backward gave its own segment's share)."""
from __future__ import annotations

from typing import Any

from pycoll.distributed.fleet.meta_parallel.meta_parallel_base import MetaParallelBase
from pycoll.distributed.fleet.utils.hybrid_parallel_util import broadcast_dp_parameters, broadcast_sep_parameters
from pycoll.nn import Layer

__all__ = ["SegmentParallel"]


class SegmentParallel(MetaParallelBase):
    """``layers`` (its ``_layers``, so ``state_dict`` keys start with ``_layers.``) over ``hcg``'s
    sep group; ``strategy`` as paddle's keyword."""

    def __init__(self, layers: Layer, hcg: Any, strategy: Any = None):
        super().__init__(layers, hcg, strategy)
        broadcast_sep_parameters(layers, hcg, fuse_params=False)
        if hcg.get_data_parallel_world_size() > 1:
            broadcast_dp_parameters(layers, hcg, fuse_params=False)
