"""paddle's ``paddle.distributed.communication.group`` path: ``Group`` and the group queries
and waits paddle defines there (``is_initialized``, ``destroy_process_group``, ``get_group``,
``wait``, ``barrier``, ``get_backend``), the same objects as ``pycoll.distributed``'s."""
from pycoll.distributed import Group, barrier, destroy_process_group, get_backend, get_group, is_initialized, wait

__all__ = ["Group", "barrier", "destroy_process_group", "get_backend", "get_group", "is_initialized", "wait"]
