"""paddle's ``fleet.base.topology`` path: ``CommunicateTopology``, ``HybridCommunicateGroup``
and ``ParallelMode`` (pycoll's own, from ``fleet.topology``), and ``_HYBRID_PARALLEL_GROUP``,
the HybridCommunicateGroup made last (None before ``fleet.init``), read at each access."""
from typing import Any

from pycoll.distributed.fleet import topology as _topology
from pycoll.distributed.fleet.topology import CommunicateTopology, HybridCommunicateGroup
from pycoll.distributed.parallel_mode import ParallelMode

__all__ = ["CommunicateTopology", "HybridCommunicateGroup", "ParallelMode"]


def __getattr__(name: str) -> Any:
    if name == "_HYBRID_PARALLEL_GROUP":
        return _topology._HYBRID_PARALLEL_GROUP
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
