"""``paddle.incubate.nn.FusedLinear``: x @ weight + bias through ``fused_linear``."""
from __future__ import annotations

from typing import Any, Optional

from pycoll.incubate.nn.functional import fused_linear
from pycoll.nn.attention import positive_int
from pycoll.nn.layer import Layer
from pycoll.tensor import Tensor


class FusedLinear(Layer):
    """weight [in_features, out_features] ([out, in] with transpose_weight, as paddle stores it
    then) and bias [out_features] (bias_attr=False: none)."""

    def __init__(self, in_features: int, out_features: int, weight_attr: Any = None, bias_attr: Any = None,
                 transpose_weight: bool = False, name: Optional[str] = None) -> None:
        super().__init__()
        positive_int(in_features, "in_features", "FusedLinear")
        positive_int(out_features, "out_features", "FusedLinear")
        shape = [out_features, in_features] if transpose_weight else [in_features, out_features]
        self.weight = self.create_parameter(shape, attr=weight_attr)
        self.bias = self.create_parameter([out_features], attr=bias_attr, is_bias=True)
        self.transpose_weight = transpose_weight
        self.name = name

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 (paddle's argument name)
        return fused_linear(input, self.weight, self.bias, self.transpose_weight, self.name)
