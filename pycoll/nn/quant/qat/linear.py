"""`QuantedLinear`: a Linear whose input and weight pass through fake quanters."""
from __future__ import annotations

from pycoll.nn.functional import linear
from pycoll.nn.quant.qat._quanted import QuantedWeightLayer
from pycoll.tensor import Tensor


class QuantedLinear(QuantedWeightLayer):
    """Linear's computation on fake-quantized input and weight (see QuantedWeightLayer)."""

    def forward(self, input: Tensor) -> Tensor:
        x, weight = self._quantized(input)
        return linear(x, weight, self.bias)
