"""Distributions over integers: Categorical, Bernoulli, Geometric, Poisson, Binomial, Multinomial.

Their samples take no gradient (Bernoulli's ``rsample`` is the relaxed, Gumbel-sigmoid one, as
paddle's). Draws whose law has no simple transform of uniform noise (Poisson, Binomial) are made
by pycoll's host generator from the parameters' values, as `pycoll.poisson` does.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import numpy as np

from pycoll.device import array_module, move, place_of
from pycoll.distribution.base import (Distribution, ExponentialFamily, all_default, as_params, as_value, noise,
                                      numbers_default, refuse_unless, sample_shape, shape_of, support_values)
from pycoll.nn.functional import binary_cross_entropy_with_logits, log_softmax, one_hot, softmax, softplus
from pycoll.random import get_rng
from pycoll.sampling import draw_categories
from pycoll.index_ops import take_along_axis
from pycoll.search_ops import where
from pycoll.tensor import Tensor, wrap
from pycoll.type_info import finfo


class Categorical(Distribution):
    """Categorical(logits): K classes along the last axis. As paddle's, sampling, entropy and KL
    read ``logits`` as log-weights (softmax), while ``probs``/``log_prob`` read them as weights
    (``logits / logits.sum(-1)``)."""

    def __init__(self, logits: Any, name: Optional[str] = None) -> None:
        self.name = name or "Categorical"
        (self.logits,) = as_params("Categorical", logits=logits)
        if self.logits.ndim < 1:
            raise ValueError(f"Categorical: logits must have at least one dimension, got shape {self.logits.shape}")
        self.dtype = self.logits.dtype
        self._prob = self.logits / self.logits.sum(-1, keepdim=True)
        super().__init__(tuple(self.logits.shape[:-1]))

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        """int64 class indices of shape ``shape + batch_shape``, drawn with softmax(logits) (as
        paddle's: multinomial of those weights, with replacement)."""
        drawn = sample_shape(shape)
        if not self.logits.shape[-1]:
            raise ValueError(f"Categorical.sample: logits of shape {list(self.logits.shape)} hold no categories "
                             f"to draw from")
        weights = softmax(self.logits.detach(), axis=-1)._array.reshape(-1, self.logits.shape[-1])
        picks = draw_categories(weights, math.prod(drawn), replacement=True)  # [batch rows, draws]
        return wrap(picks.T.reshape(drawn + self._batch_shape))

    def probs(self, value: Any) -> Tensor:
        """The weight of class ``value`` (paddle's rules: with a batch, a 1-D value is taken for every row)."""
        value = value if isinstance(value, Tensor) else wrap(move(np.asarray(value, dtype=np.int64),
                                                                 place_of(self.logits._array)))
        if self._prob.ndim == 1:
            return self._prob[value.reshape([-1])].reshape(list(value.shape))
        if value.ndim == 1:
            value = value.reshape([1] * (self._prob.ndim - 1) + [-1])
        batch, lead = self._batch_shape, tuple(value.shape[:-1])
        if value.ndim != self._prob.ndim or any(v != b and 1 not in (v, b) for v, b in zip(lead, batch)):
            raise ValueError(f"Categorical: value of shape {list(value.shape)} does not fit the batch shape "
                             f"{list(batch)}: it needs {len(batch) + 1} dimensions whose first {len(batch)} "
                             f"broadcast with the batch shape (classes along the last), or one dimension")
        return take_along_axis(self._prob, value.astype("int64"), axis=-1)

    def prob(self, value: Any) -> Tensor:
        return self.probs(value)

    def log_prob(self, value: Any) -> Tensor:
        return self.probs(value).log()

    def entropy(self) -> Tensor:
        log_p = log_softmax(self.logits, axis=-1)
        return -(log_p.exp() * log_p).sum(-1)


class Bernoulli(ExponentialFamily):
    """Bernoulli(probs); ``probs`` is clipped to [eps, 1 - eps] of its dtype, as paddle's."""

    def __init__(self, probs: Any, name: Optional[str] = None) -> None:
        self.name = name or "Bernoulli"
        (probs,) = as_params("Bernoulli", all_default, probs=probs)
        eps = float(finfo(probs.dtype).eps)
        self.probs = probs.clip(eps, 1.0 - eps)
        self.logits = self.probs.log() - (-self.probs).log1p()
        self.dtype = self.probs.dtype
        super().__init__(tuple(self.probs.shape))

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def variance(self) -> Tensor:
        return self.probs * (1.0 - self.probs)

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        u = noise(lambda g, s: g.random(s), self._extend_shape(sample_shape(shape)), self.probs)
        return wrap((u._array < self.probs._array).astype(u._array.dtype))

    def rsample(self, shape: Sequence[int] = (), temperature: float = 1.0) -> Tensor:
        """The relaxed (logistic) sample (logit(u) + logits) / temperature, differentiable in probs."""
        if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or temperature <= 0:
            raise ValueError(f"Bernoulli.rsample: temperature must be a float > 0, got {temperature!r}")
        u = noise(lambda g, s: g.random(s), self._extend_shape(sample_shape(shape)), self.probs)
        return (u.log() - (-u).log1p() + self.logits) / float(temperature)

    def cdf(self, value: Any) -> Tensor:
        value = as_value(value, self.probs)
        zero = self.probs * 0.0
        return where(value < 0, zero, where(value < 1, 1.0 - self.probs + zero, zero + 1.0))

    def log_prob(self, value: Any) -> Tensor:
        value = as_value(value, self.probs)
        logits = self.logits + value * 0.0
        return -binary_cross_entropy_with_logits(logits, value + self.logits * 0.0, reduction="none")

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    @property
    def _natural_parameters(self) -> tuple:
        return (self.logits,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return softplus(x)

    @property
    def _mean_carrier_measure(self) -> float:
        return 0.0


class Geometric(Distribution):
    """Geometric(probs): the number of failures before the first success, k = 0, 1, ..."""

    def __init__(self, probs: Any) -> None:
        (self.probs,) = as_params("Geometric", probs=probs)
        p = self.probs._array
        if bool(array_module(p).any((p <= 0) | (p > 1))):
            raise ValueError("Geometric: probs must lie in (0, 1]")
        super().__init__(tuple(self.probs.shape))

    @property
    def mean(self) -> Tensor:
        return 1.0 / self.probs - 1.0

    @property
    def variance(self) -> Tensor:
        return (1.0 / self.probs - 1.0) / self.probs

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def pmf(self, k: Any) -> Tensor:
        return (1.0 - self.probs) ** as_value(k, self.probs) * self.probs

    def log_pmf(self, k: Any) -> Tensor:
        return as_value(k, self.probs) * (-self.probs).log1p() + self.probs.log()

    def log_prob(self, value: Any) -> Tensor:
        return self.log_pmf(value)

    def prob(self, value: Any) -> Tensor:
        return self.pmf(value)

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        tiny = float(np.finfo(np.float32).tiny)
        u = noise(lambda g, s: g.uniform(tiny, 1.0, s), self._extend_shape(sample_shape(shape)), self.probs)
        return (u.log() / (-self.probs).log1p()).floor()

    def entropy(self) -> Tensor:
        p = self.probs
        return -((1.0 - p) * (1.0 - p).log() + p * p.log()) / p

    def cdf(self, k: Any) -> Tensor:
        return 1.0 - (1.0 - self.probs) ** (as_value(k, self.probs) + 1.0)


def _support_sum(log_prob: Any, upper: int, batch_ndim: int, like: Tensor) -> tuple:
    """The values 0..upper-1 shaped to broadcast against a batch, and log_prob at them."""
    values = support_values(upper, like).reshape([-1] + [1] * batch_ndim)
    return values, log_prob(values)


class Poisson(Distribution):
    """Poisson(rate). As paddle's, a Python number gives a rate of shape [1]."""

    def __init__(self, rate: Any) -> None:
        if isinstance(rate, (int, float)) and not isinstance(rate, bool):
            rate = [float(rate)]
        (self.rate,) = as_params("Poisson", numbers_default, rate=rate)
        self.dtype = self.rate.dtype
        super().__init__(tuple(self.rate.shape))

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        shape = self._extend_shape(sample_shape(shape))
        rate = np.broadcast_to(self.rate.numpy(), shape)
        refuse_unless("Poisson.sample", "rate", rate, rate >= 0, ">= 0")
        return wrap(move(get_rng().poisson(rate).astype(self.rate._array.dtype), place_of(self.rate._array)))

    def _upper(self, rate: Tensor) -> int:
        """One past the largest value worth summing over (paddle's bound: rate + 30 sqrt(max rate))."""
        top = float(rate.max())
        return int(top + 30.0 * (top ** 0.5 if top >= 1.0 else 1.0))

    def log_prob(self, value: Any) -> Tensor:
        value = as_value(value, self.rate)
        eps = float(finfo(self.rate.dtype).eps)
        return (-self.rate + value * self.rate.log() - (value + 1.0).lgamma()).nan_to_num(neginf=-eps)

    def entropy(self) -> Tensor:
        _, log_p = _support_sum(self.log_prob, self._upper(self.rate), len(self._batch_shape), self.rate)
        return -(log_p.exp() * log_p).sum(0) * (self.rate != 0).astype(self.rate.dtype)


class Binomial(Distribution):
    """Binomial(total_count, probs): successes in ``total_count`` trials."""

    def __init__(self, total_count: Any, probs: Any) -> None:
        (probs,) = as_params("Binomial", numbers_default, probs=probs)
        if isinstance(total_count, Tensor):
            total_count = total_count.astype(probs.dtype)
        elif isinstance(total_count, (int, np.integer, list, tuple, np.ndarray)) and not isinstance(total_count, bool):
            total_count = wrap(move(np.asarray(total_count, dtype=probs._array.dtype), place_of(probs._array)))
        else:
            raise TypeError(f"Binomial: total_count must be an int or a Tensor, got {type(total_count).__name__}")
        shape = list(shape_of("Binomial", total_count=total_count, probs=probs))
        self.total_count, self.probs = total_count.broadcast_to(shape), probs.broadcast_to(shape)
        self.dtype = self.probs.dtype
        super().__init__(tuple(shape))

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1.0 - self.probs)

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        shape = self._extend_shape(sample_shape(shape))
        n = np.broadcast_to(self.total_count.numpy().astype(np.int64), shape)
        p = np.broadcast_to(self.probs.numpy(), shape)
        refuse_unless("Binomial.sample", "total_count", n, n >= 0, ">= 0")
        refuse_unless("Binomial.sample", "probs", p, (p >= 0) & (p <= 1), "in [0, 1]")
        return wrap(move(get_rng().binomial(n, p).astype(self.probs._array.dtype), place_of(self.probs._array)))

    def log_prob(self, value: Any) -> Tensor:
        value = as_value(value, self.probs)
        n = self.total_count
        eps = float(finfo(self.probs.dtype).eps)
        p = self.probs.clip(eps, 1.0 - eps)
        log_comb = (n + 1.0).lgamma() - (n - value + 1.0).lgamma() - (value + 1.0).lgamma()
        return (log_comb + value * p.log() + (n - value) * (1.0 - p).log()).nan_to_num(neginf=-eps)

    def _support(self) -> int:
        return int(float(self.total_count.max())) + 1

    def entropy(self) -> Tensor:
        _, log_p = _support_sum(self.log_prob, self._support(), len(self._batch_shape), self.probs)
        return -(log_p.exp() * log_p).sum(0)


class Multinomial(Distribution):
    """Multinomial(total_count, probs): counts of ``total_count`` draws from the categories of
    ``probs`` (weights along the last axis, normalised)."""

    def __init__(self, total_count: int, probs: Any) -> None:
        if isinstance(total_count, bool) or not isinstance(total_count, (int, np.integer)) or total_count < 1:
            raise ValueError(f"Multinomial: total_count must be an int >= 1, got {total_count!r}")
        (probs,) = as_params("Multinomial", probs=probs)
        if probs.ndim < 1:
            raise ValueError(f"Multinomial: probs must have at least one dimension, got shape {probs.shape}")
        self.total_count = int(total_count)
        self.probs = probs / probs.sum(-1, keepdim=True)
        self._categorical = Categorical(probs.log())
        super().__init__(tuple(probs.shape[:-1]), tuple(probs.shape[-1:]))

    @property
    def mean(self) -> Tensor:
        return self.probs * float(self.total_count)

    @property
    def variance(self) -> Tensor:
        return float(self.total_count) * self.probs * (1.0 - self.probs)

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        draws = self._categorical.sample((self.total_count,) + sample_shape(shape))
        return one_hot(draws, int(self.probs.shape[-1])).astype(self.probs.dtype).sum(0)

    def log_prob(self, value: Any) -> Tensor:
        value = as_value(value, self.probs)
        if not value.ndim or value.shape[-1] != self.probs.shape[-1]:
            raise ValueError(f"Multinomial.log_prob: value must hold counts of the {self.probs.shape[-1]} categories "
                             f"along its last axis, got shape {list(value.shape)}")
        log_p = self.probs.log()
        # 0 * log(0) counts as 0: a category of probability 0 that was never drawn
        log_p = where((value == 0) & log_p.isinf(), value * 0.0, log_p + value * 0.0)  # (-inf * 0 is NaN)
        return (value.sum(-1) + 1.0).lgamma() - (value + 1.0).lgamma().sum(-1) + (value * log_p).sum(-1)

    def entropy(self) -> Tensor:
        n = float(self.total_count)
        k = (support_values(self.total_count, self.probs) + 1.0).reshape([-1] + [1] * self.probs.ndim)
        p = self.probs
        # log C(n, k) + k log p + (n - k) log(1 - p): each category's count is Binomial(n, p)
        log_binom = (math.lgamma(n + 1.0) - (k + 1.0).lgamma() - (n - k + 1.0).lgamma()
                     + k * p.log() + (n - k) * (-p).log1p())
        weighted = (log_binom.exp() * (k + 1.0).lgamma()).sum([0, -1])
        return n * self._categorical.entropy() - math.lgamma(n + 1.0) + weighted

