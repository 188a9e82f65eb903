"""paddle's ``HybridParallelOptimizer``: what ``fleet.distributed_optimizer`` returns on more than
one rank, the user's optimizer as ``_inner_opt`` — or, with a sharding degree, the sharding
optimizer over it (paddle's ``DygraphShardingOptimizer``; pycoll's ``ShardedOptimizer``)."""
from __future__ import annotations

import warnings
from typing import Any, List

from pycoll.distributed.fleet.hybrid_clip import hybrid_norm_sums
from pycoll.distributed.sharding import ShardedOptimizer
from pycoll.parallel.fused import fused_allreduce_gradients, fused_allreduce_gradients_with_group
from pycoll.optimizer.update_forms import UpdateForms


class HybridParallelOptimizer(UpdateForms):
    """``optimizer`` in ``hcg``'s job under ``strategy``. Its ``grad_clip`` norms span the
    model-parallel group and, in a pipeline, every stage (``hybrid_clip``). With a sharding
    degree it steps through a ``ShardedOptimizer`` over the sharded model, which it gets from
    ``fleet.distributed_model`` (``bind``) whichever of the two is called first, as paddle
    takes them in either order (never called: see ``_average_unsharded``). With a sep degree,
    each ``step`` first averages the gradients over the data-parallel ranks and sums them over the
    sep ranks (``fused_allreduce_gradients``), as
    paddle's does: backward leaves a sep rank its own segment's share (``SegmentParallel``). The
    rest (``_learning_rate``, ``_parameter_list``, ``state_dict``, ``get_lr``...) is
    ``_inner_opt``'s."""

    def __init__(self, optimizer: Any, hcg: Any, strategy: Any):
        self._inner_opt = optimizer
        self._hcg = hcg
        self._strategy = strategy
        self._sharding_enable = hcg.get_sharding_parallel_world_size() > 1
        self._sep_enable = hcg.get_sep_parallel_world_size() > 1
        norm_sums = hybrid_norm_sums(hcg, getattr(optimizer, "_grad_clip", None),
                                     getattr(optimizer, "_parameter_list", []))
        if norm_sums is not None:
            optimizer.complete_norms_with(norm_sums)

    def __getattr__(self, name: str) -> Any:
        if name == "_inner_opt":  # not yet set (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self._inner_opt, name)

    @property
    def needs_model(self) -> bool:
        """Whether it waits for the sharded model (``bind``) before it can step."""
        return self._sharding_enable and not isinstance(self._inner_opt, ShardedOptimizer)

    def bind(self, model: Any) -> None:
        """Shard over ``model`` (what ``fleet.distributed_model`` made), when it waits for one."""
        if self.needs_model:
            offload = self._strategy.sharding_configs["optimize_offload"]
            self._inner_opt = ShardedOptimizer(self._inner_opt, model, offload=offload)

    def step(self) -> None:
        optimizer = self._inner_opt
        if self.needs_model:
            self._average_unsharded(list(optimizer._parameter_list))
        elif self._sep_enable:
            fused_allreduce_gradients(list(optimizer._parameter_list), self._hcg)
        optimizer.step()

    def _average_unsharded(self, params: List[Any]) -> None:
        """A sharding degree without ``fleet.distributed_model``: no model reduced the gradients
        in backward, so they are averaged here over the sharding ranks (and the data-parallel
        ones, and summed over sep's) and every rank updates the whole parameters. paddle's
        sharding optimizer trains so without a wrapped model; its values, whole optimizer state."""
        if not self._warned_unsharded:
            self._warned_unsharded = True
            warnings.warn(f"fleet.distributed_optimizer: sharding_degree="
                          f"{self._hcg.get_sharding_parallel_world_size()} without fleet.distributed_model(model): "
                          f"each step averages the gradients over the sharding ranks and every rank updates the "
                          f"whole parameters, keeping the whole optimizer state; wrap the model to shard it",
                          stacklevel=3)
        fused_allreduce_gradients_with_group(params, self._hcg.get_sharding_parallel_group(), bucket_size=1 << 62)
        if self._sep_enable or self._hcg.get_data_parallel_world_size() > 1:
            fused_allreduce_gradients(params, self._hcg)

    _warned_unsharded = False

    @property
    def _steps_given_grads(self) -> bool:  # sharding's step reads the reduced pieces
        return not self._sharding_enable

    def step_grads(self) -> List[Any]:
        return self._inner_opt.step_grads()

    def scale_grads(self, factor: float) -> None:
        self._inner_opt.scale_grads(factor)
