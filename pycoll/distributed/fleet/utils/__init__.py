"""fleet's utilities under paddle's paths."""
from pycoll.distributed.fleet.recompute import recompute
from pycoll.distributed.fleet.utils import hybrid_parallel_util

__all__ = ["hybrid_parallel_util", "recompute"]
