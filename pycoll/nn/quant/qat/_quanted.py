"""What QuantedLinear and QuantedConv2D share: the float layer's Parameters, one quanter for the
weight and one for the input (from the layer's config; None: not quantized)."""
from __future__ import annotations

from typing import Any, List, Tuple

from pycoll.nn.layer import Layer
from pycoll.nn.quant.format import ConvertibleQuantedLayer
from pycoll.tensor import Tensor


class QuantedWeightLayer(ConvertibleQuantedLayer):
    """A layer computing with fake-quantized input and weight. It shares the float layer's weight
    and bias (the Parameters themselves), so training it trains them."""

    def __init__(self, layer: Layer, q_config: Any) -> None:
        super().__init__()
        self.weight = layer.weight
        self.bias = layer.bias
        self.weight_quanter = None if q_config.weight is None else q_config.weight._instance(layer)
        self.activation_quanter = None if q_config.activation is None else q_config.activation._instance(layer)

    def _quantized(self, input: Tensor) -> Tuple[Tensor, Tensor]:
        """(the input, the weight) through their quanters."""
        x = input if self.activation_quanter is None else self.activation_quanter(input)
        weight = self.weight if self.weight_quanter is None else self.weight_quanter(self.weight)
        return x, weight

    def weights_to_quanters(self) -> List[Tuple[str, str]]:
        return [("weight", "weight_quanter")]

    def activation_quanters(self) -> List[str]:
        return ["activation_quanter"]
