"""paddle's ``fleet.base`` package path: ``topology`` (the hybrid grid and its groups),
``role_maker`` and ``distributed_strategy``, each holding pycoll's own objects."""
from pycoll.distributed.fleet.base import distributed_strategy, role_maker, topology

__all__ = ["distributed_strategy", "role_maker", "topology"]
