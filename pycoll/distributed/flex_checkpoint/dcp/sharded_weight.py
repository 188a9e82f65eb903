"""paddle's ``flex_checkpoint.dcp.sharded_weight``: ``pycoll.distributed.checkpoint.sharded_weight``'s objects."""
from pycoll.distributed.checkpoint.sharded_weight import (ShardedStateDict, ShardedWeight, build_sharded_state_dict,
                                                          shard_weight)

__all__ = ["ShardedStateDict", "ShardedWeight", "build_sharded_state_dict", "shard_weight"]
