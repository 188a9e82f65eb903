"""paddle.sparse.nn: layers over `pycoll.sparse.nn.functional` (the activations here, the
convolutions, pooling and BatchNorm in `pycoll.sparse.nn.layers`). SyncBatchNorm communicates, so
it lives with the parallel layers: `pycoll.sparse.nn.SyncBatchNorm` imports it on first access."""
from __future__ import annotations

from typing import Any, List, Optional

from pycoll.nn.layer import Layer
from pycoll.sparse.nn import functional
from pycoll.sparse.nn.functional import leaky_relu, relu, relu6, softmax
from pycoll.sparse.nn.layers import BatchNorm, Conv2D, Conv3D, MaxPool3D, SubmConv2D, SubmConv3D
from pycoll.sparse.tensor import SparseTensor


class ReLU(Layer):
    """`functional.relu` as a layer."""

    def __init__(self, name: Optional[str] = None):
        super().__init__()
        self._named(name)

    def forward(self, x: SparseTensor) -> SparseTensor:
        return relu(x)


class ReLU6(Layer):
    """`functional.relu6` as a layer."""

    def __init__(self, name: Optional[str] = None):
        super().__init__()
        self._named(name)

    def forward(self, x: SparseTensor) -> SparseTensor:
        return relu6(x)


class LeakyReLU(Layer):
    """`functional.leaky_relu` as a layer."""

    def __init__(self, negative_slope: float = 0.01, name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self._negative_slope = negative_slope

    def forward(self, x: SparseTensor) -> SparseTensor:
        return leaky_relu(x, self._negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self._negative_slope}"


class Softmax(Layer):
    """`functional.softmax` as a layer (any axis of a COO x, the last of a CSR one)."""

    def __init__(self, axis: int = -1, name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self._axis = axis

    def forward(self, x: SparseTensor) -> SparseTensor:
        return softmax(x, self._axis)

    def extra_repr(self) -> str:
        return f"axis={self._axis}"


def __getattr__(name: str) -> Any:
    if name == "SyncBatchNorm":
        from pycoll.parallel.sparse_sync_batch_norm import SyncBatchNorm
        return SyncBatchNorm
    raise AttributeError(f"module 'pycoll.sparse.nn' has no attribute {name!r}")


def __dir__() -> List[str]:  # the names __getattr__ serves too
    return sorted(set(globals()) | set(__all__))


__all__ = ["ReLU", "ReLU6", "LeakyReLU", "Softmax", "BatchNorm", "Conv2D", "Conv3D", "SubmConv2D", "SubmConv3D",
           "MaxPool3D", "SyncBatchNorm", "functional"]
