"""Negative log-likelihood losses of distributions (paddle.nn.functional names): poisson_nll_loss
and gaussian_nll_loss, composed of differentiable pycoll ops with paddle 3.3.1's formulas."""
from __future__ import annotations

import math
from typing import Optional

from pycoll._tensor_ops import as_tensor, require_floating
from pycoll.math_ops import clip, exp, log, square
from pycoll.nn._loss_functional import _check_reduction, _reduce
from pycoll.search_ops import where
from pycoll.shape_ops import unsqueeze
from pycoll.tensor import Tensor

__all__ = ["poisson_nll_loss", "gaussian_nll_loss"]


def poisson_nll_loss(input: Tensor, label: Tensor, log_input: bool = True, full: bool = False,  # noqa: A002
                     epsilon: float = 1e-8, reduction: str = "mean", name: Optional[str] = None) -> Tensor:
    """exp(input) - label * input (input a log rate), or with log_input=False input - label *
    log(input + epsilon); `full` adds Stirling's label log label - label + log(2 pi label) / 2
    where label > 1. Reduced."""
    fn = "poisson_nll_loss"
    if not epsilon > 0:
        raise ValueError(f"{fn}: epsilon must be > 0, got {epsilon}")
    _check_reduction(reduction)
    input, label = require_floating(as_tensor(input), fn, "input"), require_floating(as_tensor(label), fn, "label")
    if input.shape != label.shape:
        raise ValueError(f"{fn}: label shape {label.shape} must equal input shape {input.shape}")
    loss = exp(input) - label * input if log_input else input - label * log(input + epsilon)
    if full:
        big = label > 1
        safe = where(big, label, label * 0 + 1)  # no log of labels <= 1, whose term is 0
        stirling = safe * log(safe) - safe + 0.5 * log(2 * math.pi * safe)
        loss = loss + where(big, stirling, stirling * 0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input: Tensor, label: Tensor, variance: Tensor, full: bool = False,  # noqa: A002
                      epsilon: float = 1e-6, reduction: str = "mean", name: Optional[str] = None) -> Tensor:
    """(log(var) + (input - label)^2 / var) / 2 (+ log(2 pi) / 2 with `full`), var = variance
    clipped below at epsilon. variance has input's shape, or input's without its last axis, or
    that with a last axis of 1 (one variance per sample). As in paddle the clipped variance is
    computed outside the graph: variance itself gets no gradient. Negative variances are refused."""
    fn = "gaussian_nll_loss"
    _check_reduction(reduction)
    input, label = require_floating(as_tensor(input), fn, "input"), require_floating(as_tensor(label), fn, "label")
    variance = require_floating(as_tensor(variance), fn, "variance")
    if variance.shape != input.shape:
        if variance.shape == input.shape[:-1]:
            variance = unsqueeze(variance, -1)
        elif not (variance.shape[:-1] == input.shape[:-1] and variance.shape[-1:] == [1]):
            raise ValueError(f"{fn}: variance must have input's shape {input.shape}, that without its last axis, "
                             f"or that with a last axis of 1; got {variance.shape}")
    if bool((variance._array < 0).any()):
        raise ValueError(f"{fn}: variance has negative entries")
    var = clip(variance.detach(), min=epsilon)
    loss = 0.5 * (log(var) + square(input - label) / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)
