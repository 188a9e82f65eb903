"""Location-scale and rate families on the real line: Laplace, Cauchy, Gumbel, StudentT, Exponential.
Each ``rsample`` is a differentiable transform of uniform or normal noise."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import numpy as np

from pycoll.distribution.base import (Distribution, ExponentialFamily, all_default, always_float32, as_params, as_value,
                                      noise, numbers_default, sample_shape, shape_of)
from pycoll.search_ops import where
from pycoll.tensor import Tensor

_EULER = 0.5772156649015329


class _LocScale(Distribution):
    """A distribution of ``loc`` and ``scale``, broadcast together."""

    def __init__(self, owner: str, loc: Any, scale: Any) -> None:
        loc, scale = as_params(owner, numbers_default, loc=loc, scale=scale)
        shape = list(shape_of(owner, loc=loc, scale=scale))
        self.loc = loc if list(loc.shape) == shape else loc.broadcast_to(shape)
        self.scale = scale if list(scale.shape) == shape else scale.broadcast_to(shape)
        self.dtype = self.loc.dtype
        super().__init__(tuple(shape))

    def _uniform(self, shape: Sequence[int], low: float = 0.0, high: float = 1.0) -> Tensor:
        return noise(lambda g, s: g.uniform(low, high, s), self._extend_shape(sample_shape(shape)), self.loc)


class Laplace(_LocScale):
    """Laplace(loc, scale): density exp(-|x - loc| / scale) / (2 scale)."""

    def __init__(self, loc: Any, scale: Any) -> None:
        super().__init__("Laplace", loc, scale)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def stddev(self) -> Tensor:
        return math.sqrt(2.0) * self.scale

    @property
    def variance(self) -> Tensor:
        return 2.0 * self.scale.pow(2)

    def log_prob(self, value: Any) -> Tensor:
        value = as_value(value, self.loc)
        return -(2.0 * self.scale).log() - (value - self.loc).abs() / self.scale

    def entropy(self) -> Tensor:
        return 1.0 + (2.0 * self.scale).log()

    def cdf(self, value: Any) -> Tensor:
        z = as_value(value, self.loc) - self.loc
        return 0.5 - 0.5 * z.sign() * (-z.abs() / self.scale).expm1()

    def icdf(self, value: Any) -> Tensor:
        t = as_value(value, self.loc) - 0.5
        return self.loc - self.scale * t.sign() * (-2.0 * t.abs()).log1p()

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        eps = float(np.finfo(self.loc._array.dtype).eps)
        u = self._uniform(shape, float(np.nextafter(-1.0, 1.0)) + eps / 2, 1.0 - eps / 2)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()


class Cauchy(_LocScale):
    """Cauchy(loc, scale); it has no mean or variance (asking raises ValueError, as paddle's)."""

    def __init__(self, loc: Any, scale: Any, name: Optional[str] = None) -> None:
        self.name = name or "Cauchy"
        super().__init__("Cauchy", loc, scale)

    @property
    def mean(self) -> Tensor:
        raise ValueError("Cauchy distribution has no mean.")

    @property
    def variance(self) -> Tensor:
        raise ValueError("Cauchy distribution has no variance.")

    @property
    def stddev(self) -> Tensor:
        raise ValueError("Cauchy distribution has no stddev.")

    def rsample(self, shape: Sequence[int] = (), name: Optional[str] = None) -> Tensor:
        u = self._uniform(shape)
        return self.loc + self.scale * (math.pi * (u - 0.5)).tan()

    def sample(self, shape: Sequence[int] = (), name: Optional[str] = None) -> Tensor:
        return super().sample(shape)

    def log_prob(self, value: Any) -> Tensor:
        value = as_value(value, self.loc)
        return -(((value - self.loc) / self.scale) ** 2).log1p() - (math.log(math.pi) + self.scale.log())

    def cdf(self, value: Any) -> Tensor:
        value = as_value(value, self.loc)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def entropy(self) -> Tensor:
        return math.log(4.0 * math.pi) + self.scale.log()


class Gumbel(_LocScale):
    """Gumbel(loc, scale): the law of loc - scale log(-log U)."""

    def __init__(self, loc: Any, scale: Any) -> None:
        super().__init__("Gumbel", loc, scale)

    @property
    def mean(self) -> Tensor:
        return self.loc + self.scale * _EULER

    @property
    def variance(self) -> Tensor:
        return self.scale.pow(2) * (math.pi ** 2 / 6.0)

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def log_prob(self, value: Any) -> Tensor:
        y = (self.loc - as_value(value, self.loc)) / self.scale
        return y - y.exp() - self.scale.log()

    def cdf(self, value: Any) -> Tensor:
        return (-(-(as_value(value, self.loc) - self.loc) / self.scale).exp()).exp()

    def entropy(self) -> Tensor:
        return self.scale.log() + 1.0 + _EULER

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        info = np.finfo(np.float32)
        u = self._uniform(shape, float(info.tiny), float(1.0 - info.eps))
        return self.loc - self.scale * (-u.log()).log()


class StudentT(Distribution):
    """StudentT(df, loc, scale)."""

    def __init__(self, df: Any, loc: Any, scale: Any, name: Optional[str] = None) -> None:
        self.name = name or "StudentT"
        df, loc, scale = as_params("StudentT", all_default, df=df, loc=loc, scale=scale)
        shape = list(shape_of("StudentT", df=df, loc=loc, scale=scale))
        self.df, self.loc, self.scale = (t.broadcast_to(shape) for t in (df, loc, scale))
        for arg, t in (("df", self.df), ("scale", self.scale)):
            if not bool((t >= 0.0).all()):
                raise ValueError(f"StudentT: every element of {arg} must be non-negative")
        self.dtype = self.df.dtype
        super().__init__(tuple(shape))

    @property
    def mean(self) -> Tensor:
        return where(self.df > 1.0, self.loc, self.loc * math.nan)

    @property
    def variance(self) -> Tensor:
        df = self.df.detach()
        finite = where(df > 2.0, self.scale.pow(2) * df / (df - 2.0), df * math.nan)
        return where((df <= 2.0) & (df > 1.0), df * 0.0 + math.inf, finite)

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        """``rsample``'s draw: differentiable in df, loc and scale, as paddle's sample is."""
        return self.rsample(shape)

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        full = self._extend_shape(sample_shape(shape))
        z = noise(lambda g, s: g.standard_normal(s), full, self.df)
        df = np.broadcast_to(self.df.numpy(), full)
        chi2 = noise(lambda g, s: 2.0 * g.standard_gamma(0.5 * df), full, self.df)
        return self.loc + self.scale * z * (chi2 / self.df).rsqrt()

    def log_prob(self, value: Any) -> Tensor:
        y = (as_value(value, self.df) - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi) + (0.5 * self.df).lgamma()
             - (0.5 * (self.df + 1.0)).lgamma())
        return -0.5 * (self.df + 1.0) * (y ** 2 / self.df).log1p() - z

    def entropy(self) -> Tensor:
        half_df, half_df1 = 0.5 * self.df, 0.5 * (self.df + 1.0)
        lbeta = half_df.lgamma() + math.lgamma(0.5) - half_df1.lgamma()
        return (self.scale.log() + half_df1 * (half_df1.digamma() - half_df.digamma()) + 0.5 * self.df.log()
                + lbeta)


