"""paddle's ``paddle.distributed.auto_parallel.api`` module path: the same functions as
``pycoll.distributed``'s (its examples call ``dist.auto_parallel.api.dtensor_from_local``)."""
from pycoll.distributed.auto_parallel.dist_model import DistModel, to_static
from pycoll.distributed.auto_parallel.dtensor import dtensor_from_fn, dtensor_from_local, reshard, shard_tensor
from pycoll.distributed.auto_parallel.layers import shard_layer
from pycoll.distributed.auto_parallel.loader import ShardDataloader, shard_dataloader
from pycoll.distributed.auto_parallel.local import LocalLayer, dtensor_to_local, local_map, unshard_dtensor
from pycoll.distributed.auto_parallel.optimizer import (ShardingStage1, ShardingStage2, ShardingStage3,
                                                        shard_optimizer)

__all__ = ["DistModel", "LocalLayer", "ShardDataloader", "ShardingStage1", "ShardingStage2", "ShardingStage3", "dtensor_from_fn",
           "dtensor_from_local", "dtensor_to_local", "local_map", "reshard", "shard_dataloader", "shard_layer", "shard_optimizer", "shard_tensor",
           "to_static", "unshard_dtensor"]
