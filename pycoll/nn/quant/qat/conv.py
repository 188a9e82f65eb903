"""`QuantedConv2D`: a Conv2D whose input and weight pass through fake quanters."""
from __future__ import annotations

from typing import Any

from pycoll.nn.functional import conv2d, pad
from pycoll.nn.layer import Layer
from pycoll.nn.quant.qat._quanted import QuantedWeightLayer
from pycoll.tensor import Tensor


class QuantedConv2D(QuantedWeightLayer):
    """Conv2D's computation (its geometry and padding mode) on fake-quantized input and weight (see
    QuantedWeightLayer)."""

    def __init__(self, layer: Layer, q_config: Any) -> None:
        super().__init__(layer, q_config)
        self._groups = layer._groups
        self._stride = layer._stride
        self._padding = layer._padding
        self._padding_mode = layer._padding_mode
        self._dilation = layer._dilation
        self._data_format = layer._data_format

    def forward(self, input: Tensor) -> Tensor:
        x, weight = self._quantized(input)
        padding = self._padding
        if self._padding_mode != "zeros":  # as Conv2D: pad first, then convolve unpadded
            x = pad(x, [self._padding] * 4, mode=self._padding_mode, data_format=self._data_format)
            padding = 0
        return conv2d(x, weight, self.bias, self._stride, padding, self._dilation, self._groups, self._data_format)
