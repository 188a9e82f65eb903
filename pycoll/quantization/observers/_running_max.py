"""What the built-in observers share: a scale that is the largest magnitude seen."""
from __future__ import annotations

from typing import Optional

from pycoll.creation import zeros_like
from pycoll.quantization.base_observer import BaseObserver
from pycoll.tensor import Tensor


class RunningMaxObserverLayer(BaseObserver):
    """An observer whose ``forward`` keeps in ``_max`` the largest magnitudes seen (its subclass
    says of what: the whole tensor, each group); the scale is ``_max`` as it is the first time the
    scale is asked for (``scales()`` / ``cal_thresholds()``, paddle's), the zero point 0."""

    def __init__(self, quant_bits: int) -> None:
        super().__init__()
        self._quant_bits = quant_bits
        self._max: Optional[Tensor] = None
        self._scale: Optional[Tensor] = None
        self._zero_point: Optional[Tensor] = None

    def bit_length(self) -> int:
        return self._quant_bits

    def quant_axis(self) -> int:
        return -1

    def cal_thresholds(self) -> None:
        if self._max is None:
            raise RuntimeError(f"{type(self).__name__}: nothing has been observed yet (run calibration data first)")
        if self._scale is None:
            self._scale = self._max
        self._zero_point = zeros_like(self._scale)

    def scales(self) -> Tensor:
        if self._scale is None:
            self.cal_thresholds()
        return self._scale

    def zero_points(self) -> Tensor:
        if self._zero_point is None:
            self.cal_thresholds()
        return self._zero_point
