"""Elementwise losses (paddle.nn.functional names): mse_loss, l1_loss, smooth_l1_loss,
binary_cross_entropy, binary_cross_entropy_with_logits and kl_div, plus the reduction helpers the
classification losses share.

mse, l1 and smooth-l1 are compositions of pycoll ops (their gradients, label's included, follow);
the others are one op each with paddle's kernel formulas (the log clamp of bce, the ignored label
-100 of bce-with-logits) and give a gradient to the input only, as paddle's kernels do. A `weight`
multiplies the elementwise loss as an ordinary op, so it gets a gradient when it asks for one.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from pycoll._fp_quiet import quiet
from pycoll._tensor_ops import NoBroadcast, as_tensor, check_broadcast, op_output, placed
from pycoll.device import array_module
from pycoll.math_ops import abs, clip, log, mean, sigmoid_array, square, sum
from pycoll.tensor import Tensor

__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "kl_div", "log_loss"]

_REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(reduction: str, allowed: tuple = _REDUCTIONS) -> None:
    if reduction not in allowed:
        names = ", ".join(repr(r) for r in allowed)
        raise ValueError(f"reduction must be one of {names}, got {reduction!r}")


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return mean(loss)
    if reduction == "sum":
        return sum(loss)
    return loss


def _weighted_reduce(fn: str, loss: Tensor, weight: Optional[Tensor], reduction: str) -> Tensor:
    """loss * weight (broadcast, an op of its own: shapes that do not broadcast named as ``fn``'s
    input and weight) and then the reduction."""
    if weight is not None:
        weight = as_tensor(weight)
        check_broadcast(fn, "input", tuple(loss.shape), "weight", tuple(weight.shape))
        loss = loss * weight
    return _reduce(loss, reduction)


def _same_shape(fn: str, a: Any, b: Any) -> None:
    if a.shape != b.shape:
        raise ValueError(f"{fn}: label shape {list(b.shape)} must equal input shape {list(a.shape)}")


def _difference(fn: str, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
    """input - label, shapes that do not broadcast named as ``fn``'s input and label (the
    subtraction checks them once auto-parallel placement has made its operands' pieces meet)."""
    try:
        return input - label
    except NoBroadcast as exc:
        raise NoBroadcast(f"{fn}: input and label do not broadcast ({exc}; x is input, y is label)") from None


def mse_loss(input: Tensor, label: Tensor, reduction: str = "mean",  # noqa: A002
             name: Optional[str] = None) -> Tensor:
    """(input - label) ** 2, reduced."""
    _check_reduction(reduction)
    input, label = as_tensor(input), as_tensor(label)  # noqa: A001
    return _reduce(square(_difference("mse_loss", input, label)), reduction)


def log_loss(input: Tensor, label: Tensor, epsilon: float = 0.0001,  # noqa: A002
             name: Optional[str] = None) -> Tensor:
    """-label log(input + epsilon) - (1 - label) log(1 - input + epsilon), elementwise (paddle's,
    unreduced; its kernel takes float32 only, pycoll any floating dtype)."""
    input = as_tensor(input)  # noqa: A001
    _same_shape("log_loss", input, label)
    return -label * log(input + epsilon) - (1 - label) * log(1 - input + epsilon)


def l1_loss(input: Tensor, label: Tensor, reduction: str = "mean",  # noqa: A002
            name: Optional[str] = None) -> Tensor:
    """|input - label|, reduced (the gradient at input == label is 0, as paddle's)."""
    _check_reduction(reduction)
    input, label = as_tensor(input), as_tensor(label)  # noqa: A001
    return _reduce(abs(_difference("l1_loss", input, label)), reduction)


def smooth_l1_loss(input: Tensor, label: Tensor, reduction: str = "mean",  # noqa: A002
                   delta: float = 1.0, is_huber: bool = True, name: Optional[str] = None) -> Tensor:
    """Huber loss of r = input - label: 0.5 r^2 where |r| <= delta, delta (|r| - delta / 2)
    beyond; divided by delta when is_huber is False (paddle's smooth-L1)."""
    _check_reduction(reduction)
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or delta <= 0:
        raise ValueError(f"smooth_l1_loss: delta must be a number > 0, got {delta!r}")
    input, label = as_tensor(input), as_tensor(label)
    _same_shape("smooth_l1_loss", input, label)  # paddle's: a [N, 1] output against [N] labels is refused
    a = abs(input - label)
    inner = clip(a, max=float(delta))  # 0.5 q^2 + delta (a - q) is the huber loss of a
    out = 0.5 * square(inner) + float(delta) * (a - inner)
    if not is_huber:
        out = out / float(delta)
    return _reduce(out, reduction)


