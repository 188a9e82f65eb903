"""`FakeQuanterWithAbsMaxObserver`: moving-average abs-max scale, simulated quantization."""
from __future__ import annotations

from typing import Any, Optional

from pycoll._graph import no_grad
from pycoll.math_ops import abs, max
from pycoll.nn.initializer import Constant
from pycoll.nn.layer import Layer
from pycoll.nn.parameter import ParamAttr
from pycoll.quantization._fake_quant import fake_quant_dequant
from pycoll.quantization.base_quanter import BaseQuanter
from pycoll.quantization.factory import QuanterFactory
from pycoll.tensor import Tensor
from pycoll.utils import unique_name


class FakeQuanterWithAbsMaxObserver(QuanterFactory):
    """Factory of FakeQuanterWithAbsMaxObserverLayer: symmetric ``bit_length``-bit quantization
    whose scale is a moving average of the tensor's abs-max.

    In training each call updates ``state = rate * state + 1``, ``accum = rate * accum + max|x|``,
    ``scale = accum / state`` and returns ``round(x / scale * r) * scale / r`` with
    ``r = 2 ** (bit_length - 1) - 1`` (x clipped to [-scale, scale] first); in eval the stored
    scale is used and nothing is updated. The gradient is straight-through.
    """

    def __init__(self, moving_rate: float = 0.9, bit_length: int = 8, dtype: str = "float32",
                 name: Optional[str] = None) -> None:
        if isinstance(moving_rate, bool) or not isinstance(moving_rate, (int, float)) or not 0 <= moving_rate <= 1:
            raise ValueError(f"FakeQuanterWithAbsMaxObserver: moving_rate must be a number in [0, 1], "
                             f"got {moving_rate!r}")
        if isinstance(bit_length, bool) or not isinstance(bit_length, int) or not 2 <= bit_length <= 16:
            raise ValueError(f"FakeQuanterWithAbsMaxObserver: bit_length must be an int in [2, 16], "
                             f"got {bit_length!r}")
        super().__init__(name=name, moving_rate=moving_rate, bit_length=bit_length, dtype=dtype)

    def _get_class(self) -> type:
        return FakeQuanterWithAbsMaxObserverLayer


class FakeQuanterWithAbsMaxObserverLayer(BaseQuanter):
    """The quanter layer. Its ``_scale`` (0.001), ``_state`` (1, as ``_state_value``) and ``_accum`` (1) are
    non-trainable parameters, paddle's initial values, so they are saved with the model."""

    def __init__(self, layer: Optional[Layer] = None, name: Optional[str] = None, moving_rate: float = 0.9,
                 bit_length: int = 8, dtype: str = "float32") -> None:
        super().__init__()
        self._moving_rate = moving_rate
        self._bit_length = bit_length
        self._scale = self._state_param(name, "scale", 0.001, dtype)
        # registered as "_state" (paddle's state_dict key) but held as _state_value: Layer._state is a method
        self._state_value = self._state_param(name, "state", 1.0, dtype)
        self._parameters["_state"] = self._parameters.pop("_state_value")
        self._accum = self._state_param(name, "accum", 1.0, dtype)

    def _state_param(self, name: Optional[str], kind: str, value: float, dtype: str) -> Any:
        prefix = f"{name}.{kind}" if name else f"quant_dequant.{kind}"
        attr = ParamAttr(name=unique_name.generate(prefix), initializer=Constant(value), trainable=False)
        return self.create_parameter([1], attr=attr, dtype=dtype)

    def forward(self, input: Tensor) -> Tensor:
        if self.training:
            with no_grad():
                rate = self._moving_rate
                state = self._state_value * rate + 1.0
                accum = self._accum * rate + max(abs(input.detach())).astype(self._accum.dtype).reshape([1])
                self._state_value.set_value(state)
                self._accum.set_value(accum)
                self._scale.set_value(accum / state)
        return fake_quant_dequant(input, self._scale, self._bit_length)

    def bit_length(self) -> int:
        return self._bit_length

    def quant_axis(self) -> int:
        return -1

    def scales(self) -> Tensor:
        return self._scale

    def zero_points(self) -> None:
        return None
