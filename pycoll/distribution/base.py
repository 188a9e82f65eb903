"""paddle.distribution's base classes (`Distribution`, `ExponentialFamily`) and what every
distribution shares: turning constructor arguments and ``value`` arguments into Tensors, shapes,
and drawing the base noise of a sample.

Parameters given as Tensors are kept as they are (the same objects, so gradients reach them);
Python numbers, lists and NumPy arrays become Tensors in the dtype of a Tensor parameter given
beside them, else in the dtype the distribution's paddle class gives them (paddle's classes differ:
see ``keep_float64`` and the rules after it). Noise is drawn from pycoll's one generator
(`pycoll.random`, so `pycoll.seed` makes samples reproducible) on the host and moved to the
parameters' place; a reparameterized sample is then composed of differentiable ops on it.
"""
from __future__ import annotations

import functools
import inspect
import numbers
from typing import Any, Callable, Sequence, Tuple, TypeVar

import numpy as np

from pycoll._fp_quiet import quiet as fp_quiet
from pycoll import autograd
from pycoll.device import array_module, move, place_of
from pycoll.dtypes import get_default_dtype
from pycoll.grad_ops import grad
from pycoll.random import get_rng
from pycoll.reshape_ops import broadcast_shape
from pycoll.tensor import Tensor, to_tensor, wrap

_ACCEPTED = (numbers.Real, list, tuple, np.ndarray, Tensor)


# The dtype a parameter given as a number, list or NumPy array becomes, by paddle 3.3.1's class.
DtypeRule = Callable[[Any], str]


def keep_float64(value: Any) -> str:
    """float64 for float64 NumPy arrays, else float32, whatever the default dtype (paddle's
    ``Distribution._to_tensor``: Normal, Uniform, LogNormal, Geometric, Categorical)."""
    if isinstance(value, np.ndarray) and value.dtype == np.float64:
        return "float64"
    return "float32"


def always_float32(value: Any) -> str:
    """float32, float64 arrays included (paddle's Gamma, Exponential and Chi2 cast them)."""
    return "float32"


def numbers_default(value: Any) -> str:
    """The default dtype for numbers and lists (``paddle.full``/``to_tensor`` of a number), NumPy
    arrays as ``keep_float64`` (Beta, Laplace, Cauchy, Gumbel, Poisson, Binomial,
    ContinuousBernoulli)."""
    return keep_float64(value) if isinstance(value, np.ndarray) else get_default_dtype()


def all_default(value: Any) -> str:
    """The default dtype, NumPy arrays included (paddle's Bernoulli and StudentT cast them)."""
    return get_default_dtype()


def as_params(owner: str, dtype_rule: DtypeRule = keep_float64, **params: Any) -> Tuple[Tensor, ...]:
    """The named constructor arguments of distribution ``owner`` as Tensors (see the module's
    docstring), non-Tensors in ``dtype_rule(value)``; TypeError naming the argument for anything else."""
    tensors = [v for v in params.values() if isinstance(v, Tensor)]
    like = next((v for v in tensors if v.is_floating_point() or v.is_complex()), tensors[0] if tensors else None)
    floats = "float32" if like is None or not (like.is_floating_point() or like.is_complex()) else like.dtype
    out = []
    for name, value in params.items():
        if isinstance(value, bool) or not isinstance(value, _ACCEPTED):
            raise TypeError(f"{owner}: {name} must be a float, list, tuple, numpy.ndarray or Tensor, "
                            f"got {type(value).__name__}")
        if isinstance(value, Tensor):
            if not value.is_floating_point() and not value.is_complex():  # integer Tensors: paddle's float32
                value = value.astype(floats)
            out.append(value)
        else:
            dtype = floats if like is not None else dtype_rule(value)
            tensor = to_tensor(np.asarray(value), dtype=dtype)
            if like is not None:
                tensor = wrap(move(tensor._array, place_of(like._array)))
            out.append(tensor)
    return tuple(out)


def as_value(value: Any, like: Tensor) -> Tensor:
    """``value`` (of log_prob, cdf, ...) as a Tensor of ``like``'s dtype and place."""
    if isinstance(value, Tensor):
        return value if value.dtype == like.dtype else value.astype(like.dtype)
    if isinstance(value, bool) or not isinstance(value, _ACCEPTED):
        raise TypeError(f"value must be a float, list, numpy.ndarray or Tensor, got {type(value).__name__}")
    return wrap(move(np.asarray(value, dtype=like._array.dtype), place_of(like._array)))


def shape_of(owner: str, **params: Tensor) -> Tuple[int, ...]:
    """The broadcast shape of distribution ``owner``'s parameters ``params``; ValueError naming
    them where they do not broadcast."""
    shape: Sequence[int] = ()
    try:
        for t in params.values():
            shape = broadcast_shape(list(shape), list(t.shape))
    except ValueError:
        shapes = " and ".join(f"{name} of shape {list(t.shape)}" for name, t in params.items())
        raise ValueError(f"{owner}: {shapes} do not broadcast to one batch shape") from None
    return tuple(int(d) for d in shape)


def refuse_unless(owner: str, name: str, values: np.ndarray, ok: np.ndarray, want: str) -> None:
    """ValueError naming parameter ``name`` of ``owner`` (its method) unless every one of its
    host ``values`` is ``ok`` (a mask: NaN compares false, so it is refused too); NumPy's
    generator would say only "lam < 0" or "shape < 0"."""
    if not ok.all():
        raise ValueError(f"{owner}: {name} must be {want}, got {values[~ok].flat[0]}")


