"""paddle's ``poisson(x)``, ``binomial(count, prob)`` and ``standard_gamma(x)``: draws from
pycoll's one host generator (`pycoll.random`, as `pycoll.sampling`'s), moved to the input's place. The
samples take no gradient (paddle's are stop_gradient too)."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from pycoll._tensor_ops import as_tensor
from pycoll.dtypes import is_floating
from pycoll.random import get_rng
from pycoll.reshape_ops import broadcast_tensors
from pycoll.sampling import _laid_as
from pycoll.tensor import Tensor


def _host(x: Tensor, fn: str, arg: str) -> np.ndarray:
    """x's values on the host as float64, x being floating-point."""
    if not is_floating(x.dtype):
        raise TypeError(f"{fn}: {arg} must be a floating-point tensor (float16/bfloat16/float32/float64), "
                        f"got {x.dtype}")
    return np.asarray(x.numpy(), dtype=np.float64)


def binomial(count: Any, prob: Any, name: Optional[str] = None) -> Tensor:
    """int64 draws from Binomial(count, prob), count and prob broadcast together."""
    count, prob = as_tensor(count), as_tensor(prob)
    if count.dtype.kind not in "iuf":
        raise TypeError(f"binomial: count must be an integer (or whole-valued float) tensor, got {count.dtype}")
    count, prob = broadcast_tensors([count, prob])
    p = _host(prob, "binomial", "prob")
    n = np.asarray(count.numpy(), dtype=np.float64)
    if np.any(n < 0) or np.any(n != np.floor(n)):
        raise ValueError(f"binomial: count must hold whole numbers >= 0, got {n[(n < 0) | (n != np.floor(n))][:3]}")
    if np.any((p < 0) | (p > 1)) or np.any(np.isnan(p)):
        raise ValueError(f"binomial: prob must lie in [0, 1], got {p[(p < 0) | (p > 1) | np.isnan(p)][:3]}")
    return _laid_as(np.asarray(get_rng().binomial(n.astype(np.int64), p)).astype(np.int64), prob)


def poisson(x: Any, name: Optional[str] = None) -> Tensor:
    """Draws from Poisson distributions of rates x, in x's dtype. A rate below 0, NaN or too large
    for a count (paddle 3.3.1 draws 0 for the first two and -2**31 for inf) is refused."""
    x = as_tensor(x)
    rates = _host(x, "poisson", "x")
    wrong = ~((rates >= 0) & (rates <= _LARGEST_RATE))
    if wrong.any():
        raise ValueError(f"poisson: x (the rates) must lie in [0, {_LARGEST_RATE:.3g}], got {rates[wrong][:3]}")
    return _laid_as(np.asarray(get_rng().poisson(rates)).astype(x.dtype), x)


_LARGEST_RATE = 9.2e18  # NumPy's bound, where a draw could overflow int64


def standard_gamma(x: Any, name: Optional[str] = None) -> Tensor:
    """Draws from Gamma(alpha=x, beta=1), in x's dtype (alpha 0 draws 0)."""
    x = as_tensor(x)
    alpha = _host(x, "standard_gamma", "x")
    if np.any(alpha < 0) or np.any(np.isnan(alpha)):
        raise ValueError(f"standard_gamma: x (the shape alpha) must be >= 0, got {alpha[(alpha < 0) | np.isnan(alpha)][:3]}")
    return _laid_as(np.asarray(get_rng().standard_gamma(alpha)).astype(x.dtype), x)
