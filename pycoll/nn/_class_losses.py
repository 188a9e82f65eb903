"""Losses over class scores: cross_entropy and nll_loss (paddle.nn.functional semantics).

Each is one fused op (one graph node, hand-written backward) that gives a gradient to the input
only: labels and class weights get none (paddle's kernels compute none either).
"""
from __future__ import annotations

import math
from typing import Any, Optional, Tuple

import numpy as np

from pycoll._errors import LabelOutOfRange
from pycoll._fp_quiet import quietly
from pycoll._param_aliases import param_aliases
from pycoll._promotion import accumulates_in_float32
from pycoll._tensor_ops import as_tensor, op_output, placed, require_floating
from pycoll.device import array_module
from pycoll.dtypes import is_floating
from pycoll.nn._loss_functional import _check_reduction
from pycoll.tensor import Tensor

__all__ = ["cross_entropy", "nll_loss"]


def _hard_labels(fn: str, xp: Any, lab: Any, classes: int, ignore_index: int) -> Tuple[Any, Any, Any]:
    """(valid, safe, bad): where a class id is not ignore_index, the ids with ignored ones set to
    0 (so they can index), and where an id outside [0, classes) is not ignored. On the host such
    an id raises LabelOutOfRange, an IndexError as paddle's (bad is None). On a GPU reading the
    check back would stall the device at every step (paddle's and torch's kernels assert on the
    device instead), so ``bad`` is returned for the loss to become NaN there (:func:`_poisoned`):
    the error shows where the user reads the loss."""
    if lab.dtype.kind not in "iu":
        raise TypeError(f"{fn}: label must hold integer class ids, got dtype {lab.dtype}")
    valid = lab != ignore_index
    bad = valid & ((lab < 0) | (lab >= classes))
    if xp is np:
        if bad.any():
            raise LabelOutOfRange(f"{fn}: label ids must lie in [0, {classes}) or equal ignore_index "
                                  f"({ignore_index})")
        return valid, xp.where(valid, lab, 0), None
    return valid, xp.where(valid & ~bad, lab, 0), bad  # a bad id indexes class 0, then its loss is NaN


def _poisoned(xp: Any, losses: Any, bad: Any) -> Any:
    """``losses`` with NaN where ``bad`` (a device check of :func:`_hard_labels`) marks an id."""
    return losses if bad is None else xp.where(bad, losses.dtype.type(np.nan), losses)


def _class_weights(fn: str, weight: Optional[Tensor], classes: int, dtype: Any) -> Optional[Any]:
    if weight is None:
        return None
    w = as_tensor(weight)._array
    if w.shape != (classes,):
        raise ValueError(f"{fn}: weight must have shape [{classes}] (one value per class), got "
                         f"{list(w.shape)}")
    return w.astype(dtype, copy=False)


def _nonzero(d: Any) -> Any:
    """d, or 1 where d is 0 (paddle divides by count + (count == 0))."""
    return d + (d == 0)


