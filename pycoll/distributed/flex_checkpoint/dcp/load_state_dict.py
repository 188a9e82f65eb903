"""paddle's ``flex_checkpoint.dcp.load_state_dict``: ``pycoll.distributed.checkpoint``'s loaders."""
from pycoll.distributed.checkpoint.state_dict import load_merged_state_dict, load_state_dict

__all__ = ["load_merged_state_dict", "load_state_dict"]
