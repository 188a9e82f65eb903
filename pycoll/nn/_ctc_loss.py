"""paddle.nn.functional.ctc_loss: connectionist temporal classification, as paddle's warpctc
kernel computes it. `log_probs` [T, N, C] are taken as unscaled scores (warpctc applies the
softmax over the classes itself), `labels` [N, S] are padded label sequences, and the loss of
sequence n is -log p(labels[n, :label_lengths[n]] | the first input_lengths[n] steps).

The forward-backward recursions run in log space over the extended label sequence (a blank
before, between and after the labels), vectorised over the batch and the label positions with
one loop over time. The gradient is computed with the loss (warpctc does the same) and the
backward keeps only it; `norm_by_times` divides the gradient (not the loss) by input_lengths[n].
"""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from pycoll._tensor_ops import as_tensor, op_output
from pycoll.device import array_module, to_module
from pycoll.dtypes import is_floating
from pycoll.math_ops import cast, mean, sum
from pycoll.nn._loss_functional import _check_reduction
from pycoll.tensor import Tensor

__all__ = ["ctc_loss"]


def _logsumexp(xp: Any, *terms: Any) -> Any:
    """log(sum(exp(t))) of same-shaped arrays, -inf where every term is -inf."""
    top = terms[0]
    for t in terms[1:]:
        top = xp.maximum(top, t)
    safe = xp.where(xp.isinf(top), 0, top)
    total = xp.exp(terms[0] - safe)
    for t in terms[1:]:
        total += xp.exp(t - safe)
    with np.errstate(divide="ignore"):
        return xp.log(total) + safe


def _shift(xp: Any, a: Any, k: int, fill: float) -> Any:
    """`a` [N, L] moved k places along L (right for k > 0), `fill` in the places opened."""
    out = xp.full_like(a, fill)
    if k > 0:
        out[:, k:] = a[:, :-k]
    else:
        out[:, :k] = a[:, -k:]
    return out


def _int_vector(fn: str, name: str, v: Any, n: int, xp: Any) -> Any:
    a = to_module(as_tensor(v)._array, xp)
    if a.dtype.kind not in "iu" or a.reshape(-1).shape[0] != n:
        raise ValueError(f"{fn}: {name} must hold {n} integers (one per sequence), got shape {list(a.shape)} "
                         f"dtype {a.dtype}")
    return a.reshape(-1).astype(np.int64)


def _ctc(logits: Any, labels: Any, t_len: Any, s_len: Any, blank: int) -> Tuple[Any, Any]:
    """The losses [N] and their gradient [T, N, C] with respect to the scores `logits`."""
    xp = array_module(logits)
    steps, n, _ = logits.shape
    shifted = logits - logits.max(axis=2, keepdims=True)
    logy = shifted - xp.log(xp.exp(shifted).sum(axis=2, keepdims=True))
    width = 2 * labels.shape[1] + 1
    ext = xp.full((n, width), blank, dtype=np.int64)
    ext[:, 1::2] = labels
    valid = xp.arange(width)[None, :] < (2 * s_len + 1)[:, None]
    skip = xp.zeros((n, width), dtype=bool)
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    emit = xp.take_along_axis(logy, xp.broadcast_to(ext[None], (steps, n, width)), axis=2)  # [T, N, L]
    emit = xp.where(valid[None], emit, -xp.inf)
    inf = -xp.inf
    alpha = xp.full((steps, n, width), inf, dtype=logits.dtype)
    alpha[0, :, :2] = emit[0, :, :2]
    for t in range(1, steps):
        prev = alpha[t - 1]
        jump = xp.where(skip, _shift(xp, prev, 2, inf), inf)
        alpha[t] = _logsumexp(xp, prev, _shift(xp, prev, 1, inf), jump) + emit[t]
    beta = xp.full((steps, n, width), inf, dtype=logits.dtype)
    ends = xp.zeros((n, width), dtype=bool)
    rows = xp.arange(n)
    ends[rows, 2 * s_len] = True
    ends[rows, xp.maximum(2 * s_len - 1, 0)] = True
    skip_next = _shift(xp, skip, -2, False)
    for t in range(steps - 1, -1, -1):
        last = (t_len - 1 == t)[:, None]
        nxt = beta[t + 1] if t + 1 < steps else xp.full((n, width), inf, dtype=logits.dtype)
        jump = xp.where(skip_next, _shift(xp, nxt, -2, inf), inf)
        inner = _logsumexp(xp, nxt, _shift(xp, nxt, -1, inf), jump) + emit[t]
        beta[t] = xp.where(last, xp.where(ends, emit[t], inf), xp.where((t < t_len - 1)[:, None], inner, inf))
    end_alpha = xp.where(ends, alpha[t_len - 1, rows], inf)  # [N, L]: the one or two end states
    top = end_alpha.max(axis=1)
    safe = xp.where(xp.isinf(top), 0, top)
    with np.errstate(divide="ignore"):
        log_p = xp.log(xp.exp(end_alpha - safe[:, None]).sum(axis=1)) + safe
    finite = xp.isfinite(log_p)
    with np.errstate(invalid="ignore"):
        gamma = alpha + beta - emit  # log of the probability mass through (t, s); nan off the lattice
        occupancy = xp.exp(gamma - xp.where(finite, log_p, 0)[None, :, None])
    occupancy = xp.where(xp.isfinite(gamma), occupancy, 0)
    onehot = (ext[:, :, None] == xp.arange(logits.shape[2])[None, None, :]).astype(logits.dtype)
    grad = xp.exp(logy) - xp.einsum("tnl,nlc->tnc", occupancy, onehot)
    live = (xp.arange(steps)[:, None] < t_len[None, :]) & finite[None, :]
    grad = xp.where(live[:, :, None], grad, 0).astype(logits.dtype, copy=False)
    return (-log_p).astype(logits.dtype, copy=False), grad


