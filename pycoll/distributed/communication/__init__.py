"""paddle's ``paddle.distributed.communication`` module path: the communication calls (the same
objects as ``pycoll.distributed.<name>``) and their ``stream`` variants; paddle's submodules of
the calls (``from paddle.distributed.communication.reduce import ReduceOp``) answer with them."""
import sys
from typing import Any

from pycoll.distributed import (P2POp, ReduceOp, all_gather, all_gather_object, all_reduce, alltoall,
                                alltoall_single, barrier, batch_isend_irecv, broadcast, broadcast_object_list,
                                destroy_process_group, gather, get_backend, get_group, irecv, is_initialized,
                                isend, recv, recv_object_list, reduce, reduce_scatter, scatter, scatter_object_list,
                                send, send_object_list, wait)
from pycoll.distributed.communication import stream
from pycoll._module_paths import install_paths

all_to_all = alltoall  # paddle's other name for it

__all__ = ["P2POp", "ReduceOp", "all_gather", "all_gather_object", "all_reduce", "all_to_all", "alltoall",
           "alltoall_single", "barrier", "batch_isend_irecv", "broadcast", "broadcast_object_list",
           "destroy_process_group", "gather", "get_backend", "get_group", "irecv", "is_initialized", "isend", "recv",
           "recv_object_list", "reduce", "reduce_scatter", "scatter", "scatter_object_list", "send",
           "send_object_list", "stream", "wait"]


def _member(module: str, name: str) -> Any:
    """What paddle's submodule ``module`` of this package holds as ``name``: this package's."""
    if name in __all__:
        return globals()[name]
    raise AttributeError(f"module {module!r} has no attribute {name!r}")


install_paths(sys.modules[__name__], ("all_gather", "all_reduce", "all_to_all", "batch_isend_irecv", "broadcast",
                                      "gather", "recv", "reduce", "reduce_scatter", "scatter", "send"),
              _member, "pycoll.distributed.communication's calls and classes of those names.")
