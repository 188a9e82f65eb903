"""Losses over sets of labels (paddle.nn.functional names): dice_loss (overlap of predicted class
probabilities with the one-hot labels), npair_loss (metric learning over a batch of anchor /
positive pairs) and multi_label_margin_loss (hinge between a sample's target classes and the others).

Each is composed of differentiable pycoll ops with paddle 3.3.1's formulas; what depends on the
integer labels alone (one-hot rows, target masks, pair indices) is worked out on the arrays first and
enters as constants, so gradients (and create_graph) reach every floating input.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from pycoll._tensor_ops import as_tensor, require_floating
from pycoll.device import array_module
from pycoll.index_ops import gather_nd
from pycoll.math_ops import clip, matmul, mean, sum
from pycoll.nn._activation_functional import log_softmax
from pycoll.nn._loss_functional import _check_reduction, _reduce
from pycoll.search_ops import gather
from pycoll.tensor import Tensor, wrap

__all__ = ["dice_loss", "npair_loss", "multi_label_margin_loss"]


def _integer_labels(label: Tensor, fn: str, name: str = "label") -> Any:
    if label.dtype.kind not in "iu":
        raise TypeError(f"{fn}: {name} must hold integer class ids, got dtype {label.dtype}")
    return label._array


def dice_loss(input: Tensor, label: Tensor, epsilon: float = 1e-05,  # noqa: A002
              name: Optional[str] = None) -> Tensor:
    """1 - 2 |P . Y| / (|P| + |Y| + epsilon) per sample, averaged over the batch: P the class
    probabilities `input` [N, ..., C], Y the one-hot of the integer `label` [N, ..., 1]; the sums
    run over every axis but the batch's."""
    fn = "dice_loss"
    input, label = require_floating(as_tensor(input), fn, "input"), as_tensor(label)
    ids = _integer_labels(label, fn)
    if input.ndim < 2:
        raise ValueError(f"{fn}: input must have 2 or more dimensions, got shape {input.shape}")
    if label.ndim != input.ndim or label.shape[-1] != 1 or label.shape[:-1] != input.shape[:-1]:
        raise ValueError(f"{fn}: label must have input's shape with a last dimension of 1 "
                         f"({input.shape[:-1] + [1]}), got {label.shape}")
    classes = input.shape[-1]
    xp = array_module(ids)
    if ids.size and bool(xp.any((ids < 0) | (ids >= classes))):
        raise ValueError(f"{fn}: label ids must lie in [0, {classes})")
    one_hot = wrap((ids == xp.arange(classes)).astype(input.dtype))
    axes = list(range(1, input.ndim))
    overlap = sum(input * one_hot, axis=axes)
    total = sum(input, axis=axes) + sum(one_hot, axis=axes)
    return mean(1 - overlap * 2 / (total + epsilon))


def npair_loss(anchor: Tensor, positive: Tensor, labels: Tensor, l2_reg: float = 0.002) -> Tensor:
    """N-pair loss of embeddings anchor [B, D] and positive [B, D]: the soft-label cross entropy
    of the similarities anchor @ positive^T against rows that spread 1 evenly over the samples
    sharing a row's label, weighted as paddle's (each row's loss times the column sums of those
    targets), averaged; plus l2_reg / 4 times the mean squared norms of both embeddings."""
    fn = "npair_loss"
    anchor = require_floating(as_tensor(anchor), fn, "anchor")
    positive = require_floating(as_tensor(positive), fn, "positive")
    labels = as_tensor(labels)
    if anchor.size == 0 or positive.size == 0:
        raise ValueError(f"{fn}: anchor and positive must not be empty, got shapes {anchor.shape} and "
                         f"{positive.shape}")
    if anchor.ndim != 2 or positive.shape != anchor.shape:
        raise ValueError(f"{fn}: anchor and positive must both be [batch, dim], got {anchor.shape} and "
                         f"{positive.shape}")
    lab = labels._array.reshape(-1)
    if lab.shape[0] != anchor.shape[0]:
        raise ValueError(f"{fn}: labels must hold one value per row of anchor ({anchor.shape[0]}), got shape "
                         f"{labels.shape}")
    same = (lab[:, None] == lab[None, :]).astype(np.float32)
    targets = wrap((same / same.sum(axis=1, keepdims=True)).astype(anchor.dtype))
    l2 = mean(sum(anchor * anchor, axis=1)) + mean(sum(positive * positive, axis=1))
    similarity = matmul(anchor, positive, transpose_y=True)
    row_loss = -sum(targets * log_softmax(similarity, axis=1), axis=1, keepdim=True)
    return l2 * (0.25 * l2_reg) + mean(sum(targets * row_loss, axis=0))


def multi_label_margin_loss(input: Tensor, label: Tensor, reduction: str = "mean",  # noqa: A002
                            name: Optional[str] = None) -> Tensor:
    """Multi-label hinge loss of scores input [N, C]: row n's targets are label[n] up to its first
    -1; the loss sums max(0, 1 - input[n, j] + input[n, i]) over its targets j and non-targets i,
    divided by C (a target named twice counts twice, as paddle's), then reduced."""
    fn = "multi_label_margin_loss"
    _check_reduction(reduction)
    input, label = require_floating(as_tensor(input), fn, "input"), as_tensor(label)
    lab = _integer_labels(label, fn)
    if input.ndim != 2:
        raise ValueError(f"{fn}: input must be 2-D [N, C], got shape {input.shape}")
    if label.ndim != 2 or label.shape[0] != input.shape[0]:
        raise ValueError(f"{fn}: label must be 2-D [N, k] with N = {input.shape[0]}, got shape {label.shape}")
    rows, classes = input.shape
    xp = array_module(lab)
    if lab.size and (int(lab.min()) < -1 or int(lab.max()) >= classes):
        raise ValueError(f"{fn}: label values must lie in [-1, {classes}), got [{int(lab.min())}, {int(lab.max())}]")
    valid = xp.cumprod(lab != -1, axis=1).astype(bool)  # the targets before each row's first -1
    pair_rows, pair_cols = xp.nonzero(valid)
    targets = lab[pair_rows, pair_cols]
    others = xp.ones((rows, classes), dtype=bool)
    others[pair_rows, targets] = False
    scores = gather(input, wrap(pair_rows.astype(np.int64)), axis=0)  # [pairs, C]
    picked = gather_nd(input, wrap(xp.stack([pair_rows, targets], axis=1).astype(np.int64)))
    hinge = clip(1 - picked.reshape([-1, 1]) + scores, min=0.0) * wrap(others[pair_rows].astype(input.dtype))
    owner = wrap((xp.arange(rows)[:, None] == pair_rows[None, :]).astype(input.dtype))  # [N, pairs]
    losses = matmul(owner, sum(hinge, axis=1, keepdim=True)).reshape([rows]) / classes
    return _reduce(losses, reduction)
