"""`QuantedLinear`: a Linear whose input and weight pass through fake quanters."""
from __future__ import annotations

from typing import Any

from pycoll.nn.functional import linear
from pycoll.nn.layer import Layer
from pycoll.nn.quant.format import ConvertibleQuantedLayer
from pycoll.tensor import Tensor


class QuantedLinear(ConvertibleQuantedLayer):
    """Linear's computation on fake-quantized input and weight. It shares the Linear's weight and
    bias (the Parameters themselves), so training it trains them."""

    def __init__(self, layer: Layer, q_config: Any) -> None:
        super().__init__()
        self.weight = layer.weight
        self.bias = layer.bias
        self.weight_quanter = None if q_config.weight is None else q_config.weight._instance(layer)
        self.activation_quanter = None if q_config.activation is None else q_config.activation._instance(layer)

    def forward(self, input: Tensor) -> Tensor:
        x = input if self.activation_quanter is None else self.activation_quanter(input)
        weight = self.weight if self.weight_quanter is None else self.weight_quanter(self.weight)
        return linear(x, weight, self.bias)

    def weights_to_quanters(self) -> list:
        return [("weight", "weight_quanter")]

    def activation_quanters(self) -> list:
        return ["activation_quanter"]
