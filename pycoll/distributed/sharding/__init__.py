"""``pycoll.distributed.sharding``: paddle's ``group_sharded_parallel`` (ZeRO-style sharding)
built on DataParallel and the collectives."""
from pycoll.distributed.sharding.group_sharded import (LEVELS, ShardedOptimizer, group_sharded_parallel,
                                                       save_group_sharded_model)

__all__ = ["LEVELS", "ShardedOptimizer", "group_sharded_parallel", "save_group_sharded_model"]
