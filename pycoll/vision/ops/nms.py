"""paddle.vision.ops.nms (greedy, optionally per category) and matrix_nms (SOLOv2's soft, parallel
suppression).

Greedy NMS is sequential (each kept box decides which later ones survive), so ``nms`` runs on the
host: a CuPy input is copied to the host for the loop and the indices go back to the device.
matrix_nms computes each class's decays with whole-matrix operations on the inputs' array module;
only the per-class box selection (data-dependent sizes) loops on the host."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module
from pycoll.kernels import host_image
from pycoll.tensor import Tensor, wrap
from pycoll.vision.ops._common import floating, iou_matrix

__all__ = ["matrix_nms", "nms"]  # greedy_nms is shared with proposals.py


def greedy_nms(boxes: np.ndarray, threshold: float, offset: float = 0.0, eta: float = 1.0) -> np.ndarray:
    """Positions of the boxes (host array [K, 4], best first) that greedy NMS keeps: a box goes
    when its IoU with a kept one exceeds the threshold; ``eta`` < 1 shrinks the threshold by that
    factor after each kept box while it is above 0.5 (paddle's adaptive NMS). pycoll._C runs
    this loop (the same IoUs, computed as needed); the NumPy form below serves without it."""
    fast = host_image.greedy_nms(boxes, threshold, offset, eta)
    if fast is not None:
        return fast
    iou = iou_matrix(boxes, boxes, offset)
    kept = []
    for i in range(boxes.shape[0]):  # each box against the kept ones, at the threshold of the moment
        if not kept or not bool((iou[i, kept] > threshold).any()):  # (a NaN IoU, 0 / 0, is not above: paddle's)
            kept.append(i)
            if eta < 1 and threshold > 0.5:
                threshold *= eta
    return np.asarray(kept, dtype=np.int64)


def _best_first(scores: np.ndarray) -> np.ndarray:
    """The order of ``scores`` by paddle's ``argsort(descending=True)``: NaN first (above +inf),
    ties in their given order."""
    nan = np.isnan(scores)
    return np.lexsort((np.where(nan, 0, -scores), ~nan))  # (lexsort: the last key first; stable)


def _sorted_nms(boxes: np.ndarray, scores: np.ndarray, threshold: float) -> np.ndarray:
    """Indices (into boxes) kept by NMS after sorting by score, best first."""
    order = _best_first(scores)
    return order[greedy_nms(boxes[order], threshold)]


def nms(boxes: Tensor, iou_threshold: float = 0.3, scores: Optional[Tensor] = None,
        category_idxs: Optional[Tensor] = None, categories: Optional[Sequence[int]] = None,
        top_k: Optional[int] = None) -> Tensor:
    """Indices (int64) of the boxes [num_boxes, 4] (x1, y1, x2, y2) that non-maximum suppression
    keeps: a box is dropped when its IoU with a kept box is above ``iou_threshold``. Without
    scores the boxes are taken in their given order; with scores, best first (and so are the
    indices returned). With category_idxs and categories, each category is suppressed on its own
    and the survivors of all are sorted by score; ``top_k`` keeps the best k of them."""
    fn = "nms"
    b = floating(boxes, fn, "boxes", 2, 4)
    xp = array_module(b._array)
    host = np.asarray(b.numpy(), dtype=np.float64)
    if scores is None:
        return wrap(xp.asarray(greedy_nms(host, float(iou_threshold))))
    s = floating(scores, fn, "scores", 1)
    if s.shape[0] != host.shape[0]:
        raise ValueError(f"{fn}: scores must hold one score per box ({host.shape[0]}), got shape {s.shape}")
    score = np.asarray(s.numpy(), dtype=np.float64)
    if category_idxs is None:
        return wrap(xp.asarray(_sorted_nms(host, score, float(iou_threshold))))
    if top_k is not None and (not isinstance(top_k, (int, np.integer)) or not 0 <= top_k <= host.shape[0]):
        raise ValueError(f"{fn}: top_k must be an int no larger than the number of boxes ({host.shape[0]}), got {top_k!r}")
    if categories is None:
        raise ValueError(f"{fn}: categories (the ids of all categories) is needed when category_idxs is given")
    cats = np.asarray(as_tensor(category_idxs).numpy()).reshape(-1)
    if cats.shape[0] != host.shape[0]:
        raise ValueError(f"{fn}: category_idxs must hold one category per box ({host.shape[0]}), got {cats.shape[0]}")
    kept = []
    for c in categories:
        members = np.flatnonzero(cats == c)
        kept.append(members[_sorted_nms(host[members], score[members], float(iou_threshold))])
    kept = np.sort(np.concatenate(kept)) if kept else np.zeros(0, np.int64)
    kept = kept[_best_first(score[kept])]
    return wrap(xp.asarray(kept[:top_k] if top_k is not None else kept))


def _decay(xp: Any, iou: Any, use_gaussian: bool, sigma: float) -> Any:
    """Each box's decay: the smallest, over the better boxes j, of f(iou with j) / f(j's own
    largest IoU with a better box), f being (1 - iou) or the gaussian exp(-sigma iou^2)."""
    k = iou.shape[0]
    lower = xp.tril(iou, -1)  # iou[i, j] for j < i
    worst = lower.max(axis=1) if k else lower.sum(axis=1)  # each box's largest IoU with a better one
    if use_gaussian:
        ratio = xp.exp((worst[None, :] ** 2 - lower ** 2) * sigma)
    else:
        ratio = (1 - lower) / (1 - worst[None, :])
    ratio = xp.where(xp.tri(k, k, -1, dtype=bool), ratio, 1.0)
    return ratio.min(axis=1) if k else ratio.sum(axis=1)


_SHARED_IOU_BOXES = 2048  # matrix_nms takes an image's [M, M] IoUs at once up to this M (32 MB)


def matrix_nms(bboxes: Tensor, scores: Tensor, score_threshold: float, post_threshold: float, nms_top_k: int,
               keep_top_k: int, use_gaussian: bool = False, gaussian_sigma: float = 2.0, background_label: int = 0,
               normalized: bool = True, return_index: bool = False, return_rois_num: bool = True,
               name: Optional[str] = None) -> Tuple[Tensor, Optional[Tensor], Optional[Tensor]]:
    """Matrix NMS over bboxes [N, M, 4] and scores [N, C, M]: per image and class (but
    ``background_label``), the boxes scoring above ``score_threshold`` (the best ``nms_top_k``,
    -1 for all) have their scores decayed by their overlap with better ones; those still above
    ``post_threshold`` are kept, the best ``keep_top_k`` per image (-1: all). Returns (out
    [K, 6] rows of label, score, x1, y1, x2, y2; rois_num [N] int32 or None; index [K, 1] int32,
    box n * M + m, or None), paddle's order."""
    fn = "matrix_nms"
    b = floating(bboxes, fn, "bboxes", 3, 4)
    s = floating(scores, fn, "scores", 3)
    if s.shape[0] != b.shape[0] or s.shape[2] != b.shape[1]:
        raise ValueError(f"{fn}: scores must be [N, C, M] for bboxes [N, M, 4] = {b.shape}, got {s.shape}")
    xp = array_module(b._array)
    ba, sa = b._array, s._array.astype(b.dtype, copy=False)
    n, m = b.shape[0], b.shape[1]
    offset = 0.0 if normalized else 1.0
    host_scores = s.numpy()
    rows, index, counts = [], [], []
    for i in range(n):
        image_rows, image_index = [], []
        # every class picks among the image's same boxes: their IoUs once (unless too many to hold)
        image_iou = iou_matrix(ba[i], ba[i], offset) if m <= _SHARED_IOU_BOXES else None
        for c in range(s.shape[1]):
            if c == background_label:
                continue
            score = sa[i, c]
            cand = np.flatnonzero(host_scores[i, c] > score_threshold)
            cand = cand[np.argsort(-host_scores[i, c][cand], kind="stable")]
            if nms_top_k > -1:
                cand = cand[:nms_top_k]
            if cand.size == 0:
                continue
            sel = xp.asarray(cand)
            iou = iou_matrix(ba[i][sel], ba[i][sel], offset) if image_iou is None else image_iou[sel[:, None], sel]
            decayed = score[sel] * _decay(xp, iou, use_gaussian, gaussian_sigma)
            keep = decayed > post_threshold
            boxes = ba[i][sel][keep]
            image_rows.append(xp.concatenate([xp.full((boxes.shape[0], 1), c, dtype=ba.dtype),
                                              decayed[keep][:, None], boxes], axis=1))
            image_index.append(sel[keep] + i * m)
        if image_rows:
            out_i = xp.concatenate(image_rows)
            idx_i = xp.concatenate(image_index)
            order = xp.asarray(np.argsort(-wrap(out_i[:, 1]).numpy(), kind="stable"))
            if keep_top_k > -1:
                order = order[:keep_top_k]
            rows.append(out_i[order]), index.append(idx_i[order])
        counts.append(int(order.shape[0]) if image_rows else 0)
    out = xp.concatenate(rows) if rows else xp.zeros((0, 6), dtype=ba.dtype)
    idx = (xp.concatenate(index) if index else xp.zeros(0, np.int64)).astype(np.int32)[:, None]
    rois_num = wrap(xp.asarray(counts, dtype=np.int32)) if return_rois_num else None
    return wrap(out), rois_num, (wrap(idx) if return_index else None)
