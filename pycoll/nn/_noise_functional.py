"""Functions that draw random numbers from pycoll's generator (`pycoll.seed`), beyond
`_dropout_functional`: alpha_dropout and feature_alpha_dropout (SELU-preserving dropout),
dropout3d, and gumbel_softmax."""
from __future__ import annotations

from typing import Optional

import numpy as np

from pycoll._fp_quiet import quiet
from pycoll._tensor_ops import as_tensor, op_output, placed, require_floating
from pycoll.device import array_module, move, place_of
from pycoll.nn._dropout_functional import drop_probability, dropout
from pycoll.random import get_rng
from pycoll.tensor import Tensor

__all__ = ["alpha_dropout", "feature_alpha_dropout", "dropout3d", "gumbel_softmax"]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _alpha_dropout(fn: str, x: Tensor, p: float, training: bool, per_feature: bool) -> Tensor:
    """paddle's alpha dropout: dropped elements take SELU's saturation value -alpha * scale, then
    everything is mapped by a * y + b so that a zero-mean unit-variance input keeps its moments.
    per_feature draws one mask per [N, C] and shares it over the other axes."""
    p = drop_probability(fn, p)
    x = require_floating(as_tensor(x), fn)
    if per_feature and x.ndim < 2:
        raise ValueError(f"{fn}: x must have at least 2 dimensions, got shape {x.shape}")
    if not training or p == 0:
        return x
    a = x._array
    saturation = -_SELU_ALPHA * _SELU_SCALE
    scale = ((1 - p) * (1 + p * saturation ** 2)) ** -0.5 if p < 1 else 0.0
    shift = -scale * saturation * p
    shape = tuple(a.shape[:2]) + (1,) * (a.ndim - 2) if per_feature else a.shape
    keep = move(get_rng().random(shape, dtype=np.float32) >= np.float32(p), place_of(a))
    factor = (keep * scale).astype(a.dtype)
    with quiet():  # a dropped inf or NaN (times 0): NaN, silently as paddle's
        out = (a * factor + (~keep * (saturation * scale) + shift).astype(a.dtype)).astype(a.dtype, copy=False)
    return op_output(out, lambda g: (g * factor,), x)


def alpha_dropout(x: Tensor, p: float = 0.5, training: bool = True, name: Optional[str] = None) -> Tensor:
    """Alpha dropout of each element with probability p while training; x itself otherwise."""
    return _alpha_dropout("alpha_dropout", x, p, training, per_feature=False)


def feature_alpha_dropout(x: Tensor, p: float = 0.5, training: bool = True, name: Optional[str] = None) -> Tensor:
    """Alpha dropout of whole channels (one draw per sample and channel) while training."""
    return _alpha_dropout("feature_alpha_dropout", x, p, training, per_feature=True)


def dropout3d(x: Tensor, p: float = 0.5, training: bool = True, data_format: str = "NCDHW",
              name: Optional[str] = None) -> Tensor:
    """Zero whole channels of x [N, C, D, H, W] (or NDHWC) with probability p, the rest scaled by
    1 / (1 - p): `dropout` with the mask drawn over the batch and channel axes."""
    x = as_tensor(x)
    if x.ndim != 5:
        raise ValueError(f"dropout3d: x must have 5 dimensions, got shape {x.shape}")
    if data_format not in ("NCDHW", "NDHWC"):
        raise ValueError(f"dropout3d: data_format must be 'NCDHW' or 'NDHWC', got {data_format!r}")
    return dropout(x, drop_probability("dropout3d", p), [0, 1] if data_format == "NCDHW" else [0, 4], training)


def gumbel_softmax(x: Tensor, temperature: float = 1.0, hard: bool = False, axis: int = -1,
                   name: Optional[str] = None) -> Tensor:
    """softmax((x + G) / temperature) along `axis`, G Gumbel(0, 1) noise (-log(-log(U))); with
    `hard`, the one-hot vector of that sample's largest entry.

    The gradient is paddle 3.3.1's kernel's: softmax's Jacobian at the output, out * (g - sum(g *
    out)), without the 1 / temperature factor of the calculus, and for `hard` taken at the one-hot
    output, which makes it zero."""
    fn = "gumbel_softmax"
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or not temperature > 0:
        raise ValueError(f"{fn}: temperature must be a number > 0, got {temperature!r}")
    x, = placed(fn, require_floating(as_tensor(x), fn), axes=None)  # auto-parallel: whole, as paddle's
    a = x._array
    if not -max(a.ndim, 1) <= axis < max(a.ndim, 1):
        raise ValueError(f"{fn}: axis must be in [-{a.ndim}, {a.ndim}), got {axis}")
    xp = array_module(a)
    u = move(get_rng().random(a.shape), place_of(a))
    with quiet():  # inf/NaN logits or an infinite temperature: inf/NaN silently, as paddle's
        noisy = (a - xp.log(-xp.log(xp.maximum(u, np.finfo(np.float64).tiny)))) / temperature
        e = xp.exp(noisy - noisy.max(axis=axis, keepdims=True))
        out = (e / e.sum(axis=axis, keepdims=True)).astype(a.dtype, copy=False)
    if hard:
        ax = axis % a.ndim
        positions = xp.arange(a.shape[ax]).reshape([-1 if i == ax else 1 for i in range(a.ndim)])
        out = (positions == xp.expand_dims(out.argmax(axis=ax), ax)).astype(a.dtype)
    return op_output(out, lambda g: (out * (g - (g * out).sum(axis=axis, keepdims=True)),), x)

