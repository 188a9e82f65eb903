"""paddle's ``paddle.distributed.communication`` module path: the communication calls (the same
objects as ``pycoll.distributed.<name>``) and their ``stream`` variants."""
from pycoll.distributed import (P2POp, ReduceOp, all_gather, all_gather_object, all_reduce, alltoall,
                                alltoall_single, barrier, batch_isend_irecv, broadcast, broadcast_object_list,
                                destroy_process_group, gather, get_backend, get_group, irecv, is_initialized,
                                isend, recv, recv_object_list, reduce, reduce_scatter, scatter, scatter_object_list,
                                send, send_object_list, wait)
from pycoll.distributed.communication import stream

all_to_all = alltoall  # paddle's other name for it

__all__ = ["P2POp", "ReduceOp", "all_gather", "all_gather_object", "all_reduce", "all_to_all", "alltoall",
           "alltoall_single", "barrier", "batch_isend_irecv", "broadcast", "broadcast_object_list",
           "destroy_process_group", "gather", "get_backend", "get_group", "irecv", "is_initialized", "isend", "recv",
           "recv_object_list", "reduce", "reduce_scatter", "scatter", "scatter_object_list", "send",
           "send_object_list", "stream", "wait"]
