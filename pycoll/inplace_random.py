"""paddle's in-place random fills beyond uniform_ / normal_: ``exponential_``, ``bernoulli_``,
``log_normal_`` and ``random_`` (Tensor methods; ``bernoulli_`` and ``log_normal_`` also
top-level), with ``log_normal``, the sampling function, and ``gaussian_`` (only at
``paddle.tensor.random.gaussian_``, as paddle's).

They follow `pycoll.inplace_ops.random_fill`: values drawn on the host from pycoll's generator,
then moved to x's place; a gradient through them is zero; a leaf that takes a gradient is refused
outside no_grad, as for uniform_.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from pycoll._param_aliases import param_aliases
from pycoll.dtypes import is_floating
from pycoll.inplace_ops import random_fill
from pycoll.math_ops import exp
from pycoll.random import normal_draw
from pycoll.sampling import normal
from pycoll.tensor import Tensor


def _number(value: Any, fn: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{fn}: {name} must be a number, got {type(value).__name__}")
    return float(value)


@param_aliases({"lambd": "lam"})
def exponential_(x: Tensor, lam: float = 1.0, name: Optional[str] = None) -> Tensor:
    """Fill x with draws from the exponential distribution of rate `lam` (mean 1 / lam)."""
    lam = _number(lam, "exponential_", "lam")
    if lam <= 0:
        raise ValueError(f"exponential_: lam must be > 0, got {lam}")
    return random_fill(x, "exponential_", lambda rng: rng.exponential(1.0 / lam, tuple(x.shape)))


def bernoulli_(x: Tensor, p: Any = 0.5, name: Optional[str] = None) -> Tensor:
    """Fill x with 1 with probability `p` (a number, or a Tensor broadcast to x's shape), else 0.
    A `p` below 0 gives 0 and one above 1 gives 1 (paddle's: its own example draws p with randn);
    a NaN p is refused (paddle fills in whatever its uniform draw was)."""
    prob = p.numpy() if isinstance(p, Tensor) else np.asarray(_number(p, "bernoulli_", "p"))
    if np.isnan(prob).any():
        raise ValueError("bernoulli_: p holds NaN; each probability must be a number")
    try:
        prob = np.broadcast_to(prob, tuple(x.shape))
    except ValueError:
        raise ValueError(f"bernoulli_: p of shape {list(prob.shape)} does not broadcast to x's shape "
                         f"{x.shape}") from None
    return random_fill(x, "bernoulli_", lambda rng: (rng.random(tuple(x.shape)) < prob).astype(np.float64))


def log_normal_(x: Tensor, mean: float = 1.0, std: float = 2.0, name: Optional[str] = None) -> Tensor:
    """Fill x with exp(N(mean, std ** 2)) draws: `mean` and `std` are the logarithm's."""
    mean, std = _number(mean, "log_normal_", "mean"), _number(std, "log_normal_", "std")
    if std < 0:
        raise ValueError(f"log_normal_: std must be >= 0, got {std}")
    draw = normal_draw(tuple(x.shape), mean, std, x.dtype.kind == "c")  # a complex x: exp of complex draws
    return random_fill(x, "log_normal_", lambda rng: np.exp(draw(rng)))


def log_normal(mean: Any = 1.0, std: Any = 2.0, shape: Any = None, name: Optional[str] = None) -> Tensor:
    """exp of ``normal(mean, std, shape)``: log-normal draws whose logarithm has that mean and std
    (numbers with `shape`, or tensors giving one draw per element)."""
    return exp(normal(mean, std, shape))


def gaussian_(x: Tensor, mean: Any = 0.0, std: float = 1.0, seed: int = 0, name: Optional[str] = None) -> Tensor:
    """Fill x with N(mean, std ** 2) draws (from a generator of its own for a non-zero ``seed``).
    A complex x takes real and imaginary parts each N(mean, std ** 2 / 2), so its mean is
    mean * (1 + 1j): a complex ``mean`` must have equal parts, and needs a complex x (paddle's)."""
    if isinstance(mean, complex):
        if x.dtype.kind != "c":
            raise TypeError(f"gaussian_: a complex mean needs x of dtype complex64 or complex128, got {x.dtype}")
        if mean.real != mean.imag:
            raise ValueError(f"gaussian_: a complex mean must have equal real and imaginary parts, got {mean}")
        mean = mean.real
    mean, std = _number(mean, "gaussian_", "mean"), _number(std, "gaussian_", "std")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"gaussian_: seed must be an int, got {type(seed).__name__}")
    return random_fill(x, "gaussian_", normal_draw(tuple(x.shape), mean, std, x.dtype.kind == "c"), int(seed))


_MANTISSA_BITS = {np.dtype(np.float16): 11, np.dtype(np.float32): 24, np.dtype(np.float64): 53}


def random_(x: Tensor, from_: int = 0, to: Optional[int] = None, *, generator: Any = None) -> Tensor:
    """Fill x with integers drawn uniformly from [from_, to - 1], in x's dtype. Without `to`:
    [0, from_ - 1] for a non-zero from_, else every integer x's dtype holds exactly (up to
    2 ** mantissa bits for floats, the dtype's maximum for integers). `generator` must be None
    (pycoll has one generator)."""
    if generator is not None:
        raise ValueError(f"random_: generator must be None (pycoll draws from its one generator), got {generator!r}")
    for value, label in ((from_, "from_"), (to, "to")):
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer))):
            raise TypeError(f"random_: {label} must be an int, got {value!r}")
    if to is None:
        if from_ != 0:
            from_, to = 0, from_
        elif is_floating(x.dtype):
            to = 2 ** _MANTISSA_BITS.get(x.dtype, 8)
        elif x.dtype.kind in "iu":
            to = int(np.iinfo(x.dtype).max)
    if to is not None and from_ >= to:
        raise ValueError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
    return random_fill(x, "random_", lambda rng: rng.integers(int(from_), int(to), tuple(x.shape)), integers=True)


for _fn in (exponential_, bernoulli_, log_normal_, random_):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
