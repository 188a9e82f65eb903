"""``kl_divergence(p, q)`` and ``register_kl``: a table of KL formulas keyed by the pair of classes;
a pair is served by the registered pair of the most specific superclasses (paddle's dispatch).
Every distribution's ``kl_divergence`` method comes here too, so each formula is written once."""
from __future__ import annotations

import functools
import math
import warnings
from typing import Any, Callable, Dict, Tuple, Type

from pycoll.creation import full_like
from pycoll.distribution.base import Distribution, ExponentialFamily, quiet, support_values
from pycoll.distribution.continuous import Cauchy, Exponential, Laplace
from pycoll.distribution.continuous_bernoulli import ContinuousBernoulli
from pycoll.distribution.discrete import Bernoulli, Binomial, Categorical, Geometric, Poisson
from pycoll.distribution.gamma import Beta, Dirichlet, Gamma
from pycoll.distribution.multivariate import Independent, MultivariateNormal
from pycoll.distribution.normal import Normal, Uniform
from pycoll.distribution.transformed import LogNormal
from pycoll.grad_ops import grad
from pycoll.nn.functional import log_softmax, softplus
from pycoll.search_ops import where
from pycoll.tensor import Tensor

_REGISTRY: Dict[Tuple[type, type], Callable[[Any, Any], Tensor]] = {}


def register_kl(cls_p: Type[Distribution], cls_q: Type[Distribution]) -> Callable:
    """Decorator: ``fn(p, q)`` computes KL(p || q) for p of ``cls_p`` and q of ``cls_q``."""
    if not (isinstance(cls_p, type) and issubclass(cls_p, Distribution)
            and isinstance(cls_q, type) and issubclass(cls_q, Distribution)):
        raise TypeError(f"register_kl: cls_p and cls_q must be subclasses of Distribution, got {cls_p!r}, {cls_q!r}")

    def decorator(fn: Callable) -> Callable:
        _REGISTRY[cls_p, cls_q] = fn
        return fn
    return decorator


@functools.total_ordering
class _Specificity:
    """Orders registered pairs: a pair of subclasses comes before a pair of their bases."""

    def __init__(self, *classes: type) -> None:
        self.classes = classes

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Specificity) and self.classes == other.classes

    def __le__(self, other: "_Specificity") -> bool:
        for mine, theirs in zip(self.classes, other.classes):
            if not issubclass(mine, theirs):
                return False
            if mine is not theirs:
                break
        return True


def _dispatch(cls_p: type, cls_q: type) -> Callable:
    matches = [pair for pair in _REGISTRY if issubclass(cls_p, pair[0]) and issubclass(cls_q, pair[1])]
    if not matches:
        raise NotImplementedError(f"kl_divergence({cls_p.__name__}, {cls_q.__name__}) is not registered; "
                                  f"add it with register_kl({cls_p.__name__}, {cls_q.__name__})")
    left = min(_Specificity(*m) for m in matches).classes
    right = tuple(reversed(min(_Specificity(*reversed(m)) for m in matches).classes))
    if _REGISTRY[left] is not _REGISTRY[right]:
        warnings.warn(f"Ambiguous kl_divergence({cls_p.__name__}, {cls_q.__name__}); please "
                      f"register_kl({left[0].__name__}, {right[1].__name__})", RuntimeWarning)
    return _REGISTRY[left]


@quiet
def kl_divergence(p: Distribution, q: Distribution) -> Tensor:
    """KL(p || q), elementwise over the batch."""
    if not isinstance(p, Distribution) or not isinstance(q, Distribution):
        raise TypeError(f"kl_divergence: p and q must be Distributions, got {type(p).__name__} and "
                        f"{type(q).__name__}")
    return _dispatch(type(p), type(q))(p, q)


def _kl_method(self: Distribution, other: Distribution) -> Tensor:
    """KL(self || other), through the registry (every distribution's ``kl_divergence``)."""
    return kl_divergence(self, other)


Distribution.kl_divergence = _kl_method  # type: ignore[method-assign]


@register_kl(Normal, Normal)
def _normal(p: Normal, q: Normal) -> Tensor:
    ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * ratio + 0.5 * (t1 - 1.0 - ratio.log())


@register_kl(Uniform, Uniform)
def _uniform(p: Uniform, q: Uniform) -> Tensor:
    out = ((q.high - q.low) / (p.high - p.low)).log()
    return where((q.low > p.low) | (q.high < p.high), full_like(out, math.inf), out)  # out may be -inf


@register_kl(Categorical, Categorical)
def _categorical(p: Categorical, q: Categorical) -> Tensor:
    """Over softmax(logits), kept as [..., 1] (paddle's shape)."""
    log_p, log_q = log_softmax(p.logits, axis=-1), log_softmax(q.logits, axis=-1)
    return (log_p.exp() * (log_p - log_q)).sum(-1, keepdim=True)


@register_kl(Bernoulli, Bernoulli)
def _bernoulli(p: Bernoulli, q: Bernoulli) -> Tensor:
    pa = p.logits.sigmoid()
    log_pa, log_pb = -softplus(-p.logits), -softplus(-q.logits)
    log_1pa, log_1pb = -softplus(p.logits), -softplus(q.logits)
    return pa * (log_pa - log_pb) + (1.0 - pa) * (log_1pa - log_1pb)


