"""``pycoll.distributed.sharding``: paddle's ``group_sharded_parallel`` (ZeRO-style sharding of
optimizer state, gradients and parameters) built on DataParallel and the collectives."""
from pycoll.distributed.sharding.group_sharded import (LEVELS, group_sharded_parallel,
                                                       save_group_sharded_model)
from pycoll.distributed.sharding.model import GroupShardedModel
from pycoll.distributed.sharding.optimizer import ShardedOptimizer

__all__ = ["LEVELS", "GroupShardedModel", "ShardedOptimizer", "group_sharded_parallel",
           "save_group_sharded_model"]