@param_aliases({"target": "label"})
@accumulates_in_float32
def cross_entropy(input: Tensor, label: Tensor, weight: Optional[Tensor] = None,  # noqa: A002
                  ignore_index: int = -100, reduction: str = "mean", soft_label: bool = False,
                  axis: int = -1, use_softmax: bool = True, label_smoothing: float = 0.0,
                  name: Optional[str] = None) -> Tensor:
    """Cross entropy of the class scores along `axis` of `input` (logits, or probabilities with
    use_softmax=False), paddle's rules throughout:

    * hard labels: integer ids shaped like input without `axis` or with 1 there; an id equal to
      ignore_index adds no loss and no gradient. Float (or bool) ids are truncated to int64 as
      paddle's kernel does; 'mean' with ignore_index >= 0 then counts, as paddle's, the labels whose
      float value differs from ignore_index (so 4.5 counts when 4 is ignored). soft_label=True:
      label holds a distribution over the classes, shaped like input. label_smoothing = e > 0
      turns labels into soft ones, (1 - e) label + e / C (one_hot first for hard ones, which
      must then all be class ids; a label shaped like input is taken as a distribution even
      with soft_label=False, as paddle's), and 'none' then keeps a class axis of size 1.
    * weight [C]: hard labels scale row i by weight[label_i], soft ones by label_i . weight.
    * 'mean' with ignore_index >= 0 divides by the number of labels != ignore_index (the weights
      of those rows with a weight); otherwise by the sum of the row weights with a weight, else by
      the number of rows, ignored ones included. 'none' keeps the label's shape (with soft
      labels: a class axis of size 1).
    * the softmax gradient with soft labels is softmax - label (exact for labels summing to 1).
    """
    _check_reduction(reduction)
    input, label = placed("cross_entropy", as_tensor(input), as_tensor(label), axis=axis, mean=reduction == "mean",
                          counted=ignore_index >= 0 or weight is not None)  # auto-parallel: the label cut as input
    logits, lab = require_floating(input, "cross_entropy", "input", complex_ok=True)._array, label._array
    nd = logits.ndim
    if nd == 0:
        raise ValueError("cross_entropy: input must have at least one dimension (the classes)")
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -nd <= axis < nd:
        raise ValueError(f"cross_entropy: axis must be an int in [-{nd}, {nd}), got {axis!r}")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    if soft_label and ignore_index > 0:
        raise ValueError(f"cross_entropy: ignore_index must be -100 with soft_label=True, got "
                         f"{ignore_index}")
    if lab.ndim not in (nd - 1, nd):
        raise ValueError(f"cross_entropy: label must have {nd - 1} or {nd} dimensions for input "
                         f"shape {list(logits.shape)}, got label shape {list(lab.shape)}")
    ax = int(axis) % nd
    xp = array_module(logits)
    dtype = logits.dtype
    z = xp.moveaxis(logits, ax, -1)  # classes last, from here on
    classes = z.shape[-1]
    squeeze = lab.ndim == nd - 1 and label_smoothing == 0.0
    lab = lab[..., None] if lab.ndim == nd - 1 else xp.moveaxis(lab, ax, -1)
    # paddle: with label_smoothing a label shaped like input is a distribution (a one-hot row,
    # say), whatever soft_label says; ids [..., 1] stay ids
    given_soft = soft_label or (label_smoothing > 0 and lab.shape == z.shape and classes > 1)
    soft = given_soft or label_smoothing > 0
    valid = weights = None
    if not given_soft:
        if lab.shape != z.shape[:-1] + (1,):
            raise ValueError(f"cross_entropy: label shape {list(label.shape)} does not fit input "
                             f"shape {list(logits.shape)} with classes along axis {axis}")
        ids = lab
        if lab.dtype.kind in "fb":  # paddle's kernel casts float (and bool) ids to int64: truncation
            if weight is not None or label_smoothing > 0:
                raise ValueError(f"cross_entropy: weight and label_smoothing need integer class ids, got label "
                                 f"dtype {lab.dtype}")
            ids = quietly(lab.astype, np.int64)  # NaN/inf ids: whatever the cast gives, silently
        valid, safe, bad = _hard_labels("cross_entropy", xp, ids, classes, ignore_index)
        if label_smoothing > 0:
            if not bool(valid.all()):
                raise ValueError("cross_entropy: label_smoothing needs every label to be a class id "
                                 "(none equal to ignore_index)")
            lab = (xp.arange(classes) == lab).astype(np.float32)  # one_hot (float32, as paddle's)
    else:
        if not is_floating(lab.dtype) and not label_smoothing > 0:
            raise TypeError(f"cross_entropy: soft labels must be floating point, got dtype {lab.dtype}")
        if lab.shape != z.shape:
            raise ValueError(f"cross_entropy: soft label shape {list(label.shape)} must equal input "
                             f"shape {list(logits.shape)}")
        # smoothing works in the label's own floating dtype, as paddle's label_smooth (then input's)
        lab = lab.astype(dtype if label_smoothing == 0 else np.float32 if not is_floating(lab.dtype) else lab.dtype,
                         copy=False)
    if label_smoothing > 0:
        eps = np.float32(label_smoothing)  # paddle's label_smooth works out its factors in float32
        keep, spread = np.float32(1) - eps, eps / np.float32(classes)
        lab = (lab * lab.dtype.type(keep) + lab.dtype.type(spread)).astype(dtype, copy=False)
    w = _class_weights("cross_entropy", weight, classes, dtype)

    if use_softmax:
        shifted = z - z.max(axis=-1, keepdims=True)
        logp = shifted - xp.log(xp.exp(shifted).sum(axis=-1, keepdims=True))
    else:
        with np.errstate(divide="ignore"):
            logp = xp.log(z)
    if soft:  # a class of label 0 adds 0, also where its log-probability is -inf (a masked logit)
        with np.errstate(invalid="ignore"):
            losses = -xp.where(lab != 0, lab * logp, 0).sum(axis=-1, keepdims=True)
        if w is not None:
            weights = (lab @ w)[..., None]
    else:
        losses = _poisoned(xp, -xp.take_along_axis(logp, safe, axis=-1) * valid, bad)
        if w is not None:
            weights = w[safe] * valid
    if weights is not None:
        losses = losses * weights

    denom = None
    if reduction == "mean":
        if ignore_index >= 0:
            mask = (lab != ignore_index).astype(dtype)
            denom = _nonzero(mask.sum() if weights is None else (mask * weights).sum())
        elif weights is not None:
            denom = _nonzero(weights.sum())
        else:
            denom = np.dtype(dtype).type(losses.size)  # a scalar: no upload to the device
        out = losses.sum() / denom if logits.size else xp.asarray(np.nan, dtype=dtype)
    elif reduction == "sum":
        out = losses.sum()
    else:
        out = xp.moveaxis(losses, -1, ax)
        if squeeze:
            out = out.squeeze(ax)
    out = xp.asarray(out).astype(dtype, copy=False)
    z = None if use_softmax else z  # the backward keeps input's values only where it uses them

    def backward(g: Any) -> tuple:
        if reduction == "none":
            g = g[..., None] if squeeze else xp.moveaxis(g, ax, -1)
        elif denom is not None:
            g = g / denom
        if weights is not None:
            g = g * weights
        # without softmax, -label / p is 0 where the label is 0, also where p is 0 (paddle's)
        if soft:
            with np.errstate(divide="ignore", invalid="ignore"):
                d = xp.exp(logp) - lab if use_softmax else xp.where(lab != 0, -lab / z, 0)
        elif use_softmax:
            d = xp.exp(logp)
            d -= xp.arange(classes) == safe
            d *= valid
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                d = xp.where((xp.arange(classes) == safe) & valid, -1 / z, 0)
        return xp.moveaxis((d * g).astype(dtype, copy=False), -1, ax), None
    return op_output(out, backward, input, label)


