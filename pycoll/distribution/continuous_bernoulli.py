"""ContinuousBernoulli(probs, lims): the density C(p) p^x (1-p)^(1-x) on [0, 1]. Near p = 1/2,
where the closed forms of C(p), the mean and the variance lose precision, inside ``lims``, a
Taylor expansion in (p - 1/2) stands in (paddle's scheme)."""
from __future__ import annotations

import math
from typing import Any, Sequence, Tuple

from pycoll.distribution.base import Distribution, as_params, as_value, noise, numbers_default, sample_shape
from pycoll.search_ops import where
from pycoll.tensor import Tensor
from pycoll.type_info import finfo


class ContinuousBernoulli(Distribution):
    """ContinuousBernoulli(probs, lims=(0.499, 0.501)). A Python number gives probs of shape [1], as paddle's."""

    def __init__(self, probs: Any, lims: Tuple[float, float] = (0.499, 0.501)) -> None:
        if isinstance(probs, (int, float)) and not isinstance(probs, bool):
            probs = [float(probs)]
        (probs,) = as_params("ContinuousBernoulli", numbers_default, probs=probs)
        eps = float(finfo(probs.dtype).eps)
        self.probs = probs.clip(eps, 1.0 - eps)
        self.lims = (float(lims[0]), float(lims[1]))
        self.dtype = self.probs.dtype
        super().__init__(tuple(self.probs.shape))

    def _outside(self) -> Tensor:
        return (self.probs <= self.lims[0]) | (self.probs > self.lims[1])

    def _cut_probs(self) -> Tensor:
        return where(self._outside(), self.probs, self.probs * 0.0 + self.lims[0])

    @staticmethod
    def _atanh(x: Tensor) -> Tensor:
        return 0.5 * (x.log1p() - (-x).log1p())

    def _log_constant(self) -> Tensor:
        p = self._cut_probs()
        below = where(p <= 0.5, p, p * 0.0)
        above = where(p >= 0.5, p, p * 0.0 + 1.0)
        closed = (2.0 * self._atanh(1.0 - 2.0 * p).abs()).log() - where(
            p <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5) ** 2
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside(), closed, taylor)

    @property
    def mean(self) -> Tensor:
        p = self._cut_probs()
        closed = p / (2.0 * p - 1.0) + 1.0 / (2.0 * self._atanh(1.0 - 2.0 * p))
        x = self.probs - 0.5
        return where(self._outside(), closed, 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x ** 2) * x)

    @property
    def variance(self) -> Tensor:
        p = self._cut_probs()
        closed = p * (p - 1.0) / (1.0 - 2.0 * p) ** 2 + 1.0 / ((-p).log1p() - p.log()) ** 2
        x = (self.probs - 0.5) ** 2
        return where(self._outside(), closed, 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x)

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        u = noise(lambda g, s: g.random(s), self._extend_shape(sample_shape(shape)), self.probs)
        return self.icdf(u)

    def log_prob(self, value: Any) -> Tensor:
        value = as_value(value, self.probs)
        eps = float(finfo(self.probs.dtype).eps)
        cross = (value * self.probs.log() + (1.0 - value) * (1.0 - self.probs).log()).nan_to_num(neginf=-eps)
        return self._log_constant() + cross

    def entropy(self) -> Tensor:
        log_p, log_1p = self.probs.log(), (-self.probs).log1p()
        h = -self._log_constant() + self.mean * (log_1p - log_p) - log_1p
        return where(self.probs == 0.5, h * 0.0, h)

    def cdf(self, value: Any) -> Tensor:
        value = as_value(value, self.probs)
        p = self._cut_probs()
        closed = (p ** value * (1.0 - p) ** (1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        inside = where(self._outside(), closed, value + p * 0.0)
        return where(value <= 0.0, inside * 0.0, where(value >= 1.0, inside * 0.0 + 1.0, inside))

    def icdf(self, value: Any) -> Tensor:
        value = as_value(value, self.probs)
        p = self._cut_probs()
        closed = ((-p + value * (2.0 * p - 1.0)).log1p() - (-p).log1p()) / (p.log() - (-p).log1p())
        return where(self._outside(), closed, value + p * 0.0)