def ctc_loss(log_probs: Tensor, labels: Tensor, input_lengths: Tensor, label_lengths: Tensor, blank: int = 0,
             reduction: str = "mean", norm_by_times: bool = False, zero_infinity: bool = False) -> Tensor:
    """CTC loss of scores `log_probs` [T, N, C] (softmax taken over C inside, as warpctc does)
    against padded `labels` [N, S]; per-sequence lengths `input_lengths` and `label_lengths` [N].
    reduction 'mean' averages loss / label_length over the batch, 'sum' adds the losses, 'none'
    returns them [N]. A sequence too short for its label (no alignment exists) loses 0, as
    paddle's warpctc gives it (``zero_infinity``, whose work that is, changes nothing then); its
    gradient stays warpctc's. Only log_probs gets a gradient."""
    fn = "ctc_loss"
    _check_reduction(reduction)
    log_probs, labels = as_tensor(log_probs), as_tensor(labels)
    a = log_probs._array
    xp = array_module(a)
    if a.ndim != 3 or not is_floating(a.dtype):
        raise ValueError(f"{fn}: log_probs must be a floating [max_logit_length, batch_size, num_classes + 1] "
                         f"tensor, got shape {list(a.shape)} dtype {a.dtype}")
    steps, n, classes = a.shape
    lab = to_module(labels._array, xp)
    if lab.ndim != 2 or lab.shape[0] != n or lab.dtype.kind not in "iu":
        raise ValueError(f"{fn}: labels must be an integer [batch_size={n}, max_label_length] tensor, got shape "
                         f"{list(lab.shape)} dtype {lab.dtype}")
    if isinstance(blank, bool) or not isinstance(blank, int) or not 0 <= blank < classes:
        raise ValueError(f"{fn}: blank must be an int in [0, {classes}), got {blank!r}")
    t_len = _int_vector(fn, "input_lengths", input_lengths, n, xp)
    s_len = _int_vector(fn, "label_lengths", label_lengths, n, xp)
    if bool(((t_len < 1) | (t_len > steps)).any()):
        raise ValueError(f"{fn}: input_lengths must lie in [1, {steps}], got {t_len.tolist()}")
    if bool(((s_len < 0) | (s_len > lab.shape[1])).any()):
        raise ValueError(f"{fn}: label_lengths must lie in [0, {lab.shape[1]}], got {s_len.tolist()}")
    inside = xp.arange(lab.shape[1])[None, :] < s_len[:, None]
    if bool((inside & ((lab < 0) | (lab >= classes) | (lab == blank))).any()):
        raise ValueError(f"{fn}: labels must lie in [0, {classes}) and differ from blank={blank}")
    losses, grad = _ctc(a, xp.where(inside, lab, blank).astype(np.int64), t_len, s_len, blank)
    losses = xp.where(xp.isinf(losses), xp.zeros((), losses.dtype), losses)
    if norm_by_times:
        grad = grad / t_len.astype(a.dtype)[None, :, None]
    out = op_output(losses, lambda g: (grad * g[None, :, None], None), log_probs, labels)
    if reduction == "mean":
        return mean(out / cast(as_tensor(s_len), out.dtype))
    return sum(out) if reduction == "sum" else out
