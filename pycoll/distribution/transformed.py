"""TransformedDistribution (a base distribution pushed through transforms) and LogNormal, the
exponential of a Normal."""
from __future__ import annotations

from typing import Any, Sequence

from pycoll.distribution.base import Distribution, as_value, sample_shape
from pycoll.distribution.normal import Normal
from pycoll.distribution.transforms import ChainTransform, ExpTransform, Transform, _event_log_det, _sum_rightmost
from pycoll.tensor import Tensor


class TransformedDistribution(Distribution):
    """The law of ``transforms[-1](...transforms[0](x))`` for x drawn from ``base``."""

    def __init__(self, base: Distribution, transforms: Sequence[Transform]) -> None:
        if not isinstance(base, Distribution):
            raise TypeError(f"TransformedDistribution: base must be a Distribution, got {type(base).__name__}")
        if not isinstance(transforms, (list, tuple)) or not all(isinstance(t, Transform) for t in transforms):
            raise TypeError(f"TransformedDistribution: transforms must be a sequence of Transform, got {transforms!r}")
        self._base, self._transforms = base, list(transforms)
        chain = ChainTransform(self._transforms)
        base_shape = tuple(base.batch_shape) + tuple(base.event_shape)
        into, out = chain._domain.event_rank, chain._codomain.event_rank
        if len(base_shape) < into:
            raise ValueError(f"TransformedDistribution: base's shape {base_shape} has fewer than "
                             f"{into} dimensions, which the transforms act on")
        shape = chain.forward_shape(base_shape)
        event_rank = max(len(base.event_shape) + out - into, out)
        super().__init__(shape[:len(shape) - event_rank], shape[len(shape) - event_rank:])
        # the leading batch dimensions a transform's batched parameters add (AffineTransform's loc
        # [3, 1] over a base of batch [2]: batch [3, 2]): drawn from the base too, so that a sample
        # of any shape fits them (paddle's sample([n]) fails to broadcast there)
        self._added = tuple(self.batch_shape[:max(len(self.batch_shape) - len(base.batch_shape), 0)])

    @property
    def transforms(self) -> list:
        return self._transforms

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        x = self._base.sample(tuple(sample_shape(shape)) + self._added)
        for t in self._transforms:
            x = t.forward(x)
        return x

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        x = self._base.rsample(tuple(sample_shape(shape)) + self._added)
        for t in self._transforms:
            x = t.forward(x)
        return x

    def log_prob(self, value: Any) -> Tensor:
        y = value if isinstance(value, Tensor) else as_value(value, self._base.sample([]))
        log_prob: Any = 0.0
        event_rank = len(self.event_shape)
        for t in reversed(self._transforms):
            x = t.inverse(y)
            into = t._domain.event_rank
            event_rank += into - t._codomain.event_rank
            log_prob = log_prob - _event_log_det(t, x, event_rank - into)
            y = x
        return log_prob + _sum_rightmost(self._base.log_prob(y), event_rank - len(self._base.event_shape))


Transform._transformed = TransformedDistribution


class LogNormal(TransformedDistribution):
    """LogNormal(loc, scale): exp of Normal(loc, scale)."""

    def __init__(self, loc: Any, scale: Any) -> None:
        self._base = Normal(loc, scale)
        self.loc, self.scale = self._base.loc, self._base.scale
        super().__init__(self._base, [ExpTransform()])

    @property
    def mean(self) -> Tensor:
        return (self.loc + self.scale.pow(2) / 2.0).exp()

    @property
    def variance(self) -> Tensor:
        s2 = self.scale.pow(2)
        return s2.expm1() * (2.0 * self.loc + s2).exp()

    def entropy(self) -> Tensor:
        return self._base.entropy() + self.loc

    def probs(self, value: Any) -> Tensor:
        return self.prob(value)

    def cdf(self, value: Any) -> Tensor:
        return self._base.cdf(as_value(value, self.loc).log())
