"""paddle's distributed checkpoints, reached as ``pycoll.distributed.<name>``: each rank saves
the pieces of a state dict it holds, and any layout loads them back (see ``state_dict.py``).

    layout.py      a state dict's pieces and where they meet
    state_dict.py  save_state_dict, load_state_dict, load_merged_state_dict
"""
from pycoll.distributed.checkpoint.state_dict import load_merged_state_dict, load_state_dict, save_state_dict

__all__ = ["load_merged_state_dict", "load_state_dict", "save_state_dict"]
