"""paddle's ``fleet.meta_parallel.SegmentParallel``: the wrapper ``fleet.distributed_model`` gives
for sep (segment / sequence) parallelism, ``sep_degree > 1`` without model parallelism: the ranks
of a sep group hold the same parameters and each runs its own segment of every sequence (the
script splits the sequence and exchanges what attention needs over ``hcg.get_sep_parallel_group()``).

At wrap it gives every rank of the hybrid group's sep group its first rank's parameters and
buffers, then (where there are several) of the data-parallel group, as paddle's. Gradients are
averaged over the data-parallel ranks and summed over the sep ranks (each rank's backward gave its
own segment's share), paddle's ``fused_allreduce_gradients`` with sep: pycoll does it in backward,
through ``SepGradSync`` (DataParallel over the data x sep group), where paddle's
``HybridParallelOptimizer`` does it in ``step``."""
from __future__ import annotations

from typing import Any, Callable, Optional

from pycoll.distributed.fleet.meta_parallel.meta_parallel_base import MetaParallelBase
from pycoll.distributed.fleet.utils.hybrid_parallel_util import broadcast_dp_parameters, broadcast_sep_parameters
from pycoll.nn import Layer
from pycoll.parallel import DataParallel

__all__ = ["SegmentParallel"]


class SepGradSync(DataParallel):
    """DataParallel over ``hcg``'s data x sep group whose gradients are summed over it and scaled
    by 1 / dp_degree: averaged over the data-parallel ranks, summed over the sep ranks. Buckets as
    ``strategy`` says (``fuse_grad_size_in_MB``...), as fleet's DataParallel."""

    def __init__(self, layers: Layer, hcg: Any, strategy: Any):
        self.__dict__["_grad_scale"] = 1.0 / hcg.get_data_parallel_world_size()  # read as the Reducer is built
        super().__init__(layers, comm_buffer_size=strategy.fuse_grad_size_in_MB,
                         last_comm_buffer_size=strategy.last_comm_group_size_MB,
                         find_unused_parameters=strategy.find_unused_parameters,
                         group=hcg.get_dp_sep_parallel_group())

    def _reducer_options(self) -> dict:
        return {"grad_scale": self._grad_scale}


class SegmentParallel(MetaParallelBase):
    """``layers`` (its ``_layers``, so ``state_dict`` keys start with ``_layers.``) over ``hcg``'s
    sep group; ``strategy`` as paddle's keyword. ``grad_sync`` (pycoll's; ``fleet.distributed_model``
    gives it, as it does TensorParallel's) wraps ``layers`` after the sep broadcast in the
    ``SepGradSync`` that forward then runs through (its own start broadcasts over the data x sep
    group, standing for the data-parallel broadcast)."""

    def __init__(self, layers: Layer, hcg: Any, strategy: Any = None, *,
                 grad_sync: Optional[Callable[[Layer], Optional[Layer]]] = None):
        super().__init__(layers, hcg, strategy)
        broadcast_sep_parameters(layers, hcg, fuse_params=False)
        synced = grad_sync(layers) if grad_sync is not None else None
        if synced is None and hcg.get_data_parallel_world_size() > 1:
            broadcast_dp_parameters(layers, hcg, fuse_params=False)
        object.__setattr__(self, "_grad_sync", synced)  # not a sublayer: the keys stay paddle's

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        run = self._grad_sync if self._grad_sync is not None else self._layers
        return run(*inputs, **kwargs)
