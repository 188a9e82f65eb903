"""What the Adam family's updates share: paddle's float attributes, moving averages kept in place,
paddle's one-element beta-power accumulators, and the argument checks of betas and epsilons."""
from __future__ import annotations

import functools
import math
from typing import Any, Dict

import numpy as np

from pycoll._tensor_ops import one_number
from pycoll.optimizer._checks import real
from pycoll.optimizer.lr_scheduler import LRScheduler


def beta(value: Any, name: str) -> float:
    """A decay rate in [0, 1): a number or a one-element Tensor."""
    return real(one_number(value, name), name, low=0.0, high=1.0, high_open=True)


def non_negative(value: Any, name: str) -> float:
    return real(one_number(value, name), name, low=0.0)


def non_negative_rate(value: Any, name: str) -> Any:
    """A learning rate of at least 0, NaN refused (paddle's NAdam and RAdam); an LRScheduler as it is."""
    if isinstance(value, LRScheduler):
        return value
    v = real(value, name)
    if not v >= 0.0:
        raise ValueError(f"{name} must be >= 0 (NaN refused), got {value!r}")
    return v


def set_moment_options(opt: Any, beta1: Any, beta2: Any, epsilon: Any) -> None:
    """The Adam family's ``_beta1``, ``_beta2`` and ``_epsilon``, checked (numbers or one-element Tensors)."""
    opt._beta1, opt._beta2, opt._epsilon = beta(beta1, "beta1"), beta(beta2, "beta2"), non_negative(epsilon, "epsilon")


def attr(value: float, like: Any) -> Any:
    """``value`` as paddle's optimizer kernels see a float attribute (beta1, rho, ...): rounded
    to float32, then computed with in the dtype of ``like`` (the parameter or its master copy).
    It matters: 1 - 0.999 in float32 is 1.3e-5 away from 0.001."""
    return like.dtype.type(np.float32(value))


def average_(acc: Any, value: Any, rate: float) -> Any:
    """acc = rate * acc + (1 - rate) * value, in place (``rate`` as paddle's attribute); returns acc."""
    rate = attr(rate, acc)
    acc *= rate
    acc += (1 - rate) * value
    return acc


def scalar_dtype(like: Any) -> Any:
    """The dtype paddle keeps a parameter's one-element accumulators in (the beta powers):
    float64 for a float64 parameter, float32 for any other (16-bit ones included)."""
    return np.float64 if like.dtype == np.float64 else np.float32


def scalar_power(pows: Dict[str, float], key: str, rate: float, like: Any) -> Any:
    """paddle's one-element beta-power accumulator (Lamb's, Adamax's), computed in `scalar_dtype`
    as paddle's kernels compute it: rate^t while step t runs (it starts at rate, rounded to
    float32 as the kernel's float attribute), rate^(t+1) kept after it (a float holding that
    dtype's value exactly, so that a state saved in that dtype resumes bit for bit). Returns
    rate^t."""
    dtype = scalar_dtype(like)
    rate = dtype(np.float32(rate))
    now = dtype(pows.get(key, rate))
    pows[key] = float(now * rate)
    return now


@functools.lru_cache(maxsize=64)  # a state's parameters share their step count: one walk for all
def double_power(rate: float, saved: float) -> float:
    """The double power of `rate` that Adam holds after the steps whose power was saved as
    `saved` (rounded to float32, the dtype paddle's files keep it in): found among the powers
    that repeated multiplication gives near the step count log(saved)/log(rate), so that a resumed
    run continues bit for bit. `saved` itself when no step count fits it (a state from elsewhere);
    0.0 once float32 underflows (``1 - p`` is then 1.0 in double either way)."""
    if saved <= 0.0 or not 0.0 < rate < 1.0:
        return float(saved)
    steps = max(1, round(math.log(saved) / math.log(rate)))
    power = rate  # rate^t at step t, multiplied as Adam's steps multiply it
    for t in range(1, steps + 3):
        if t >= steps - 2 and np.float32(power) == np.float32(saved):
            return power
        power *= rate
    return float(saved)
