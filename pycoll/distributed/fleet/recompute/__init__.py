"""paddle's ``fleet.recompute``: recomputing a block's activations in backward instead of keeping
them (also reached as ``fleet.utils.recompute``)."""
from pycoll.distributed.fleet.recompute.recompute import recompute, recompute_hybrid, recompute_sequential

__all__ = ["recompute", "recompute_hybrid", "recompute_sequential"]
