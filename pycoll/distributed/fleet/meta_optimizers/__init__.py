"""paddle's ``fleet.meta_optimizers``: the optimizers ``fleet.distributed_optimizer`` wraps the
user's in (``HybridParallelOptimizer``, sharding's ``DygraphShardingOptimizer``, and
``GradientMergeOptimizer``, which pycoll applies in dygraph too), for isinstance checks."""
from pycoll.distributed.fleet.gradient_merge import GradientMergeOptimizer
from pycoll.distributed.fleet.meta_optimizers import dygraph_optimizer
from pycoll.distributed.fleet.meta_optimizers.dygraph_optimizer import (DygraphShardingOptimizer,
                                                                        HybridParallelOptimizer)

__all__ = ["DygraphShardingOptimizer", "GradientMergeOptimizer", "HybridParallelOptimizer", "dygraph_optimizer"]
