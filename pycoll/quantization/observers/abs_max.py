"""`AbsmaxObserver`: per-tensor abs-max, for PTQ."""
from __future__ import annotations

from typing import Optional

from pycoll._graph import no_grad
from pycoll.elementwise_ops import maximum
from pycoll.math_ops import abs, max
from pycoll.nn.layer import Layer
from pycoll.quantization.factory import ObserverFactory
from pycoll.quantization.observers._running_max import RunningMaxObserverLayer
from pycoll.tensor import Tensor


class AbsmaxObserver(ObserverFactory):
    """Factory of AbsmaxObserverLayer: the scale is the largest |x| seen over all calls (a 0-d
    tensor; ``quant_bits``-bit symmetric quantization, zero point 0)."""

    def __init__(self, quant_bits: int = 8) -> None:
        if isinstance(quant_bits, bool) or not isinstance(quant_bits, int) or not 2 <= quant_bits <= 16:
            raise ValueError(f"AbsmaxObserver: quant_bits must be an int in [2, 16], got {quant_bits!r}")
        super().__init__(quant_bits=quant_bits)

    def _get_class(self) -> type:
        return AbsmaxObserverLayer


class AbsmaxObserverLayer(RunningMaxObserverLayer):
    """Records the running abs-max of its input and passes the input on unchanged (the scale: see
    RunningMaxObserverLayer)."""

    def __init__(self, layer: Optional[Layer] = None, quant_bits: int = 8) -> None:
        super().__init__(quant_bits)

    def forward(self, input: Tensor) -> Tensor:
        with no_grad():
            abs_max = max(abs(input.detach()))
            self._max = abs_max if self._max is None else maximum(abs_max, self._max.astype(input.dtype))
        return input
