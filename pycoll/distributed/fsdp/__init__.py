"""paddle's ``paddle.distributed.fsdp``: ``fully_shard`` (ZeRO stage 3 on a layer, in place) and
its policies, built on ``pycoll.distributed.sharding``'s level ``p_g_os``.

    fully_shard.py     fully_shard, MixedPrecisionPolicy, OffloadPolicy: what each argument does
    takeover.py        the optimizers already built on the layer's parameters step its pieces
    full_state.py      the layer's state_dict / set_state_dict hold and load the whole parameters
"""
from pycoll.distributed.fsdp.fully_shard import MixedPrecisionPolicy, OffloadPolicy, fully_shard

__all__ = ["fully_shard", "MixedPrecisionPolicy", "OffloadPolicy"]
