"""`AbsmaxObserver`: per-tensor abs-max, for PTQ."""
from __future__ import annotations

from typing import Optional

from pycoll._graph import no_grad
from pycoll.creation import zeros_like
from pycoll.elementwise_ops import maximum
from pycoll.math_ops import abs, max
from pycoll.nn.layer import Layer
from pycoll.quantization.base_observer import BaseObserver
from pycoll.quantization.factory import ObserverFactory
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


class AbsmaxObserverLayer(BaseObserver):
    """Records the running abs-max of its input and passes the input on unchanged. The scale is
    fixed the first time it is asked for (``scales()`` / ``cal_thresholds()``), as paddle's."""

    def __init__(self, layer: Optional[Layer] = None, quant_bits: int = 8) -> None:
        super().__init__()
        self._quant_bits = quant_bits
        self._max: Optional[Tensor] = None
        self._scale: Optional[Tensor] = None
        self._zero_point: Optional[Tensor] = None

    def forward(self, input: Tensor) -> Tensor:
        with no_grad():
            abs_max = max(abs(input.detach()))
            self._max = abs_max if self._max is None else maximum(abs_max, self._max.astype(input.dtype))
        return input

    def bit_length(self) -> int:
        return self._quant_bits

    def quant_axis(self) -> int:
        return -1

    def cal_thresholds(self) -> None:
        if self._max is None:
            raise RuntimeError("AbsmaxObserverLayer: nothing has been observed yet (run calibration data first)")
        if self._scale is None:
            self._scale = self._max
        self._zero_point = zeros_like(self._scale)

    def scales(self) -> Tensor:
        if self._scale is None:
            self.cal_thresholds()
        return self._scale

    def zero_points(self) -> Optional[Tensor]:
        return self._zero_point
