"""paddle's distributed checkpoints, reached as ``pycoll.distributed.<name>``: each rank saves
the pieces of a state dict it holds, and any layout loads them back (see ``state_dict.py``).

    layout.py          a state dict's pieces and where they meet
    paddle_metadata.py the ``{id}.metadata`` file in paddle's format (paddle's classes mirrored)
    sharded_weight.py  ShardedWeight: a block of a whole tensor split by hand (paddle's flex checkpoint)
    state_dict.py      save_state_dict, load_state_dict, load_merged_state_dict
"""
from pycoll.distributed.checkpoint.sharded_weight import (ShardedStateDict, ShardedWeight, build_sharded_state_dict,
                                                          shard_weight)
from pycoll.distributed.checkpoint.state_dict import load_merged_state_dict, load_state_dict, save_state_dict

__all__ = ["ShardedStateDict", "ShardedWeight", "build_sharded_state_dict", "load_merged_state_dict",
           "load_state_dict", "save_state_dict", "shard_weight"]
