"""paddle.distribution's bijective transforms: ``forward``, ``inverse``, their log-det-Jacobians and
the shapes they map, all made of differentiable pycoll ops.

As paddle's, a transform's ``_domain`` and ``_codomain`` are random variables
(``pycoll.distribution.variable``) whose ``event_rank`` says how many rightmost axes it acts on
together (0: elementwise; 1: a vector, as softmax), and ``_type`` (a ``Type``) says whether it is
injective; the composites read the ranks through them, so a user's subclass that gives its own
``_domain``/``_codomain`` (paddle's way) composes as pycoll's do. A subclass gives ``_forward``,
``_inverse`` and one of ``_forward_log_det_jacobian`` / ``_inverse_log_det_jacobian``, and
``_forward_shape`` / ``_inverse_shape`` where it changes shapes (paddle's hooks)."""
from __future__ import annotations

import enum
import math
from typing import Any, Sequence, Tuple

import numpy as np

from pycoll.creation import zeros
from pycoll.distribution import constraint, variable
from pycoll.distribution.base import Distribution, QuietMembers, support_values
from pycoll.nn.functional import softplus
from pycoll.shape_ops import concat, stack
from pycoll.tensor import Tensor

__all__ = ["Transform", "AbsTransform", "AffineTransform", "ChainTransform", "ExpTransform", "IndependentTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftmaxTransform", "StackTransform",
           "StickBreakingTransform", "TanhTransform"]


def _tensor(x: Any, name: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} must be a Tensor, got {type(x).__name__}")
    return x


class Type(enum.Enum):
    """What kind of mapping a transform is (paddle's ``paddle.distribution.transform.Type``)."""

    BIJECTION = "bijection"
    INJECTION = "injection"
    SURJECTION = "surjection"
    OTHER = "other"

    @classmethod
    def is_injective(cls, _type: "Type") -> bool:
        """Bijections and injections are injective."""
        return _type in (cls.BIJECTION, cls.INJECTION)


def _of_rank(rank: int) -> variable.Variable:
    """A real variable taken ``rank`` axes at a time."""
    return variable.real if rank == 0 else variable.Independent(variable.real, rank)


def _sum_rightmost(value: Tensor, n: int) -> Tensor:
    return value.sum(list(range(-n, 0))) if n > 0 else value


def _event_log_det(t: "Transform", x: Tensor, n: int) -> Tensor:
    """``t``'s log-det-Jacobian at ``x`` with its ``n`` rightmost axes (one event's elements) summed.
    Unsummed it is the public value, shaped as paddle's; summing takes one term per element, since
    paddle 3.3.1 sums AffineTransform's unbroadcast log|scale| and so counts it once per event instead
    of once per element (a wrong density)."""
    if n == 0:
        return t.forward_log_det_jacobian(x)
    return _sum_rightmost(t._log_det_per_element(x), n)


