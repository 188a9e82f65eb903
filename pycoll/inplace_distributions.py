"""paddle's in-place fills ``cauchy_`` and ``geometric_`` (functions and Tensor methods), drawn as
`pycoll.inplace_ops.random_fill` draws (host values from pycoll's generator, moved to x's place;
a leaf that takes a gradient is refused outside no_grad)."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from pycoll.inplace_ops import random_fill
from pycoll.inplace_random import _number
from pycoll.tensor import Tensor


def cauchy_(x: Tensor, loc: Any = 0, scale: Any = 1, name: Optional[str] = None) -> Tensor:
    """Fill x with draws from the Cauchy distribution of median `loc` and half-width `scale`:
    loc + scale * tan(pi * (u - 1/2)) for u uniform on (0, 1)."""
    loc, scale = _number(loc, "cauchy_", "loc"), _number(scale, "cauchy_", "scale")
    if scale <= 0:
        raise ValueError(f"cauchy_: scale must be > 0, got {scale}")
    return random_fill(x, "cauchy_", lambda rng: loc + scale * np.tan(np.pi * (rng.random(tuple(x.shape)) - 0.5)))


def geometric_(x: Tensor, probs: Any, name: Optional[str] = None) -> Tensor:
    """Fill x with log(u) / log(1 - probs) for u uniform on (0, 1]: paddle's geometric_, the
    continuous form of the number of trials to the first success (not rounded up to whole trials,
    as paddle does not round it). `probs` is a number in (0, 1) or a Tensor broadcast to x's shape."""
    p = probs.numpy() if isinstance(probs, Tensor) else np.asarray(_number(probs, "geometric_", "probs"))
    if np.any((p <= 0) | (p >= 1)):
        raise ValueError(f"geometric_: probs must lie in (0, 1), got {probs}")
    try:
        p = np.broadcast_to(p, tuple(x.shape))
    except ValueError:
        raise ValueError(f"geometric_: probs of shape {list(p.shape)} does not broadcast to x's shape "
                         f"{x.shape}") from None
    return random_fill(x, "geometric_", lambda rng: np.log1p(-rng.random(tuple(x.shape))) / np.log1p(-p))


for _fn in (cauchy_, geometric_):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
