"""What ``convert`` leaves in a quantized model: quantize / dequantize layers holding the scales
(paddle's ONNX-style ``quantize_linear`` / ``dequantize_linear`` pair), and the base class of the
QAT layers that knows how to turn its quanters into them.

Integer formats only: paddle's float8 ``bit_length`` tuples ((4, 3), (5, 2)) are refused.
"""
from __future__ import annotations

import abc
from typing import Any, List, Optional, Tuple, Union

from pycoll._graph import no_grad
from pycoll.math_ops import cast, clip
from pycoll.nn.initializer import Constant
from pycoll.nn.layer import Layer
from pycoll.nn.parameter import ParamAttr
from pycoll.reshape_ops import repeat_interleave
from pycoll.tensor import Tensor, to_tensor
from pycoll.unary_ops import round as round_half_even


class _LinearQuantParams(Layer):
    """The scales, zero points, axis and integer range shared by LinearQuanter and LinearDequanter.

    ``zero_point`` None means 0 (symmetric quantization: what the abs-max quanters report; paddle's
    own layer fails on None there)."""

    def __init__(self, scales: Any, zero_point: Any = None, quant_axis: Optional[int] = None,
                 bit_length: int = 8, group_size: int = 128) -> None:
        super().__init__()
        name = type(self).__name__
        if isinstance(bit_length, bool) or not isinstance(bit_length, int) or not 2 <= bit_length <= 32:
            raise ValueError(f"{name}: bit_length must be an int in [2, 32] (float8 formats are not "
                             f"supported), got {bit_length!r}")
        if quant_axis is not None and (isinstance(quant_axis, bool) or not isinstance(quant_axis, int)):
            raise TypeError(f"{name}: quant_axis must be an int or None, got {quant_axis!r}")
        scales = cast(to_tensor(scales), "float32").detach()
        zero_point = (scales * 0.0) if zero_point is None else cast(to_tensor(zero_point), "float32").detach()
        self._scales = self._constant(scales)
        self._zero_point = self._constant(zero_point)
        self._quant_axis = -1 if quant_axis is None else quant_axis
        self._bit_length = bit_length
        self._group_size = group_size
        self._qmax = (1 << (bit_length - 1)) - 1
        self._qmin = -self._qmax - 1

    def _constant(self, value: Tensor) -> Tensor:
        param = self.create_parameter(list(value.shape), attr=ParamAttr(initializer=Constant(0.0), trainable=False),
                                      dtype="float32")
        param.set_value(value)
        return param

    def _scale_for(self, x: Tensor) -> Tensor:
        """The scales shaped to broadcast over ``x``: one value, or one per index of quant_axis."""
        if self._scales.size == 1 or self._quant_axis < 0:
            return self._scales.reshape([1] * x.ndim) if x.ndim else self._scales.reshape([])
        shape = [1] * x.ndim
        shape[self._quant_axis] = self._scales.size
        return self._scales.reshape(shape)

    def _grouped(self) -> Tuple[Tensor, Tensor]:
        """2-D (group-wise) scales and zero points repeated to one row per weight row."""
        return (repeat_interleave(self._scales, self._group_size, 0),
                repeat_interleave(self._zero_point, self._group_size, 0))

    @staticmethod
    def _args_of(quanter: Any) -> dict:
        """The constructor's arguments from a quanter or observer (a group-wise one's group size too)."""
        args = dict(scales=quanter.scales(), zero_point=quanter.zero_points(), quant_axis=quanter.quant_axis(),
                    bit_length=quanter.bit_length())
        if hasattr(quanter, "group_size"):
            args["group_size"] = quanter.group_size
        return args


