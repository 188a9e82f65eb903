"""Activation layers."""
from __future__ import annotations

from typing import Optional

from pycoll.nn import functional as F
from pycoll.nn.layer import Layer
from pycoll.tensor import Tensor


class ReLU(Layer):
    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x)


class Tanh(Layer):
    def forward(self, x: Tensor) -> Tensor:
        return F.tanh(x)


class Sigmoid(Layer):
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
