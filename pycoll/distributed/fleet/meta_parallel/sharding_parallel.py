"""paddle's ``fleet.meta_parallel.ShardingParallel``: what ``fleet.distributed_model`` returns
when ``sharding_degree`` > 1 and mp, pp (and sep) are 1 (paddle's ``ParallelMode.SHARDING_PARALLEL``,
data parallelism beside it or not)."""
from __future__ import annotations

from typing import Any

from pycoll.distributed.fleet.strategy import DistributedStrategy
from pycoll.distributed.sharding.group_sharded import STAGES, shard_model
from pycoll.distributed.fleet.meta_parallel.meta_parallel_base import MetaParallelBase
from pycoll.nn import Layer


class ShardingParallel(MetaParallelBase):
    """``layers`` (its ``_layers``, so its ``state_dict`` keys start with ``_layers.``, as
    paddle's) sharded over ``hcg``'s sharding group at ``strategy``'s ``sharding_configs``
    stage (1/2/3: group_sharded_parallel's os, os_g, p_g_os; gradients averaged over the
    data-parallel group too). The sharding is pycoll's ``GroupShardedModel``, which forward runs
    through: it starts every rank from the sharding group's, then the data-parallel group's,
    first rank's values (paddle's broadcasts at wrap), and averages the gradients in backward
    (paddle's optimizer does that in ``step``). ``fleet.distributed_optimizer`` steps its
    pieces. ``strategy`` None: ``DistributedStrategy()``'s defaults (stage 1)."""

    def __init__(self, layers: Layer, hcg: Any, strategy: Any = None):
        strategy = strategy if strategy is not None else DistributedStrategy()
        if not isinstance(strategy, DistributedStrategy):
            raise TypeError(f"ShardingParallel: strategy must be a DistributedStrategy, got {type(strategy).__name__}")
        stage = strategy.sharding_configs["stage"]
        if stage not in STAGES:
            raise ValueError(f"ShardingParallel: strategy.sharding_configs stage={stage!r}; it must be 1, 2 or 3")
        super().__init__(layers, hcg, strategy)
        sharded = shard_model(layers, STAGES[stage], hcg.get_sharding_parallel_group(),
                              strategy.fuse_grad_size_in_MB, dp_group=hcg.get_data_parallel_group())
        object.__setattr__(self, "_sharded", sharded)  # not a sublayer: the keys stay paddle's

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        return self._sharded(*inputs, **kwargs)

    def get_all_parameters(self, convert2cpu: bool = False) -> None:
        """Every parameter whole on every rank (stage 3 holds pieces between uses; collective)."""
        self._sharded.get_all_parameters(convert2cpu)

    def release_parameters(self) -> None:
        """Let go again of what stage 3 holds only in use."""
        self._sharded.release_parameters()
