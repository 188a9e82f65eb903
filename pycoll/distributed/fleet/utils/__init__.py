"""fleet's utilities under paddle's paths: ``recompute``, ``hybrid_parallel_util``, ``log_util``,
``mix_precision_utils``, ``sequence_parallel_utils``, ``timer_helper`` and the file-system clients ``LocalFS`` / ``HDFSClient``."""
import importlib
from typing import Any, List

from pycoll.distributed.fleet.recompute import recompute
from pycoll.distributed.fleet.utils import hybrid_parallel_util, log_util, timer_helper
from pycoll.distributed.fleet.utils.fs import HDFSClient, LocalFS

__all__ = ["HDFSClient", "LocalFS", "hybrid_parallel_util", "log_util", "mix_precision_utils", "recompute",
           "sequence_parallel_utils", "timer_helper"]

_LAZY = ("mix_precision_utils", "sequence_parallel_utils")  # they use fleet's hcg, whose module imports this package


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> List[str]:  # the names __getattr__ serves too
    return sorted(set(globals()) | set(__all__) | set(_LAZY))