def nll_loss(input: Tensor, label: Tensor, weight: Optional[Tensor] = None,  # noqa: A002
             ignore_index: int = -100, reduction: str = "mean", name: Optional[str] = None) -> Tensor:
    """Negative log likelihood of log-probabilities `input` [N, C, d1, ...] (classes on axis 1)
    for integer labels [N, d1, ...]: -weight[label] * input[label]. Labels equal to ignore_index
    add nothing; 'mean' divides by the summed weights of the rest (0 when there are none)."""
    _check_reduction(reduction)
    input, label = placed("nll_loss", as_tensor(input), as_tensor(label), axis=1, mean=reduction == "mean",
                          counted=True)  # auto-parallel: the label cut as input (a mean divides by the weights)
    x, lab = input._array, label._array
    if x.ndim < 2:
        raise ValueError(f"nll_loss: input must have 2 or more dimensions [N, C, ...], got shape "
                         f"{list(x.shape)}")
    xp = array_module(x)
    dtype = x.dtype
    z = xp.moveaxis(x, 1, -1)  # [N, d1, ..., C]
    classes, rows = z.shape[-1], z.shape[:-1]
    if lab.ndim not in (x.ndim - 1, x.ndim) or lab.size != math.prod(rows):
        raise ValueError(f"nll_loss: label shape {list(lab.shape)} does not fit input shape "
                         f"{list(x.shape)} (expected {[rows[0]] + list(rows[1:])})")
    valid, safe, bad = _hard_labels("nll_loss", xp, lab.reshape(rows), classes, ignore_index)
    w = _class_weights("nll_loss", weight, classes, dtype)
    weights = valid.astype(dtype) if w is None else w[safe] * valid
    losses = _poisoned(xp, -xp.take_along_axis(z, safe[..., None], axis=-1)[..., 0] * weights, bad)
    total = None
    if reduction == "mean":
        total = weights.sum()
        out = xp.where(total == 0, 0, losses.sum() / _nonzero(total))
    else:
        out = losses.sum() if reduction == "sum" else losses
    out = xp.asarray(out).astype(dtype, copy=False)

    def backward(g: Any) -> tuple:
        if total is not None:
            g = g / _nonzero(total) * (total != 0)
        d = (xp.arange(classes) == safe[..., None]) * (-(weights * g))[..., None]
        return xp.moveaxis(d.astype(dtype, copy=False), -1, 1), None
    return op_output(out, backward, input, label)
