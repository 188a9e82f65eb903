"""paddle's ``flex_checkpoint.dcp``: ``sharded_weight``, ``load_state_dict`` and
``save_state_dict``, each the module path of ``pycoll.distributed.checkpoint``'s objects."""
from pycoll.distributed.flex_checkpoint.dcp import load_state_dict, save_state_dict, sharded_weight

__all__ = ["load_state_dict", "save_state_dict", "sharded_weight"]