@register_kl(Geometric, Geometric)
def _geometric(p: Geometric, q: Geometric) -> Tensor:
    a, b = p.probs, q.probs
    return a * (a / b).log() + (1.0 - a) * ((1.0 - a) / (1.0 - b)).log()


def _sum_over_support(p: Any, q: Any, values: Tensor) -> Tensor:
    log_p, log_q = p.log_prob(values), q.log_prob(values)
    return (log_p.exp() * (log_p - log_q)).sum(0)


@register_kl(Poisson, Poisson)
def _poisson(p: Poisson, q: Poisson) -> Tensor:
    if p.batch_shape != q.batch_shape:
        raise ValueError(f"kl_divergence(Poisson, Poisson): batch shapes differ: {p.batch_shape} and {q.batch_shape}")
    upper = p._upper(p.rate.maximum(q.rate))
    return _sum_over_support(p, q, support_values(upper - 1, p.rate).reshape([-1] + [1] * len(p.batch_shape)))


@register_kl(Binomial, Binomial)
def _binomial(p: Binomial, q: Binomial) -> Tensor:
    return _sum_over_support(p, q, support_values(p._support(), p.probs).reshape([-1] + [1] * len(p.batch_shape)))


@register_kl(Cauchy, Cauchy)
def _cauchy(p: Cauchy, q: Cauchy) -> Tensor:
    return ((p.scale + q.scale) ** 2 + (p.loc - q.loc) ** 2).log() - (4.0 * p.scale * q.scale).log()


@register_kl(Laplace, Laplace)
def _laplace(p: Laplace, q: Laplace) -> Tensor:
    t = (p.loc - q.loc).abs()
    return (p.scale * (-t / p.scale).exp() + t) / q.scale + (q.scale / p.scale).log() - 1.0


@register_kl(Exponential, Exponential)
def _exponential(p: Exponential, q: Exponential) -> Tensor:
    ratio = q.rate / p.rate
    return -ratio.log() + ratio - 1.0


@register_kl(Gamma, Gamma)
def _gamma(p: Gamma, q: Gamma) -> Tensor:
    a, b = p.concentration, q.concentration
    return (b * (p.rate / q.rate).log() + b.lgamma() - a.lgamma() + (a - b) * a.digamma()
            + (q.rate - p.rate) * (a / p.rate))


@register_kl(Beta, Beta)
def _beta(p: Beta, q: Beta) -> Tensor:
    sp, sq = p.alpha + p.beta, q.alpha + q.beta
    return (q.alpha.lgamma() + q.beta.lgamma() + sp.lgamma() - p.alpha.lgamma() - p.beta.lgamma() - sq.lgamma()
            + (p.alpha - q.alpha) * p.alpha.digamma() + (p.beta - q.beta) * p.beta.digamma()
            + (sq - sp) * sp.digamma())


@register_kl(Dirichlet, Dirichlet)
def _dirichlet(p: Dirichlet, q: Dirichlet) -> Tensor:
    a, b = p.concentration, q.concentration
    a0 = a.sum(-1)
    return (a0.lgamma() - b.sum(-1).lgamma() - (a.lgamma() - b.lgamma()).sum(-1)
            + ((a - b) * (a.digamma() - a0.digamma().unsqueeze(-1))).sum(-1))


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _continuous_bernoulli(p: ContinuousBernoulli, q: ContinuousBernoulli) -> Tensor:
    if p.batch_shape != q.batch_shape:
        raise ValueError(f"kl_divergence(ContinuousBernoulli, ContinuousBernoulli): batch shapes differ: "
                         f"{p.batch_shape} and {q.batch_shape}")
    log_q, log_1q = q.probs.log(), (-q.probs).log1p()
    return -p.entropy() - (q._log_constant() + p.mean * (log_q - log_1q) + log_1q)


@register_kl(MultivariateNormal, MultivariateNormal)
def _mvn(p: MultivariateNormal, q: MultivariateNormal) -> Tensor:
    return p._kl(q)


@register_kl(LogNormal, LogNormal)
def _lognormal(p: LogNormal, q: LogNormal) -> Tensor:
    return kl_divergence(p._base, q._base)


@register_kl(Independent, Independent)
def _independent(p: Independent, q: Independent) -> Tensor:
    if p.reinterpreted_batch_rank != q.reinterpreted_batch_rank:
        raise NotImplementedError("kl_divergence(Independent, Independent) of different reinterpreted_batch_rank")
    return p._sum_event(kl_divergence(p._base, q._base))


@register_kl(ExponentialFamily, ExponentialFamily)
def _exponential_family(p: ExponentialFamily, q: ExponentialFamily) -> Tensor:
    """The Bregman divergence of the log-normalizer, for two members of one family."""
    if type(p) is not type(q):
        raise NotImplementedError(f"kl_divergence({type(p).__name__}, {type(q).__name__}) is not registered")
    etas = []
    for eta in p._natural_parameters:
        eta = eta.detach()
        eta.stop_gradient = False
        etas.append(eta)
    log_norm = p._log_normalizer(*etas)
    grads = grad(log_norm.sum(), etas)
    out = q._log_normalizer(*q._natural_parameters) - log_norm
    n = len(q.event_shape)
    for eta_p, eta_q, g in zip(etas, q._natural_parameters, grads):
        term = (eta_q - eta_p) * g
        out = out - (term.sum(list(range(-n, 0))) if n else term)
    return out
