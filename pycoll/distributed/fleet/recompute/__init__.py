"""paddle's ``fleet.recompute``: recomputing a block's activations in backward instead of keeping
them (also reached as ``fleet.utils.recompute``); ``recompute_hybrid`` (its own module, as in
paddle) for model-parallel blocks."""
from pycoll.distributed.fleet.recompute.recompute import (check_recompute_necessary, recompute,
                                                          recompute_sequential, switch_rng_state_tracker)
from pycoll.distributed.fleet.recompute.recompute_hybrid import recompute_hybrid

__all__ = ["check_recompute_necessary", "recompute", "recompute_hybrid", "recompute_sequential",
           "switch_rng_state_tracker"]
