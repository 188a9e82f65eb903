"""paddle's ``fleet.meta_parallel.TensorParallel``: what ``fleet.distributed_model`` returns when
``mp_degree`` > 1 without pipeline stages."""
from __future__ import annotations

from typing import Any, Callable, Optional

from pycoll.distributed.fleet.utils.hybrid_parallel_util import (broadcast_dp_parameters, broadcast_input_data,
                                                                 broadcast_mp_parameters, broadcast_sep_parameters,
                                                                 broadcast_sharding_parameters)
from pycoll.distributed.fleet.meta_parallel.meta_parallel_base import MetaParallelBase
from pycoll.nn import Layer
from pycoll.parallel.data_parallel import check_same_model


class TensorParallel(MetaParallelBase):
    """``layers`` (its ``_layers``, so its ``state_dict`` keys start with ``_layers.``, as paddle's)
    run by the model-parallel group of ``hcg``.

    At wrap the ranks of the model-parallel group first compare the names, shapes and dtypes of
    the parameters that are not split (``is_distributed`` False: replicated on the model-parallel
    group) and of the buffers (``check_same_model``: a ValueError on every rank listing what
    differs); then those parameters and the buffers take the group's first rank's values; with sep,
    sharding or data-parallel degrees every parameter then takes its sep group's, its sharding
    group's, then its data-parallel group's, first rank's values (paddle's order). So replicated weights agree even where the ranks
    drew them from different seeds (``fleet.init`` seeds each rank's global generator at random
    when ``tensor_init_seed`` is -1, as paddle's does). Each forward first gives every rank of the
    model-parallel group its first rank's inputs (``broadcast_input_data``: tensors written in
    place), unless ``strategy``'s ``mp_configs.need_broadcast_data`` is False.

    ``grad_sync`` (pycoll's; ``fleet.distributed_model`` gives it) wraps ``layers``, after the
    model-parallel broadcast, in the DataParallel or sharded model that forward then runs through,
    so gradients are averaged over the data-parallel / sharding ranks in backward (paddle's
    HybridParallelOptimizer does that in ``step``). That wrapper's own start (a broadcast from its
    sharding group's, then its data-parallel group's, first rank) stands for the sharding and
    data-parallel broadcasts, which run here only when there is no wrapper (``grad_sync`` absent or
    returning None: nothing to average; forward then runs ``layers`` itself)."""

    def __init__(self, layers: Layer, hcg: Any, strategy: Any = None, *,
                 grad_sync: Optional[Callable[[Layer], Optional[Layer]]] = None):
        super().__init__(layers, hcg, strategy)
        if hcg.get_model_parallel_world_size() > 1:  # what the broadcast below sends must fit everywhere
            check_same_model(layers, hcg.get_model_parallel_group(), "TensorParallel", skip_distributed=True)
        broadcast_mp_parameters(layers, hcg, fuse_params=False)
        if hcg.get_sep_parallel_world_size() > 1:  # paddle's order: model, then sep, then sharding and data
            broadcast_sep_parameters(layers, hcg, fuse_params=False)
        synced = grad_sync(layers) if grad_sync is not None else None
        if synced is None:  # else the DataParallel / sharded model made the copies alike as it wrapped
            if hcg.get_sharding_parallel_world_size() > 1:
                broadcast_sharding_parameters(layers, hcg, fuse_params=False)
            if hcg.get_data_parallel_world_size() > 1:
                broadcast_dp_parameters(layers, hcg, fuse_params=False)
        object.__setattr__(self, "_grad_sync", synced)  # not a sublayer: the keys stay paddle's

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        strategy = self._strategy
        if strategy is None or strategy.hybrid_configs["mp_configs"].need_broadcast_data:
            inputs, kwargs = broadcast_input_data(self._hcg, *inputs, **kwargs)
        run = self._grad_sync if self._grad_sync is not None else self._layers
        return run(*inputs, **kwargs)
