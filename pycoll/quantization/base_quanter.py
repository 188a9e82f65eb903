"""`BaseQuanter`: the interface every quanter (and observer) layer implements."""
from __future__ import annotations

import abc
from typing import Any, Iterable, Optional, Union

from pycoll.nn.layer import Layer
from pycoll.tensor import Tensor


class BaseQuanter(Layer, metaclass=abc.ABCMeta):
    """A layer that observes (and may fake-quantize) a tensor and reports the quantization
    parameters ``convert`` stores: scales, zero points, axis and bit length."""

    @abc.abstractmethod
    def forward(self, input: Tensor) -> Tensor:
        """The tensor after observation / simulated quantization."""

    @abc.abstractmethod
    def scales(self) -> Optional[Union[Tensor, Any]]:
        """The scales used for quantization (None if the quanter holds none)."""

    @abc.abstractmethod
    def zero_points(self) -> Optional[Union[Tensor, Any]]:
        """The zero points (None: zero, symmetric quantization)."""

    @abc.abstractmethod
    def quant_axis(self) -> Union[int, Iterable[int]]:
        """The axis of per-channel quantization; -1 for per-tensor."""

    @abc.abstractmethod
    def bit_length(self) -> Union[int, Iterable[int]]:
        """The bit length of the quantized integers."""