class Transform(QuietMembers):
    """The base: a subclass gives ``_forward``, ``_inverse`` and ``_forward_log_det_jacobian`` or
    ``_inverse_log_det_jacobian`` (see the module's docstring). Public methods compute without
    NumPy's floating-point warnings (see ``QuietMembers``)."""

    _type = Type.INJECTION

    # TransformedDistribution, set by pycoll.distribution.transformed (which imports this module)
    _transformed: Any = None

    def __call__(self, input: Any) -> Any:  # noqa: A002 - paddle's name
        """A Distribution: its TransformedDistribution; a Transform: the chain; else ``forward``."""
        if isinstance(input, Distribution):
            return Transform._transformed(input, [self])
        if isinstance(input, Transform):
            return ChainTransform([self, input])
        return self.forward(input)

    @classmethod
    def _is_injective(cls) -> bool:
        return Type.is_injective(cls._type)

    _domain: variable.Variable = variable.real  # elementwise; subclasses override (a property where it varies)
    _codomain: variable.Variable = variable.real

    def forward(self, x: Tensor) -> Tensor:
        return self._forward(self._checked(x, "x", self._domain))

    def inverse(self, y: Tensor) -> Tensor:
        return self._inverse(self._checked(y, "y", self._codomain))

    def forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        x = self._checked(x, "x", self._domain)
        if not self._is_injective():
            raise NotImplementedError(f"{type(self).__name__} is not injective: it has no forward_log_det_jacobian")
        if _overrides(self, "_forward_log_det_jacobian") or not hasattr(self, "_inverse_log_det_jacobian"):
            return self._forward_log_det_jacobian(x)
        return -self._inverse_log_det_jacobian(self.forward(x))

    def inverse_log_det_jacobian(self, y: Tensor) -> Tensor:
        y = self._checked(y, "y", self._codomain)
        if hasattr(self, "_inverse_log_det_jacobian"):
            return self._inverse_log_det_jacobian(y)
        return -self._forward_log_det_jacobian(self.inverse(y))

    def forward_shape(self, shape: Sequence[int]) -> Tuple[int, ...]:
        return tuple(self._forward_shape(shape))

    def inverse_shape(self, shape: Sequence[int]) -> Tuple[int, ...]:
        return tuple(self._inverse_shape(shape))

    def _checked(self, value: Any, name: str, space: variable.Variable) -> Tensor:
        """``value`` as given, a Tensor with at least ``space``'s event rank of dimensions."""
        value = _tensor(value, name)
        if value.ndim < space.event_rank:
            raise ValueError(f"{type(self).__name__}: {name} must have at least {space.event_rank} dimensions "
                             f"(the event it acts on), got shape {list(value.shape)}")
        return value

    def _forward_shape(self, shape: Sequence[int]) -> Sequence[int]:
        return shape

    def _inverse_shape(self, shape: Sequence[int]) -> Sequence[int]:
        return shape

    def _forward(self, x: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}: a Transform subclass defines _forward(x)")

    def _inverse(self, y: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}: a Transform subclass defines _inverse(y)")

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__}: a Transform subclass defines _forward_log_det_jacobian(x) "
                                  f"or _inverse_log_det_jacobian(y)")

    def _log_det_per_element(self, x: Tensor) -> Tensor:
        """The log-det-Jacobian with a term for each element of ``x`` (see ``_event_log_det``)."""
        return self.forward_log_det_jacobian(x)


def _overrides(transform: Transform, method: str) -> bool:
    return getattr(type(transform), method) is not getattr(Transform, method)


class AbsTransform(Transform):
    """y = |x|; not injective: ``inverse`` gives the pair (-y, y)."""

    _type = Type.SURJECTION
    _codomain = variable.positive

    def _forward(self, x: Tensor) -> Tensor:
        return x.abs()

    def _inverse(self, y: Tensor) -> Tuple[Tensor, Tensor]:  # type: ignore[override]
        return -y, y

    def inverse_log_det_jacobian(self, y: Tensor) -> Tuple[Tensor, Tensor]:  # type: ignore[override]
        zero = zeros([], dtype=_tensor(y, "y").dtype)  # shape [] as paddle's
        return zero, zero


class AffineTransform(Transform):
    """y = loc + scale * x. Its log-det-Jacobian is log|scale| in scale's shape, as paddle 3.3.1 gives
    it; where a composite sums an event's terms, each element's term counts (``_event_log_det``)."""

    _type = Type.BIJECTION

    def __init__(self, loc: Tensor, scale: Tensor) -> None:
        self.loc, self.scale = _tensor(loc, "loc"), _tensor(scale, "scale")

    def forward_shape(self, shape: Sequence[int]) -> Tuple[int, ...]:
        """``shape`` broadcast with loc's and scale's (paddle's: a batch of them widens the batch)."""
        return np.broadcast_shapes(tuple(shape), tuple(self.loc.shape), tuple(self.scale.shape))

    inverse_shape = forward_shape

    def _forward(self, x: Tensor) -> Tensor:
        return self.loc + self.scale * x

    def _inverse(self, y: Tensor) -> Tensor:
        return (y - self.loc) / self.scale

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        return self.scale.abs().log()

    def _log_det_per_element(self, x: Tensor) -> Tensor:
        return self.forward_log_det_jacobian(x) + x * 0.0


