"""paddle's ``fleet.meta_optimizers.dygraph_optimizer`` path: ``HybridParallelOptimizer`` and,
as ``DygraphShardingOptimizer``, pycoll's sharding optimizer (what a HybridParallelOptimizer's
``_inner_opt`` is under a sharding degree)."""
from pycoll.distributed.fleet.meta_optimizers.hybrid_parallel_optimizer import HybridParallelOptimizer
from pycoll.distributed.fleet.meta_optimizers.dygraph_optimizer import hybrid_parallel_optimizer
from pycoll.distributed.sharding import ShardedOptimizer as DygraphShardingOptimizer

__all__ = ["DygraphShardingOptimizer", "HybridParallelOptimizer", "hybrid_parallel_optimizer"]
