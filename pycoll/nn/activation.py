"""Activation layers (paddle.nn names); the functions are in `pycoll.nn.functional`."""
from __future__ import annotations

from typing import Optional

from pycoll.nn import functional as F
from pycoll.nn.layer import Layer
from pycoll.tensor import Tensor


class _Plain(Layer):
    """An activation whose only argument is paddle's `name`."""

    def __init__(self, name: Optional[str] = None):
        super().__init__(name)


class ReLU(_Plain):
    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x)


class Tanh(_Plain):
    def forward(self, x: Tensor) -> Tensor:
        return F.tanh(x)


class Sigmoid(_Plain):
    def forward(self, x: Tensor) -> Tensor:
        return F.sigmoid(x)


class GELU(Layer):
    def __init__(self, approximate: bool = False, name: Optional[str] = None):
        super().__init__(name)
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, self.approximate)


class Softmax(Layer):
    def __init__(self, axis: int = -1, name: Optional[str] = None):
        super().__init__(name)
        self.axis = axis

    def forward(self, x: Tensor) -> Tensor:
        return F.softmax(x, self.axis)


class LeakyReLU(Layer):
    def __init__(self, negative_slope: float = 0.01, name: Optional[str] = None):
        super().__init__(name)
        self.negative_slope = negative_slope

    def forward(self, x: Tensor) -> Tensor:
        return F.leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class Silu(Layer):
    def __init__(self, inplace: bool = False, name: Optional[str] = None):
        super().__init__(name)
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return F.silu(x)

    def extra_repr(self) -> str:
        return f"inplace={self.inplace}"


class ELU(Layer):
    def __init__(self, alpha: float = 1.0, name: Optional[str] = None):
        super().__init__(name)
        self.alpha = alpha

    def forward(self, x: Tensor) -> Tensor:
        return F.elu(x, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"


class Softplus(Layer):
    def __init__(self, beta: float = 1, threshold: float = 20, name: Optional[str] = None):
        super().__init__(name)
        self.beta, self.threshold = beta, threshold

    def forward(self, x: Tensor) -> Tensor:
        return F.softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Hardswish(_Plain):
    def forward(self, x: Tensor) -> Tensor:
        return F.hardswish(x)
