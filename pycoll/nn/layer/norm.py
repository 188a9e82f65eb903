"""paddle.nn.layer.norm: the same objects as pycoll.nn's, at the module path paddle's docstrings import from.

SyncBatchNorm communicates, so it lives with the parallel layers: it is looked up through
pycoll.nn on first access, as pycoll.nn itself does."""
from typing import Any, List

from pycoll.nn.image_layers import LocalResponseNorm
from pycoll.nn.norm import (BatchNorm, BatchNorm1D, BatchNorm2D, BatchNorm3D, GroupNorm, InstanceNorm1D,
                            InstanceNorm2D, InstanceNorm3D, LayerNorm)
from pycoll.nn.weight_norms import SpectralNorm


def __getattr__(name: str) -> Any:
    if name == "SyncBatchNorm":
        import pycoll.nn
        return pycoll.nn.SyncBatchNorm
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> List[str]:  # the names __getattr__ serves too
    return sorted(set(globals()) | set(__all__) | {"SyncBatchNorm"})


__all__ = ["BatchNorm", "BatchNorm1D", "BatchNorm2D", "BatchNorm3D", "GroupNorm", "InstanceNorm1D", "InstanceNorm2D",
           "InstanceNorm3D", "LayerNorm", "LocalResponseNorm", "SpectralNorm"]