def sample_shape(shape: Any) -> Tuple[int, ...]:
    """``sample``'s ``shape`` argument (a sequence of ints) as a tuple; TypeError otherwise."""
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    if not isinstance(shape, (list, tuple)) or not all(isinstance(d, (int, np.integer)) for d in shape):
        raise TypeError(f"sample shape must be a list or tuple of ints, got {shape!r}")
    return tuple(int(d) for d in shape)


def noise(draw: Callable[[np.random.Generator, Tuple[int, ...]], np.ndarray], shape: Tuple[int, ...],
          like: Tensor) -> Tensor:
    """``draw(generator, shape)`` from pycoll's generator, in ``like``'s dtype and place, no gradient."""
    host = np.asarray(draw(get_rng(), shape)).astype(like._array.dtype, copy=False)
    return wrap(move(host, place_of(like._array)))


def support_values(end: int, like: Tensor) -> Tensor:
    """0, 1, ..., end - 1 in ``like``'s dtype, on ``like``'s place (not the current device's)."""
    a = like._array
    return wrap(array_module(a).arange(0, end, dtype=a.dtype))


F = TypeVar("F", bound=Callable[..., Any])


def quiet(fn: F) -> F:
    """``fn`` run with NumPy's floating-point warnings off (``pycoll._fp_quiet``; re-entrant)."""
    @functools.wraps(fn)
    def quieted(*args: Any, **kwargs: Any) -> Any:
        with fp_quiet():
            return fn(*args, **kwargs)
    return quieted  # type: ignore[return-value]


class QuietMembers:
    """A base whose subclasses' constructors, public methods and properties run ``quiet``, wrapped
    as each subclass is defined (its own overrides too). Densities at and past a support's edge
    are log(0) = -inf, 0/0 = NaN, overflows to inf: answers, as paddle's, not faults, and pycoll
    prints nothing, so NumPy's RuntimeWarnings about them must not reach the user (CuPy raises
    none). The values are unchanged; gradients run later, in the ops' own backward functions."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name, member in list(vars(cls).items()):
            if name.startswith("_") and name != "__init__":
                continue
            if isinstance(member, property) and member.fget is not None:
                setattr(cls, name, property(quiet(member.fget), member.fset, member.fdel, member.__doc__))
            elif inspect.isfunction(member):
                setattr(cls, name, quiet(member))


class Distribution(QuietMembers):
    """paddle.distribution.Distribution: the interface every distribution implements. Its methods
    and its subclasses' compute without NumPy's floating-point warnings (``QuietMembers``)."""

    def __init__(self, batch_shape: Sequence[int] = (), event_shape: Sequence[int] = ()) -> None:
        self._batch_shape = tuple(int(d) for d in batch_shape)
        self._event_shape = tuple(int(d) for d in event_shape)

    @property
    def batch_shape(self) -> Tuple[int, ...]:
        """The shape of the batch of independent distributions."""
        return self._batch_shape

    @property
    def event_shape(self) -> Tuple[int, ...]:
        """The shape of one draw."""
        return self._event_shape

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    def sample(self, shape: Sequence[int] = ()) -> Tensor:
        """A draw of shape ``shape + batch_shape + event_shape``, no gradient (``rsample`` under no_grad)."""
        with autograd.no_grad():
            out = self.rsample(shape)
        out.stop_gradient = True
        return out

    def rsample(self, shape: Sequence[int] = ()) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no reparameterized sample")

    def entropy(self) -> Tensor:
        raise NotImplementedError

    def kl_divergence(self, other: "Distribution") -> Tensor:
        """KL(self || other); `pycoll.distribution.kl` puts its registry's dispatch here."""
        raise NotImplementedError

    def prob(self, value: Any) -> Tensor:
        """exp(log_prob(value))."""
        return self.log_prob(value).exp()

    def log_prob(self, value: Any) -> Tensor:
        raise NotImplementedError

    def probs(self, value: Any) -> Tensor:
        """paddle's older name of ``prob``."""
        return self.prob(value)

    def _extend_shape(self, sample_shape: Sequence[int]) -> Tuple[int, ...]:
        return tuple(sample_shape) + self._batch_shape + self._event_shape

    def __repr__(self) -> str:
        return f"{type(self).__name__}(batch_shape={list(self.batch_shape)}, event_shape={list(self.event_shape)})"


class ExponentialFamily(Distribution):
    """paddle.distribution.ExponentialFamily: p(x) = h(x) exp(<eta, T(x)> - A(eta)). Its entropy is
    A(eta) - <eta, dA/deta> - E[log h(x)], with dA/deta taken by pycoll's autograd; a subclass gives
    ``_natural_parameters``, ``_log_normalizer(*eta)`` and ``_mean_carrier_measure``."""

    @property
    def _natural_parameters(self) -> Tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_parameters: Tensor) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        etas = []
        for eta in self._natural_parameters:
            eta = eta.detach()
            eta.stop_gradient = False
            etas.append(eta)
        with autograd.enable_grad():
            log_norm = self._log_normalizer(*etas)
            grads = grad(log_norm.sum(), etas)
        out = log_norm - self._mean_carrier_measure
        for eta, g in zip(etas, grads):
            out = out - eta * g
        return out
