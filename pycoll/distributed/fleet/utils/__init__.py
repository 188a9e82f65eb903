"""fleet's utilities under paddle's paths: ``recompute``, ``hybrid_parallel_util``, ``log_util``
and the file-system clients ``LocalFS`` / ``HDFSClient``."""
from pycoll.distributed.fleet.recompute import recompute
from pycoll.distributed.fleet.utils import hybrid_parallel_util, log_util
from pycoll.distributed.fleet.utils.fs import HDFSClient, LocalFS

__all__ = ["HDFSClient", "LocalFS", "hybrid_parallel_util", "log_util", "recompute"]