class ExpTransform(Transform):
    """y = exp(x)."""

    _type = Type.BIJECTION
    _codomain = variable.positive

    def _forward(self, x: Tensor) -> Tensor:
        return x.exp()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        return x


class PowerTransform(Transform):
    """y = x ** power."""

    _type = Type.BIJECTION
    _codomain = variable.positive

    def __init__(self, power: Tensor) -> None:
        self.power = _tensor(power, "power")

    def forward_shape(self, shape: Sequence[int]) -> Tuple[int, ...]:
        """``shape`` broadcast with power's, as paddle's."""
        return np.broadcast_shapes(tuple(shape), tuple(self.power.shape))

    inverse_shape = forward_shape

    def _forward(self, x: Tensor) -> Tensor:
        return x.pow(self.power)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.pow(1.0 / self.power)

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        return (self.power * x.pow(self.power - 1.0)).abs().log()


class SigmoidTransform(Transform):
    """y = sigmoid(x)."""

    _codomain = variable.Variable(False, 0, constraint.Range(0.0, 1.0))

    def _forward(self, x: Tensor) -> Tensor:
        return x.sigmoid()

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log() - (-y).log1p()

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        return -softplus(-x) - softplus(x)


class TanhTransform(Transform):
    """y = tanh(x)."""

    _type = Type.BIJECTION
    _codomain = variable.Variable(False, 0, constraint.Range(-1.0, 1.0))

    def _forward(self, x: Tensor) -> Tensor:
        return x.tanh()

    def _inverse(self, y: Tensor) -> Tensor:
        return 0.5 * (y.log1p() - (-y).log1p())

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last axis (not injective: ``inverse`` gives log y)."""

    _type = Type.OTHER
    _domain = _of_rank(1)
    _codomain = variable.Variable(False, 1, constraint.simplex)

    def _forward(self, x: Tensor) -> Tensor:
        e = (x - x.max(-1, keepdim=True)).exp()
        return e / e.sum(-1, keepdim=True)

    def _inverse(self, y: Tensor) -> Tensor:
        return y.log()

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        raise NotImplementedError("SoftmaxTransform is not injective: it has no log-det-Jacobian")


class StickBreakingTransform(Transform):
    """R^K to the K-simplex of R^(K+1), by stick breaking."""

    _type = Type.BIJECTION
    _domain = _of_rank(1)
    _codomain = variable.Variable(False, 1, constraint.simplex)

    @staticmethod
    def _log_offset(k: int, like: Tensor) -> Tensor:
        """log([k, k-1, ..., 1]): centres the sticks so that x = 0 breaks them evenly."""
        return (k - support_values(k, like)).log()

    def _forward(self, x: Tensor) -> Tensor:
        z = (x - self._log_offset(int(x.shape[-1]), x)).sigmoid()
        ones = x[..., :1] * 0.0 + 1.0
        return concat([z, ones], -1) * concat([ones, (1.0 - z).cumprod(-1)], -1)

    def _inverse(self, y: Tensor) -> Tensor:
        head = y[..., :-1]
        remaining = 1.0 - head.cumsum(-1)
        return head.log() - remaining.log() + self._log_offset(int(head.shape[-1]), y)

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        y = self._forward(x)
        shifted = x - self._log_offset(int(x.shape[-1]), x)
        return (-shifted - softplus(-shifted) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape: Sequence[int]) -> Tuple[int, ...]:
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape: Sequence[int]) -> Tuple[int, ...]:
        return tuple(shape[:-1]) + (shape[-1] - 1,)


class ChainTransform(Transform):
    """The composition: ``transforms[0]`` applied first."""

    def __init__(self, transforms: Sequence[Transform]) -> None:
        if not isinstance(transforms, (list, tuple)) or not all(isinstance(t, Transform) for t in transforms):
            raise TypeError(f"ChainTransform: transforms must be a sequence of Transform, got {transforms!r}")
        self.transforms = list(transforms)

    def _is_injective(self) -> bool:  # type: ignore[override]
        return all(t._is_injective() for t in self.transforms)

    @property
    def _domain(self) -> variable.Variable:
        """The fewest event axes an input needs so that each transform gets its own (paddle's)."""
        if not self.transforms:
            return variable.real
        rank = self.transforms[-1]._codomain.event_rank
        for t in reversed(self.transforms):
            rank = max(rank - (t._codomain.event_rank - t._domain.event_rank), t._domain.event_rank)
        first = self.transforms[0]._domain
        return variable.Independent(first, rank - first.event_rank)

    @property
    def _codomain(self) -> variable.Variable:
        if not self.transforms:
            return variable.real
        rank = self.transforms[0]._domain.event_rank
        for t in self.transforms:
            rank = max(rank + (t._codomain.event_rank - t._domain.event_rank), t._codomain.event_rank)
        last = self.transforms[-1]._codomain
        return variable.Independent(last, rank - last.event_rank)

    def _forward(self, x: Tensor) -> Tensor:
        for t in self.transforms:
            x = t.forward(x)
        return x

    def _inverse(self, y: Tensor) -> Tensor:
        for t in reversed(self.transforms):
            y = t.inverse(y)
        return y

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        return self._total_log_det(x, _event_log_det)

    def _log_det_per_element(self, x: Tensor) -> Tensor:
        return self._total_log_det(x, lambda t, x, n: _sum_rightmost(t._log_det_per_element(x), n))

    def _total_log_det(self, x: Tensor, event_log_det: Any) -> Tensor:
        total, rank = 0.0, self._domain.event_rank
        for t in self.transforms:
            into, out = t._domain.event_rank, t._codomain.event_rank
            total = total + event_log_det(t, x, rank - into)
            x = t.forward(x)
            rank += out - into
        return total

    def forward_shape(self, shape: Sequence[int]) -> Tuple[int, ...]:
        for t in self.transforms:
            shape = t.forward_shape(shape)
        return tuple(shape)

    def inverse_shape(self, shape: Sequence[int]) -> Tuple[int, ...]:
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        return tuple(shape)


class IndependentTransform(Transform):
    """``base`` with its last ``reinterpreted_batch_rank`` dimensions taken as one event."""

    def __init__(self, base: Transform, reinterpreted_batch_rank: int) -> None:
        if not isinstance(base, Transform):
            raise TypeError(f"IndependentTransform: base must be a Transform, got {type(base).__name__}")
        if isinstance(reinterpreted_batch_rank, bool) or not isinstance(reinterpreted_batch_rank, int) \
                or reinterpreted_batch_rank <= 0:
            raise ValueError(f"IndependentTransform: reinterpreted_batch_rank must be an int > 0, "
                             f"got {reinterpreted_batch_rank!r}")
        self._base, self._reinterpreted_batch_rank = base, reinterpreted_batch_rank

    def _is_injective(self) -> bool:  # type: ignore[override]
        return self._base._is_injective()

    @property
    def _domain(self) -> variable.Variable:
        return variable.Independent(self._base._domain, self._reinterpreted_batch_rank)

    @property
    def _codomain(self) -> variable.Variable:
        return variable.Independent(self._base._codomain, self._reinterpreted_batch_rank)

    def _forward(self, x: Tensor) -> Tensor:
        return self._base.forward(x)

    def _inverse(self, y: Tensor) -> Tensor:
        return self._base.inverse(y)

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        return _event_log_det(self._base, x, self._reinterpreted_batch_rank)

    def forward_shape(self, shape: Sequence[int]) -> Tuple[int, ...]:
        return self._base.forward_shape(shape)

    def inverse_shape(self, shape: Sequence[int]) -> Tuple[int, ...]:
        return self._base.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the event from ``in_event_shape`` to ``out_event_shape`` (same number of elements)."""

    _type = Type.BIJECTION

    def __init__(self, in_event_shape: Sequence[int], out_event_shape: Sequence[int]) -> None:
        self.in_event_shape, self.out_event_shape = tuple(in_event_shape), tuple(out_event_shape)
        if math.prod(self.in_event_shape) != math.prod(self.out_event_shape):
            raise ValueError(f"ReshapeTransform: in_event_shape {self.in_event_shape} and out_event_shape "
                             f"{self.out_event_shape} must hold the same number of elements")

    @property
    def _domain(self) -> variable.Variable:
        return _of_rank(len(self.in_event_shape))

    @property
    def _codomain(self) -> variable.Variable:
        return _of_rank(len(self.out_event_shape))

    def _forward(self, x: Tensor) -> Tensor:
        batch = list(x.shape[:x.ndim - len(self.in_event_shape)])
        return x.reshape(batch + list(self.out_event_shape))

    def _inverse(self, y: Tensor) -> Tensor:
        batch = list(y.shape[:y.ndim - len(self.out_event_shape)])
        return y.reshape(batch + list(self.in_event_shape))

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        rank = len(self.in_event_shape)
        return x.sum(list(range(-rank, 0))) * 0.0 if rank else x * 0.0

    def forward_shape(self, shape: Sequence[int]) -> Tuple[int, ...]:
        n = len(shape) - len(self.in_event_shape)
        if n < 0 or tuple(shape[n:]) != self.in_event_shape:
            raise ValueError(f"ReshapeTransform: shape {tuple(shape)} does not end with {self.in_event_shape}")
        return tuple(shape[:n]) + self.out_event_shape

    def inverse_shape(self, shape: Sequence[int]) -> Tuple[int, ...]:
        n = len(shape) - len(self.out_event_shape)
        if n < 0 or tuple(shape[n:]) != self.out_event_shape:
            raise ValueError(f"ReshapeTransform: shape {tuple(shape)} does not end with {self.out_event_shape}")
        return tuple(shape[:n]) + self.in_event_shape


class StackTransform(Transform):
    """``transforms[i]`` applied to slice i of ``axis``."""

    def __init__(self, transforms: Sequence[Transform], axis: int = 0) -> None:
        if not isinstance(transforms, (list, tuple)) or not transforms \
                or not all(isinstance(t, Transform) for t in transforms):
            raise TypeError(f"StackTransform: transforms must be a non-empty sequence of Transform, got {transforms!r}")
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise TypeError(f"StackTransform: axis must be an int, got {axis!r}")
        self.transforms, self.axis = list(transforms), axis

    def _is_injective(self) -> bool:  # type: ignore[override]
        return all(t._is_injective() for t in self.transforms)

    @property
    def _domain(self) -> variable.Variable:
        return variable.Stack([t._domain for t in self.transforms], self.axis)

    @property
    def _codomain(self) -> variable.Variable:
        return variable.Stack([t._codomain for t in self.transforms], self.axis)

    def _each(self, x: Tensor, method: str) -> Tensor:
        if int(x.shape[self.axis]) != len(self.transforms):
            raise ValueError(f"StackTransform: axis {self.axis} of the input has {x.shape[self.axis]} slices, "
                             f"expected {len(self.transforms)}")
        parts = x.unbind(self.axis)
        return stack([getattr(t, method)(p) for t, p in zip(self.transforms, parts)], self.axis)

    def _forward(self, x: Tensor) -> Tensor:
        return self._each(x, "forward")

    def _inverse(self, y: Tensor) -> Tensor:
        return self._each(y, "inverse")

    def _forward_log_det_jacobian(self, x: Tensor) -> Tensor:
        return self._each(x, "_log_det_per_element")
