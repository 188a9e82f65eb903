"""paddle.nn.initializer's older class names, still exported by paddle 3.3.1 and used by older
model code: ``XavierInitializer(uniform=True, ...)`` and ``MSRAInitializer(uniform=True, ...)``
choose the uniform or the normal form by a flag, ``NormalInitializer(loc, scale)`` names the
mean and the spread otherwise. Each is the modern initializer under paddle's old signature; a
``seed`` other than 0 draws from a generator of its own (the same values for every parameter it
fills, as paddle's). In paddle the modern classes derive from these; here these derive from the
modern ones (``isinstance(init, XavierInitializer)`` holds for the old names only)."""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from pycoll.nn.initializer import (Assign, Constant, Initializer, KaimingNormal, KaimingUniform, Normal,
                                   TruncatedNormal, Uniform, XavierNormal, XavierUniform)

__all__ = ["ConstantInitializer", "NormalInitializer", "TruncatedNormalInitializer", "UniformInitializer",
           "XavierInitializer", "MSRAInitializer", "NumpyArrayInitializer"]


def _seeded(init: Initializer, seed: Any, cls: str) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"{cls}: seed must be an int (0: pycoll's generator), got {seed!r}")
    init._seed = seed


class ConstantInitializer(Constant):
    """Constant(value); ``force_cpu`` is accepted (pycoll fills on the host anyway)."""

    def __init__(self, value: float = 0.0, force_cpu: bool = False):
        super().__init__(value)


class NormalInitializer(Normal):
    """Normal(mean=loc, std=scale)."""

    def __init__(self, loc: float = 0.0, scale: float = 1.0, seed: int = 0):
        super().__init__(loc, scale)
        _seeded(self, seed, "NormalInitializer")


class TruncatedNormalInitializer(TruncatedNormal):
    """TruncatedNormal(mean=loc, std=scale, a, b)."""

    def __init__(self, loc: float = 0.0, scale: float = 1.0, seed: int = 0, a: float = -2.0, b: float = 2.0):
        super().__init__(loc, scale, a, b)
        _seeded(self, seed, "TruncatedNormalInitializer")


class UniformInitializer(Uniform):
    """Uniform(low, high). ``diag_num``, ``diag_step`` and ``diag_val`` are accepted and, as in
    paddle 3.3.1's dygraph, change nothing."""

    def __init__(self, low: float = -1.0, high: float = 1.0, seed: int = 0, diag_num: int = 0, diag_step: int = 0,
                 diag_val: float = 1.0):
        super().__init__(low, high)
        _seeded(self, seed, "UniformInitializer")


class XavierInitializer(XavierUniform):
    """XavierUniform (``uniform=True``) or XavierNormal, with their fan_in, fan_out and gain."""

    def __init__(self, uniform: bool = True, fan_in: Optional[float] = None, fan_out: Optional[float] = None,
                 seed: int = 0, gain: float = 1.0):
        super().__init__(fan_in, fan_out, gain)
        self.uniform = uniform
        _seeded(self, seed, "XavierInitializer")

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        return (XavierUniform if self.uniform else XavierNormal)._host_values(self, shape)


class MSRAInitializer(KaimingUniform):
    """KaimingUniform (``uniform=True``) or KaimingNormal, with their fan_in, negative_slope,
    nonlinearity and mode."""

    def __init__(self, uniform: bool = True, fan_in: Optional[float] = None, seed: int = 0,
                 negative_slope: float = 0.0, nonlinearity: str = "relu", mode: str = "fan_in"):
        super().__init__(fan_in, negative_slope, nonlinearity, mode)
        self.uniform = uniform
        _seeded(self, seed, "MSRAInitializer")

    def _host_values(self, shape: Tuple[int, ...]) -> np.ndarray:
        return (KaimingUniform if self.uniform else KaimingNormal)._host_values(self, shape)


class NumpyArrayInitializer(Assign):
    """Assign(value): the parameter set to a NumPy array of its shape."""

    def __init__(self, value: Any):
        super().__init__(value)
