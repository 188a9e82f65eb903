"""paddle's ``fleet.base`` package path: ``topology`` (the hybrid grid and its groups)."""
from pycoll.distributed.fleet.base import topology

__all__ = ["topology"]
