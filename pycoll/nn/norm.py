"""LayerNorm."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np

from pycoll.nn import functional as F
from pycoll.nn.initializer import Constant
from pycoll.nn.layer import Layer
from pycoll.tensor import Tensor


class LayerNorm(Layer):
    """Normalises over the trailing `normalized_shape` dims, then scales by weight (ones) and
    shifts by bias (zeros); both hold prod(normalized_shape) values, as in paddle. Pass
    weight_attr=False / bias_attr=False to drop them."""

    def __init__(self, normalized_shape: Union[int, Sequence[int]], epsilon: float = 1e-5,
                 weight_attr: Any = None, bias_attr: Any = None, name: Optional[str] = None):
        super().__init__(name)
        shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
        if not shape or not all(isinstance(n, int) and n > 0 for n in shape):
            raise ValueError(f"normalized_shape must be a positive int or a list of them, "
                             f"got {normalized_shape!r}")
        self.normalized_shape = shape
        self.epsilon = epsilon
        size = [int(np.prod(shape))]
        self.weight = self.create_parameter(size, attr=weight_attr, default_initializer=Constant(1.0))
        self.bias = self.create_parameter(size, attr=bias_attr, is_bias=True)

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.epsilon)

    def extra_repr(self) -> str:
        return f"normalized_shape={self.normalized_shape}, epsilon={self.epsilon}"
