"""Parameter initializers (paddle.nn.initializer names).

Values are drawn on the host from pycoll's generator (`pycoll.seed`) and copied into the parameter,
so initial weights depend only on the seed, never on the device.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence, Tuple

import numpy as np

from pycoll.random import get_rng
from pycoll.tensor import Tensor


def _fans(shape: Sequence[int]) -> Tuple[int, int]:
    """(fan_in, fan_out) the paddle way: [in, out] for matrices, [out, in, *kernel] beyond."""
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = int(np.prod(shape[2:]))
    return shape[1] * receptive, shape[0] * receptive


class Initializer:
    """Fills a parameter in place: `init(param)`."""

    def __call__(self, param: Tensor, block: None = None) -> Tensor:
        values = self._host_values(tuple(param.shape))
        param.set_value(np.asarray(values, dtype=param.dtype))
        return param

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        raise NotImplementedError


class Constant(Initializer):
    def __init__(self, value: float = 0.0):
        self.value = value

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        return np.full(shape, self.value)


class Normal(Initializer):
    def __init__(self, mean: float = 0.0, std: float = 1.0):
        if std < 0:
            raise ValueError(f"std must be >= 0, got {std}")
        self.mean, self.std = mean, std

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        return get_rng().normal(self.mean, self.std, shape)


class Uniform(Initializer):
    def __init__(self, low: float = -1.0, high: float = 1.0):
        if high < low:
            raise ValueError(f"high must be >= low, got low={low}, high={high}")
        self.low, self.high = low, high

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        return get_rng().uniform(self.low, self.high, shape)


class _Xavier(Initializer):
    """Glorot initialisation: the spread depends on fan_in + fan_out (taken from the shape
    unless given)."""

    def __init__(self, fan_in: Optional[int] = None, fan_out: Optional[int] = None, gain: float = 1.0):
        self.fan_in, self.fan_out, self.gain = fan_in, fan_out, gain

    def _fan_sum(self, shape: Tuple[int, ...]) -> int:
        fan_in, fan_out = _fans(shape)
        return (self.fan_in or fan_in) + (self.fan_out or fan_out)


class XavierUniform(_Xavier):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out))."""

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        limit = self.gain * math.sqrt(6.0 / self._fan_sum(shape))
        return get_rng().uniform(-limit, limit, shape)


class XavierNormal(_Xavier):
    """N(0, std) with std = gain * sqrt(2 / (fan_in + fan_out))."""

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        return get_rng().normal(0.0, self.gain * math.sqrt(2.0 / self._fan_sum(shape)), shape)