class Exponential(ExponentialFamily):
    """Exponential(rate)."""

    def __init__(self, rate: Any) -> None:
        (self.rate,) = as_params("Exponential", always_float32, rate=rate)
        self.dtype = self.rate.dtype
        super().__init__(tuple(self.rate.shape))

    @property
    def mean(self) -> Tensor:
        return self.rate.reciprocal()

    @property
    def variance(self) -> Tensor:
        return self.rate.pow(-2)

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        tiny = float(np.finfo(np.float32).tiny)
        u = noise(lambda g, s: g.uniform(tiny, 1.0, s), self._extend_shape(sample_shape(shape)), self.rate)
        return -u.log() / self.rate

    def prob(self, value: Any) -> Tensor:
        return self.rate * (-self.rate * as_value(value, self.rate)).exp()

    def log_prob(self, value: Any) -> Tensor:
        return self.rate.log() - self.rate * as_value(value, self.rate)

    def entropy(self) -> Tensor:
        return 1.0 - self.rate.log()

    def cdf(self, value: Any) -> Tensor:
        return 1.0 - (-self.rate * as_value(value, self.rate)).exp()

    def icdf(self, value: Any) -> Tensor:
        return -(-as_value(value, self.rate)).log1p() / self.rate

    @property
    def _natural_parameters(self) -> tuple:
        return (-self.rate,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return -(-x).log()

    @property
    def _mean_carrier_measure(self) -> float:
        return 0.0
