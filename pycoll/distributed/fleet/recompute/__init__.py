"""paddle's ``fleet.recompute``: recomputing a block's activations in backward instead of keeping
them (also reached as ``fleet.utils.recompute``)."""
from pycoll.distributed.fleet.recompute.recompute import (check_recompute_necessary, recompute, recompute_hybrid,
                                                          recompute_sequential, switch_rng_state_tracker)

__all__ = ["check_recompute_necessary", "recompute", "recompute_hybrid", "recompute_sequential",
           "switch_rng_state_tracker"]
