"""paddle.nn.Bilinear: out = x1 W x2 + b with weight [out_features, in1_features, in2_features]
and bias [1, out_features]."""
from __future__ import annotations

from typing import Any, Optional

from pycoll.nn._bilinear_functional import bilinear
from pycoll.nn.layer import Layer
from pycoll.tensor import Tensor


class Bilinear(Layer):
    """Each output feature o is x1 W[o] x2 + b[o]."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, weight_attr: Any = None,
                 bias_attr: Any = None, name: Optional[str] = None):
        super().__init__()
        self._named(name)
        for arg, value in (("in1_features", in1_features), ("in2_features", in2_features),
                           ("out_features", out_features)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Bilinear: {arg} must be a positive int, got {value!r}")
        self._in1_features, self._in2_features, self._out_features = in1_features, in2_features, out_features
        self.weight = self.create_parameter([out_features, in1_features, in2_features], attr=weight_attr)
        self.bias = self.create_parameter([1, out_features], attr=bias_attr, is_bias=True)

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return bilinear(x1, x2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self._in1_features}, in2_features={self._in2_features}, "
                f"out_features={self._out_features}, dtype={self._dtype}")
