"""The gamma family: Gamma, Chi2, Dirichlet and Beta (a two-category Dirichlet, as paddle's).

Gamma variates are drawn by pycoll's host generator (``standard_gamma``) from the concentration's
values; ``Gamma.rsample`` divides them by ``rate`` (so gradients reach ``rate``, not
``concentration``, as paddle's ``standard_gamma`` gives none either).
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from pycoll.distribution.base import (ExponentialFamily, always_float32, as_params, as_value, noise, numbers_default,
                                      refuse_unless, sample_shape, shape_of)
from pycoll.shape_ops import stack
from pycoll.tensor import Tensor


def _standard_gamma(concentration: Tensor, shape: Sequence[int], owner: str, name: str) -> Tensor:
    """Gamma(concentration, 1) draws of ``shape`` (concentration broadcast to it), no gradient;
    ValueError naming ``owner``'s parameter ``name`` for a negative or NaN concentration."""
    alpha = np.broadcast_to(concentration.numpy(), tuple(shape))
    refuse_unless(owner, name, alpha, alpha >= 0, ">= 0")
    return noise(lambda g, s: g.standard_gamma(alpha), tuple(shape), concentration)


class Gamma(ExponentialFamily):
    """Gamma(concentration, rate): density rate^a x^(a-1) exp(-rate x) / Gamma(a)."""

    def __init__(self, concentration: Any, rate: Any) -> None:
        self.concentration, self.rate = as_params("Gamma", always_float32, concentration=concentration, rate=rate)
        self.dtype = self.concentration.dtype
        super().__init__(shape_of("Gamma", concentration=self.concentration, rate=self.rate))

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        full = self._extend_shape(sample_shape(shape))
        return _standard_gamma(self.concentration, full, "Gamma", "concentration") / self.rate

    def log_prob(self, value: Any) -> Tensor:
        value = as_value(value, self.concentration)
        a = self.concentration
        return a * self.rate.log() + (a - 1.0) * value.log() - self.rate * value - a.lgamma()

    def entropy(self) -> Tensor:
        a = self.concentration
        return a - self.rate.log() + a.lgamma() + (1.0 - a) * a.digamma()

    @property
    def _natural_parameters(self) -> tuple:
        return (self.concentration - 1.0, -self.rate)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return (x + 1.0).lgamma() + (x + 1.0) * (-y.reciprocal()).log()

    @property
    def _mean_carrier_measure(self) -> float:
        return 0.0


class Chi2(Gamma):
    """Chi2(df): Gamma(df / 2, 1 / 2)."""

    def __init__(self, df: Any) -> None:
        (self.df,) = as_params("Chi2", always_float32, df=df)
        if not bool((self.df > 0).all()):
            raise ValueError("Chi2: every element of df must be positive")
        super().__init__(self.df * 0.5, (self.df * 0.0 + 0.5).detach())  # df's gradient: None, as paddle's


class Dirichlet(ExponentialFamily):
    """Dirichlet(concentration): a distribution over the simplex of the last axis."""

    def __init__(self, concentration: Any) -> None:
        (concentration,) = as_params("Dirichlet", concentration=concentration)
        if concentration.ndim < 1 or concentration.size == 0:
            raise ValueError(f"Dirichlet: concentration must be at least one-dimensional and non-empty, "
                             f"got shape {list(concentration.shape)}")
        self.concentration = concentration
        super().__init__(tuple(concentration.shape[:-1]), tuple(concentration.shape[-1:]))

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def variance(self) -> Tensor:
        c0 = self.concentration.sum(-1, keepdim=True)
        return self.concentration * (c0 - self.concentration) / (c0.pow(2) * (c0 + 1.0))

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        return self._draw(shape, "Dirichlet.sample", "concentration")

    def _draw(self, shape: Sequence[int], owner: str, name: str) -> Tensor:
        """Samples of ``shape``; a bad concentration's error names ``owner``'s parameter ``name``."""
        g = _standard_gamma(self.concentration, self._extend_shape(sample_shape(shape)), owner, name)
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value: Any) -> Tensor:
        value = as_value(value, self.concentration)
        c = self.concentration
        return (value.log() * (c - 1.0)).sum(-1) + c.sum(-1).lgamma() - c.lgamma().sum(-1)

    def entropy(self) -> Tensor:
        c = self.concentration
        c0, k = c.sum(-1), float(c.shape[-1])
        return c.lgamma().sum(-1) - c0.lgamma() - (k - c0) * c0.digamma() - ((c - 1.0) * c.digamma()).sum(-1)

    @property
    def _natural_parameters(self) -> tuple:
        return (self.concentration,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()

    @property
    def _mean_carrier_measure(self) -> float:
        return 0.0


class Beta(ExponentialFamily):
    """Beta(alpha, beta) on (0, 1)."""

    def __init__(self, alpha: Any, beta: Any) -> None:
        alpha, beta = as_params("Beta", numbers_default, alpha=alpha, beta=beta)
        shape = list(shape_of("Beta", alpha=alpha, beta=beta))
        self.alpha, self.beta = alpha.broadcast_to(shape), beta.broadcast_to(shape)
        self._dirichlet = Dirichlet(stack([self.alpha, self.beta], -1))
        super().__init__(tuple(shape))

    @property
    def mean(self) -> Tensor:
        return self.alpha / (self.alpha + self.beta)

    @property
    def variance(self) -> Tensor:
        total = self.alpha + self.beta
        return self.alpha * self.beta / (total.pow(2) * (total + 1.0))

    def log_prob(self, value: Any) -> Tensor:
        value = as_value(value, self.alpha)
        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        return self._dirichlet._draw(shape, "Beta.sample", "alpha and beta")[..., 0]

    def entropy(self) -> Tensor:
        return self._dirichlet.entropy()

    @property
    def _natural_parameters(self) -> tuple:
        return (self.alpha, self.beta)

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return x.lgamma() + y.lgamma() - (x + y).lgamma()

    @property
    def _mean_carrier_measure(self) -> float:
        return 0.0
