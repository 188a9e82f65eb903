"""paddle's ``paddle.distributed.communication.stream`` module path: the same calls as
``pycoll.distributed.stream``."""
from pycoll.distributed.stream import (all_gather, all_reduce, alltoall, alltoall_single, broadcast, gather, recv,
                                       reduce, reduce_scatter, scatter, send)

__all__ = ["all_gather", "all_reduce", "alltoall", "alltoall_single", "broadcast", "gather", "recv", "reduce",
           "reduce_scatter", "scatter", "send"]
