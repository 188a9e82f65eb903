"""The two distributions most scripts use: Normal (policy gradients, VAEs) and Uniform."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from pycoll.distribution.base import Distribution, as_params, as_value, noise, sample_shape, shape_of
from pycoll.tensor import Tensor

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


class Normal(Distribution):
    """Normal(loc, scale): the Gaussian with mean ``loc`` and standard deviation ``scale``."""

    def __init__(self, loc: Any, scale: Any, name: Optional[str] = None) -> None:
        self.name = name or "Normal"
        self.loc, self.scale = as_params("Normal", loc=loc, scale=scale)
        self.dtype = self.loc.dtype
        super().__init__(shape_of("Normal", loc=self.loc, scale=self.scale))

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2)

    @property
    def stddev(self) -> Tensor:
        return self.scale

    def sample(self, shape: Sequence[int] = (), seed: int = 0) -> Tensor:
        """A draw of shape ``shape + batch_shape``, differentiable in the parameters as paddle's
        (``rsample``'s, under paddle's other name; ``seed`` is taken and not used)."""
        return self.rsample(shape)

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        """loc + scale * eps with eps ~ N(0, 1): differentiable in loc and scale."""
        eps = noise(lambda g, s: g.standard_normal(s), self._extend_shape(sample_shape(shape)), self.loc)
        return self.loc + eps * self.scale

    def log_prob(self, value: Any) -> Tensor:
        value = as_value(value, self.loc)
        return -((value - self.loc) ** 2) / (2.0 * self.scale * self.scale) - self.scale.log() - _LOG_SQRT_2PI

    def entropy(self) -> Tensor:
        return (0.5 + _LOG_SQRT_2PI + self.scale.log()) + (self.loc * 0.0)

    def cdf(self, value: Any) -> Tensor:
        value = as_value(value, self.loc)
        return 0.5 * (1.0 + ((value - self.loc) / (self.scale * math.sqrt(2.0))).erf())

    def icdf(self, value: Any) -> Tensor:
        value = as_value(value, self.loc)
        return self.loc + self.scale * math.sqrt(2.0) * (2.0 * value - 1.0).erfinv()


class Uniform(Distribution):
    """Uniform(low, high) on [low, high); log_prob is -inf outside (low, high), as paddle's."""

    def __init__(self, low: Any, high: Any, name: Optional[str] = None) -> None:
        self.name = name or "Uniform"
        self.low, self.high = as_params("Uniform", low=low, high=high)
        self.dtype = self.low.dtype
        super().__init__(shape_of("Uniform", low=self.low, high=self.high))

    @property
    def mean(self) -> Tensor:
        return (self.low + self.high) / 2.0

    @property
    def variance(self) -> Tensor:
        return (self.high - self.low) ** 2 / 12.0

    def sample(self, shape: Sequence[int] = (), seed: int = 0) -> Tensor:
        """A draw of shape ``shape + batch_shape``, differentiable in the parameters as paddle's
        (``rsample``'s, under paddle's other name; ``seed`` is taken and not used)."""
        return self.rsample(shape)

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        u = noise(lambda g, s: g.random(s), self._extend_shape(sample_shape(shape)), self.low)
        return self.low + u * (self.high - self.low)

    def _inside(self, value: Tensor) -> Tensor:
        return ((self.low < value).astype(value.dtype) * (value < self.high).astype(value.dtype))

    def log_prob(self, value: Any) -> Tensor:
        value = as_value(value, self.low)
        return self._inside(value).log() - (self.high - self.low).log()

    def prob(self, value: Any) -> Tensor:
        value = as_value(value, self.low)
        return self._inside(value) / (self.high - self.low)

    def entropy(self) -> Tensor:
        return (self.high - self.low).log()

    def cdf(self, value: Any) -> Tensor:
        value = as_value(value, self.low)
        return ((value - self.low) / (self.high - self.low)).clip(0.0, 1.0)
