"""paddle's ``flex_checkpoint.dcp.save_state_dict``: ``pycoll.distributed.checkpoint``'s saver."""
from pycoll.distributed.checkpoint.state_dict import save_state_dict

__all__ = ["save_state_dict"]
