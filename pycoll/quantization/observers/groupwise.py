"""`GroupWiseWeightObserver`: per-(group of input rows, output channel) abs-max of a 2-D weight."""
from __future__ import annotations

from typing import Optional

from pycoll._graph import no_grad
from pycoll.math_ops import abs, cast
from pycoll.reduce_ops import amax
from pycoll.search_ops import where
from pycoll.nn.layer import Layer
from pycoll.quantization.factory import ObserverFactory
from pycoll.quantization.observers._running_max import RunningMaxObserverLayer
from pycoll.tensor import Tensor


class GroupWiseWeightObserver(ObserverFactory):
    """Factory of GroupWiseWeightObserverLayer. ``group_size`` (64 or 128) is passed on to the
    layer (paddle's factory drops it, so its layers always use 128)."""

    def __init__(self, quant_bits: int = 8, group_size: int = 128) -> None:
        if group_size not in (64, 128) or isinstance(group_size, bool):
            raise ValueError(f"GroupWiseWeightObserver: group_size must be 64 or 128, got {group_size!r}")
        super().__init__(quant_bits=quant_bits, group_size=group_size)

    def _get_class(self) -> type:
        return GroupWiseWeightObserverLayer


class GroupWiseWeightObserverLayer(RunningMaxObserverLayer):
    """The scale of a weight [in, out] is [in // group_size, out]: the abs-max of each group of
    ``group_size`` input rows in each output column (an all-zero group gets 1e-8)."""

    def __init__(self, layer: Optional[Layer] = None, quant_bits: int = 8, group_size: int = 128) -> None:
        super().__init__(quant_bits)
        self.group_size = group_size

    def forward(self, inputs: Tensor) -> Tensor:
        if inputs.ndim != 2:
            raise ValueError(f"GroupWiseWeightObserverLayer: the input must be a 2-D weight, got shape {inputs.shape}")
        rows, cols = inputs.shape
        if rows % self.group_size:
            raise ValueError(f"GroupWiseWeightObserverLayer: the weight's rows ({rows}) must be a multiple of "
                             f"group_size ({self.group_size})")
        with no_grad():
            grouped = cast(inputs.detach(), "float32").reshape([rows // self.group_size, self.group_size, cols])
            abs_max = amax(abs(grouped), axis=1)
            self._max = where(abs_max == 0, abs_max + 1e-8, abs_max)
        return inputs
