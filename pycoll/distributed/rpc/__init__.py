"""``pycoll.distributed.rpc``: paddle's RPC API (see :mod:`pycoll.distributed.rpc.rpc`)."""
from pycoll.distributed.rpc.rpc import (get_all_worker_infos, get_current_worker_info, get_worker_info,
                                        init_rpc, rpc_async, rpc_sync, shutdown)
from pycoll.distributed.rpc.worker_info import WorkerInfo

__all__ = ["init_rpc", "shutdown", "rpc_async", "rpc_sync", "get_worker_info", "get_all_worker_infos",
           "get_current_worker_info", "WorkerInfo"]