def binary_cross_entropy(input: Tensor, label: Tensor, weight: Optional[Tensor] = None,  # noqa: A002
                         reduction: str = "mean", name: Optional[str] = None) -> Tensor:
    """-(label log(input) + (1 - label) log(1 - input)) for probabilities `input` in [0, 1]; each
    log is clamped at -100 and the gradient's denominator at 1e-12 (paddle's bce kernel)."""
    _check_reduction(reduction)
    input, label = placed("binary_cross_entropy", as_tensor(input), as_tensor(label))  # auto-parallel: label cut alike
    x = input._array
    xp = array_module(x)
    y = label._array.astype(x.dtype, copy=False)
    _same_shape("binary_cross_entropy", x, y)
    if bool(xp.any((x < 0) | (x > 1))):
        raise ValueError("binary_cross_entropy: input must hold probabilities in [0, 1]")
    with np.errstate(divide="ignore"):
        out = -(y * xp.maximum(xp.log(x), -100) + (1 - y) * xp.maximum(xp.log(1 - x), -100))

    def backward(g: Any) -> tuple:
        return g * (x - y) / xp.maximum(x * (1 - x), 1e-12), None
    return _weighted_reduce("binary_cross_entropy", op_output(out.astype(x.dtype, copy=False), backward, input, label),
                            weight, reduction)


def binary_cross_entropy_with_logits(logit: Tensor, label: Tensor, weight: Optional[Tensor] = None,
                                     reduction: str = "mean", pos_weight: Optional[Tensor] = None,
                                     name: Optional[str] = None) -> Tensor:
    """Sigmoid then binary cross entropy, computed stably from the logits:
    (1 - label) x + pw (log(1 + e^-|x|) + max(-x, 0)) with pw = 1 + label (pos_weight - 1).
    Elements whose label is -100 add nothing (paddle's kernel). pos_weight gets no gradient."""
    _check_reduction(reduction)
    logit, label, pos_weight = placed("binary_cross_entropy_with_logits", as_tensor(logit), as_tensor(label),
                                      pos_weight)  # auto-parallel: label (and pos_weight) cut as logit
    x = logit._array
    xp = array_module(x)
    y = label._array.astype(x.dtype, copy=False)
    _same_shape("binary_cross_entropy_with_logits", x, y)
    pw = 1.0
    if pos_weight is not None:
        given = as_tensor(pos_weight)._array
        check_broadcast("binary_cross_entropy_with_logits", "logit", x.shape, "pos_weight", given.shape)
        pw = 1 + y * (given.astype(x.dtype, copy=False) - 1)
    kept = y != -100
    with quiet():  # inf/NaN logits or labels give inf/NaN silently, as paddle's
        softplus_neg = xp.log1p(xp.exp(-xp.abs(x))) + xp.maximum(-x, 0)  # log(1 + e^-x), stably
        negative = xp.where(y == 1, 0, (1 - y) * x)  # 0 for a label of 1, also at x = -inf (torch's inf loss)
        out = (negative + pw * softplus_neg) * kept

    def backward(g: Any) -> tuple:
        sig_neg = sigmoid_array(xp, -x)
        return g * ((1 - y) - pw * sig_neg) * kept, None
    return _weighted_reduce("binary_cross_entropy_with_logits",
                            op_output(out.astype(x.dtype, copy=False), backward, logit, label), weight, reduction)


def kl_div(input: Tensor, label: Tensor, reduction: str = "mean", log_target: bool = False,  # noqa: A002
           name: Optional[str] = None) -> Tensor:
    """Kullback-Leibler divergence with `input` holding log-probabilities: label (log label -
    input) where label > 0 (else 0), or exp(label) (label - input) with log_target.

    reduction 'batchmean' divides the sum by input.shape[0]. A float32/float64 pair computes (and
    returns) float64, as paddle does.
    """
    _check_reduction(reduction, _REDUCTIONS + ("batchmean",))
    input, label = placed("kl_div", as_tensor(input), as_tensor(label),
                          whole=reduction == "batchmean")  # auto-parallel: label cut as input (batchmean: whole)
    _same_shape("kl_div", input, label)  # paddle's: no broadcasting
    x, t = input._array, label._array
    xp = array_module(x)
    dtype = np.result_type(x.dtype, t.dtype)
    x, t = x.astype(dtype, copy=False), t.astype(dtype, copy=False)
    with quiet():  # inf/NaN inputs or labels give inf/NaN silently, as paddle's
        if log_target:
            et = xp.exp(t)
            out, slope = et * (t - x), -et
        else:
            pos = t > 0
            out = xp.where(pos, t * (xp.log(xp.where(pos, t, 1)) - x), 0).astype(dtype, copy=False)
            slope = xp.where(pos, -t, 0).astype(dtype, copy=False)
    src = input._array.dtype

    def backward(g: Any) -> tuple:
        return (g * slope).astype(src, copy=False), None
    loss = op_output(out, backward, input, label)
    if reduction == "batchmean":
        return sum(loss) / x.shape[0] if x.ndim > 0 else loss
    return _reduce(loss, reduction)
