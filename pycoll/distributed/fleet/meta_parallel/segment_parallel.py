"""paddle's ``fleet.meta_parallel.SegmentParallel``: the wrapper ``fleet.distributed_model`` gives
for sep (segment / sequence) parallelism, ``sep_degree > 1``. At wrap it gives every rank of the
hybrid group's sep group its first rank's parameters and buffers, then (where there are several)
of the sharding group, then of the data-parallel group, as paddle's; forward runs ``layers``.

pycoll's ``fleet.init`` refuses ``sep_degree > 1``, so its hybrid groups have no sep group and
``hcg.get_sep_parallel_group()`` says so: wrapping raises that RuntimeError, as paddle's asserts
'sep not exist' for a job without sep."""
from __future__ import annotations

from typing import Any

from pycoll.distributed.fleet.meta_parallel.meta_parallel_base import MetaParallelBase
from pycoll.distributed.fleet.utils.hybrid_parallel_util import (broadcast_dp_parameters,
                                                                 broadcast_sharding_parameters)
from pycoll.nn import Layer
from pycoll.parallel import sync_params_buffers

__all__ = ["SegmentParallel"]


class SegmentParallel(MetaParallelBase):
    """``layers`` (its ``_layers``, so ``state_dict`` keys start with ``_layers.``) over ``hcg``'s
    sep group; ``strategy`` as paddle's keyword."""

    def __init__(self, layers: Layer, hcg: Any, strategy: Any = None):
        super().__init__(layers, hcg, strategy)
        self._prepare_for_model()

    def _prepare_for_model(self) -> None:
        hcg = self._hcg
        sync_params_buffers(self._layers, hcg.get_sep_parallel_group(), hcg.get_sep_parallel_group_src_rank(),
                            is_model_parallel=False, fuse_params=False)
        if hcg.get_sharding_parallel_world_size() > 1:
            broadcast_sharding_parameters(self._layers, hcg, fuse_params=False)
        if hcg.get_data_parallel_world_size() > 1:
            broadcast_dp_parameters(self._layers, hcg, fuse_params=False)
