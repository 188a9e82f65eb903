"""paddle.vision.ops.yolo_loss: YOLOv3's training loss for one output scale.

The matching of ground-truth boxes to anchors and cells (a few boxes per image) runs on the host;
the loss itself is composed of pycoll's differentiable ops (sigmoid cross-entropy, L1, gathers),
so its gradient in x is the loss's own. That is paddle 3.3.1's gradient too, except where two
ground-truth boxes land on the same cell and anchor: paddle's loss adds both boxes' terms but its
backward keeps only the last box's (it assigns where it should add); pycoll's adds both."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module
from pycoll.math_ops import abs as abs_, matmul
from pycoll.nn._loss_functional import binary_cross_entropy_with_logits as bce_logits
from pycoll.search_ops import gather
from pycoll.tensor import Tensor, wrap
from pycoll.vision.ops._common import floating
from pycoll.vision.ops.yolo import check_anchors, sigmoid

__all__ = ["yolo_loss"]


def _best_iou(xp: Any, centre: Tuple[Any, ...], gt: Any, valid: Any) -> Any:
    """Each predicted box's largest IoU with a valid ground truth of its image (0 without one):
    the boxes (cx, cy, w, h) as four arrays [N, M, H, W], gt [N, B, 4] and valid [N, B]. Each
    image's valid boxes come first and the slots past the most any image has are dropped (an
    invalid slot left counts 0); the IoU is computed coordinate by coordinate (contiguous
    arrays, not strided slices of a last axis of 4)."""
    n, b_num = valid.shape
    order = xp.argsort(~valid, axis=1, kind="stable")[:, :max(int(valid.sum(axis=1).max()), 1)]
    kept = xp.take_along_axis(valid, order, axis=1)
    gt = xp.take_along_axis(gt, order[..., None], axis=1)
    gx, gy, gw, gh = (xp.ascontiguousarray(gt[..., k])[:, None, None, None] for k in range(4))
    cx, cy, w, h = (c[..., None] for c in centre)
    iw = xp.minimum(cx + w / 2, gx + gw / 2) - xp.maximum(cx - w / 2, gx - gw / 2)
    ih = xp.minimum(cy + h / 2, gy + gh / 2) - xp.maximum(cy - h / 2, gy - gh / 2)
    inter = xp.where((iw < 0) | (ih < 0), 0, iw * ih)
    iou = inter / (w * h + gw * gh - inter)
    return xp.where(kept[:, None, None, None], iou, 0).max(axis=-1)


def _sce(x: Tensor, label: Any) -> Tensor:
    """Sigmoid cross-entropy of logits x against the constant labels (an array of x's shape)."""
    return bce_logits(x, wrap(label), reduction="none")


def yolo_loss(x: Tensor, gt_box: Tensor, gt_label: Tensor, anchors: Sequence[int], anchor_mask: Sequence[int],
              class_num: int, ignore_thresh: float, downsample_ratio: int, gt_score: Optional[Tensor] = None,
              use_label_smooth: bool = True, name: Optional[str] = None, scale_x_y: float = 1.0) -> Tensor:
    """The YOLOv3 loss [N] of x [N, len(anchor_mask) * (5 + class_num), H, W] against gt_box
    [N, B, 4] (cx, cy, w, h as fractions of the image; w or h ~0 marks an empty slot), gt_label
    [N, B] and optional gt_score [N, B] (mixup weights, default 1). Each box is the positive of
    the cell holding its centre and of its best-IoU anchor (when that anchor is in anchor_mask):
    location (sigmoid cross-entropy of x, y; L1 of log w, h, weighted by 2 - w h) and class losses
    (labels smoothed to 1 - 1/max(class_num, 40) unless use_label_smooth is False); every other
    prediction whose box overlaps no ground truth above ignore_thresh is an objectness negative."""
    fn = "yolo_loss"
    x = floating(x, fn, "x", 4)
    anchor = check_anchors(anchors, fn)
    mask = [int(m) for m in anchor_mask]
    if not mask or not all(0 <= m < anchor.shape[0] for m in mask):
        raise ValueError(f"{fn}: anchor_mask must index the {anchor.shape[0]} anchors, got {anchor_mask!r}")
    n, ch, h, w = x.shape
    m_num, per = len(mask), 5 + class_num
    if h != w:
        raise ValueError(f"{fn}: x's feature map must be square (H == W, as paddle requires), got {h} x {w}")
    if ch != m_num * per:
        raise ValueError(f"{fn}: x must have len(anchor_mask) * (5 + class_num) = {m_num * per} channels, got {ch}")
    boxes = floating(gt_box, fn, "gt_box", 3, 4)
    b_num = boxes.shape[1]
    labels = as_tensor(gt_label)
    if boxes.shape[0] != n or labels.shape != [n, b_num] or labels.dtype.kind not in "iu":
        raise ValueError(f"{fn}: gt_box must be [N, B, 4] and gt_label int [N, B] with N = {n}, got "
                         f"{boxes.shape} and {labels.shape} {labels.dtype}")
    if gt_score is None:
        score = np.ones((n, b_num))
    else:
        score = floating(gt_score, fn, "gt_score", 2).numpy().astype(np.float64)
        if score.shape != (n, b_num):
            raise ValueError(f"{fn}: gt_score must be [N, B] = {[n, b_num]}, got {list(score.shape)}")
    a = x._array
    xp = array_module(a)
    dt = a.dtype
    input_size = downsample_ratio * h
    pred = a.reshape(n, m_num, per, h, w)
    gt = boxes._array.astype(dt)
    valid = (gt[..., 2] >= 1e-6) & (gt[..., 3] >= 1e-6)  # [N, B]
    # objectness: -1 (ignored) where a prediction overlaps a ground truth by more than ignore_thresh
    bias = -0.5 * (scale_x_y - 1)
    anc = xp.asarray(anchor[mask], dtype=dt)
    centre = ((xp.arange(w, dtype=dt) + sigmoid(xp, pred[:, :, 0]) * scale_x_y + bias) / w,
              (xp.arange(h, dtype=dt)[:, None] + sigmoid(xp, pred[:, :, 1]) * scale_x_y + bias) / h,
              xp.exp(pred[:, :, 2]) * anc[:, 0, None, None] / input_size,
              xp.exp(pred[:, :, 3]) * anc[:, 1, None, None] / input_size)  # the boxes' cx, cy, w, h [N, M, H, W]
    best = _best_iou(xp, centre, gt, valid) if b_num else xp.zeros((n, m_num, h, w), dt)
    obj = xp.where(best > ignore_thresh, -1.0, 0.0).astype(dt)
    # positives: each valid box's cell and best anchor (by shape alone), on the host
    host_gt, host_label = boxes.numpy().astype(np.float64), labels.numpy()
    shapes = anchor / input_size
    # (image, mask slot, row, col, box, anchor) of each valid box whose best anchor by shape alone
    # is one of the mask's, in (image, box) order
    gw, gh = host_gt[..., 2:3], host_gt[..., 3:4]
    inter = np.minimum(shapes[:, 0], gw) * np.minimum(shapes[:, 1], gh)  # [N, B, anchors]
    with np.errstate(invalid="ignore", divide="ignore"):
        fits = inter / (shapes[:, 0] * shapes[:, 1] + gw * gh - inter)
        best_n = np.where(fits.max(axis=-1) > 0, np.argmax(fits, axis=-1), 0)
    slot_of = np.full(len(anchor), -1)
    for k in reversed(range(len(mask))):  # an anchor's first place in the mask
        slot_of[mask[k]] = k
    empty = (host_gt[..., 2] < 1e-6) | (host_gt[..., 3] < 1e-6)
    wrong = ~empty & ((host_label < 0) | (host_label >= class_num))
    if wrong.any():
        at = tuple(int(i) for i in np.argwhere(wrong)[0])
        raise ValueError(f"{fn}: gt_label must lie in [0, class_num) = [0, {class_num}) for every box that is not "
                         f"empty; gt_label{list(at)} is {int(host_label[at])}")
    img, t_idx = np.nonzero(~empty & (slot_of[best_n] >= 0))
    a_idx = best_n[img, t_idx]
    slot = slot_of[a_idx]
    gj = (host_gt[img, t_idx, 1] * h).astype(np.int64)  # (truncated as int() truncates)
    gi = (host_gt[img, t_idx, 0] * w).astype(np.int64)
    obj_host = wrap(obj).numpy().copy()
    obj_host[img, slot, gj, gi] = score[img, t_idx]
    obj = xp.asarray(obj_host)
    # the loss, per image, of the logits it reads, gathered in one op (one gradient of x's size
    # comes back, not one per term): each positive's box entries and classes, then the objectness
    cell = (((img * m_num + slot) * per) * h + gj) * w + gi  # entry 0 of each positive
    count = cell.shape[0]
    objectness = ((np.arange(n * m_num)[:, None] * per + 4) * h * w + np.arange(h * w)).reshape(-1)
    read = gather(x.reshape([-1]), wrap(xp.asarray(np.concatenate(
        [cell + k * h * w for k in range(4)] + [(cell[:, None] + (5 + np.arange(class_num)) * h * w).reshape(-1),
                                                objectness]))))

    def entries(k: int) -> Tensor:
        return read[k * count:(k + 1) * count]

    g = host_gt[img, t_idx]
    weight = (2.0 - g[:, 2] * g[:, 3]) * score[img, t_idx]

    def cast(v: Any) -> Any:
        return xp.asarray(v, dtype=dt)
    loc = (_sce(entries(0), cast(g[:, 0] * w - gi)) + _sce(entries(1), cast(g[:, 1] * h - gj))
           + abs_(entries(2) - wrap(cast(np.log(g[:, 2] * input_size / anchor[a_idx, 0]))))
           + abs_(entries(3) - wrap(cast(np.log(g[:, 3] * input_size / anchor[a_idx, 1]))))) * wrap(cast(weight))
    smooth = min(1.0 / class_num, 1.0 / 40) if use_label_smooth else 0.0
    target = np.full((count, class_num), smooth)
    target[np.arange(count), host_label[img, t_idx]] = 1.0 - smooth
    classes = read[4 * count:(4 + class_num) * count]
    cls = (_sce(classes, cast(target.reshape(-1))).reshape([-1, class_num]).sum(axis=1)
           * wrap(cast(score[img, t_idx])))
    per_box = wrap(cast(np.arange(n)[:, None] == img[None, :]))  # [N, P]: which image each positive is in
    positives = matmul(per_box, (loc + cls).reshape([-1, 1])).reshape([n])
    logits = read[(4 + class_num) * count:].reshape([n, m_num, h, w])
    pos_w, neg_w = xp.where(obj > 1e-5, obj, 0), ((obj > -0.5) & (obj <= 1e-5)).astype(dt)
    objness = (_sce(logits, xp.ones_like(obj)) * wrap(pos_w) + _sce(logits, xp.zeros_like(obj)) * wrap(neg_w))
    return positives + objness.reshape([n, -1]).sum(axis=1)