class LinearQuanter(_LinearQuantParams):
    """Quantize: ``clip(round(x / scale * qmax), qmin, qmax)`` (halves to even, as paddle's
    ``quantize_linear``), in x's dtype; group-wise 2-D scales as paddle's weight path."""

    def forward(self, input: Tensor) -> Tensor:
        x = cast(input, "float32")
        with no_grad():
            if self._scales.ndim > 1:
                if bool((self._zero_point != 0).any()):
                    q = round_half_even(x / self._scales) + self._zero_point
                else:
                    scales, zero_point = self._grouped()
                    q = round_half_even(x / scales * self._qmax) + zero_point
            else:
                q = round_half_even(x / self._scale_for(x) * self._qmax)
            return cast(clip(q, self._qmin, self._qmax), input.dtype)

    @staticmethod
    def from_quanter(quanter: Any) -> "LinearQuanter":
        return LinearQuanter(**_LinearQuantParams._args_of(quanter))


class LinearDequanter(_LinearQuantParams):
    """Dequantize: ``x * scale / qmax`` (paddle's ``dequantize_linear``), in x's dtype."""

    def forward(self, input: Tensor) -> Tensor:
        x = cast(input, "float32")
        with no_grad():
            if self._scales.ndim > 1:
                if bool((self._zero_point != 0).any()):
                    out = (x - self._zero_point) * self._scales
                else:
                    scales, zero_point = self._grouped()
                    out = (x - zero_point) / self._qmax * scales
            else:
                out = x * self._scale_for(x) / self._qmax
            return cast(out, input.dtype)

    @staticmethod
    def from_quanter(quanter: Any) -> "LinearDequanter":
        return LinearDequanter(**_LinearQuantParams._args_of(quanter))


class LinearQuanterDequanter(Layer):
    """A quanter then a dequanter (either may be None: a converted weight keeps only the dequanter)."""

    def __init__(self, quanter: Optional[Layer], dequanter: Optional[Layer]) -> None:
        super().__init__()
        self._quanter = quanter
        self._dequanter = dequanter

    def forward(self, input: Tensor) -> Tensor:
        out = input
        if self._quanter is not None:
            out = self._quanter(out)
        if self._dequanter is not None:
            out = self._dequanter(out)
        return out

    @staticmethod
    def from_quanter(quanter: Any) -> "LinearQuanterDequanter":
        if quanter is None:
            raise ValueError("LinearQuanterDequanter.from_quanter: quanter must be a quanter, got None")
        return LinearQuanterDequanter(LinearQuanter.from_quanter(quanter), LinearDequanter.from_quanter(quanter))


class ConvertibleQuantedLayer(Layer, metaclass=abc.ABCMeta):
    """Base of the QAT layers: names its weights' quanters and its activations' quanters so that
    ``convert`` can replace each by a LinearQuanterDequanter and store the weights quantized."""

    def __init__(self) -> None:
        super().__init__()
        self.converted = False

    @abc.abstractmethod
    def weights_to_quanters(self) -> List[Tuple[str, str]]:
        """(weight attribute, its quanter's attribute) pairs."""

    @abc.abstractmethod
    def activation_quanters(self) -> List[str]:
        """The attributes of the quanters of activations."""

    def _convert_quanter_to_qdq(self, quanter_name: str) -> Union[LinearQuanterDequanter, None]:
        quanter = getattr(self, quanter_name, None)
        if quanter is None:
            return None
        qdq = LinearQuanterDequanter.from_quanter(quanter)
        setattr(self, quanter_name, qdq)
        return qdq

    def _convert(self, remain_weight: bool = False) -> None:
        """Quanters to quantize/dequantize layers; unless ``remain_weight``, each weight is
        replaced by its quantized integer values (kept in its float dtype, as paddle's) and only
        the dequanter stays."""
        if self.converted:
            raise RuntimeError(f"{type(self).__name__}: the layer has been converted already (convert it once)")
        for weight_name, quanter_name in self.weights_to_quanters():
            qdq = self._convert_quanter_to_qdq(quanter_name)
            if qdq is not None and not remain_weight:
                weight = getattr(self, weight_name)
                with no_grad():
                    weight.set_value(qdq._quanter(weight))
                qdq._quanter = None
        for quanter_name in self.activation_quanters():
            self._convert_quanter_to_qdq(quanter_name)
        self.converted = True
