"""paddle's ``paddle.incubate.distributed.fleet``: ``recompute_sequential`` and
``recompute_hybrid``, the same functions as ``pycoll.distributed.fleet.recompute``'s."""
from pycoll.distributed.fleet.recompute import recompute_hybrid, recompute_sequential

__all__ = ["recompute_hybrid", "recompute_sequential"]
