"""paddle.vision.ops generate_proposals (RPN: anchors + deltas -> NMS'd proposals) and
distribute_fpn_proposals (proposals assigned to FPN levels by size).

Both have outputs of data-dependent size and take no gradient. Box decoding and level assignment
run on the inputs' array module; generate_proposals' filtering and greedy NMS run on the host (a
sequential loop; the proposals go back to the inputs' device)."""
from __future__ import annotations

import math
from typing import Any, List, Optional, Tuple

import numpy as np

from pycoll._fp_quiet import quiet
from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module
from pycoll.tensor import Tensor, wrap
from pycoll.vision.ops._common import batch_index, box_area, floating
from pycoll.vision.ops.nms import greedy_nms

__all__ = ["distribute_fpn_proposals", "generate_proposals"]

_CLIP = math.log(1000.0 / 16.0)  # paddle's kBBoxClipDefault: the largest log-scale of a width or height


def distribute_fpn_proposals(fpn_rois: Tensor, min_level: int, max_level: int, refer_level: int, refer_scale: int,
                             pixel_offset: bool = False, rois_num: Optional[Tensor] = None,
                             name: Optional[str] = None) -> Tuple[List[Tensor], Tensor, Optional[List[Tensor]]]:
    """Each roi of fpn_rois [R, 4] goes to level floor(refer_level + log2(sqrt(area) / refer_scale)),
    clipped to [min_level, max_level]. Returns (the rois of each level, in their order; restore
    index [R, 1] int32 such that the levels' rois concatenated and taken at it are fpn_rois again;
    per level, the number of rois of each image (int32 [N]) when rois_num is given, else None)."""
    fn = "distribute_fpn_proposals"
    if not (isinstance(min_level, int) and isinstance(max_level, int)) or min_level <= 0 or max_level <= 0:
        raise ValueError(f"{fn}: min_level and max_level must be ints > 0, got {min_level!r} and {max_level!r}")
    levels = max_level - min_level + 1
    if not 1 < levels < 100:
        raise ValueError(f"{fn}: max_level - min_level + 1 must be in [2, 99], got {levels}")
    rois = floating(fpn_rois, fn, "fpn_rois", 2, 4)
    a = rois._array
    xp = array_module(a)
    with quiet():
        scale = xp.sqrt(box_area(a, 1.0 if pixel_offset else 0.0))
        level = xp.floor(xp.log2(scale / refer_scale + 1e-8) + refer_level)
    level = xp.clip(level, min_level, max_level).astype(np.int64) - min_level
    order = xp.argsort(level, kind="stable") if xp is np else xp.argsort(level)  # CuPy's argsort is stable
    restore = xp.empty_like(order)
    restore[order] = xp.arange(order.shape[0])
    multi = [wrap(a[level == k]) for k in range(levels)]
    per_level = None
    if rois_num is not None:
        counts = as_tensor(rois_num)
        images = counts.shape[0] if counts.ndim == 1 else -1  # batch_index refuses anything but [N]
        image = batch_index(counts, a.shape[0], images, fn)
        per_level = [wrap(xp.bincount(image[level == k], minlength=counts.shape[0]).astype(np.int32))
                     for k in range(levels)]
    return multi, wrap(restore.astype(np.int32)[:, None]), per_level


def _decode(anchors: Any, deltas: Any, variances: Any, offset: float) -> Any:
    """Anchors [K, 4] moved by deltas [K, 4] scaled by variances: boxes [K, 4] (paddle's BoxCoder
    of the proposal ops, widths clipped at exp(log(1000 / 16)))."""
    xp = array_module(anchors)
    w = anchors[:, 2] - anchors[:, 0] + offset
    h = anchors[:, 3] - anchors[:, 1] + offset
    d = deltas * variances
    cx = d[:, 0] * w + anchors[:, 0] + 0.5 * w
    cy = d[:, 1] * h + anchors[:, 1] + 0.5 * h
    with quiet():
        bw = xp.exp(xp.minimum(d[:, 2], _CLIP)) * w
        bh = xp.exp(xp.minimum(d[:, 3], _CLIP)) * h
    return xp.stack([cx - bw / 2, cy - bh / 2, cx + bw / 2 - offset, cy + bh / 2 - offset], axis=1)


def generate_proposals(scores: Tensor, bbox_deltas: Tensor, img_size: Tensor, anchors: Tensor, variances: Tensor,
                       pre_nms_top_n: int = 6000, post_nms_top_n: int = 1000, nms_thresh: float = 0.5,
                       min_size: float = 0.1, eta: float = 1.0, pixel_offset: bool = False,
                       return_rois_num: bool = False, name: Optional[str] = None
                       ) -> Tuple[Tensor, Tensor, Optional[Tensor]]:
    """RPN proposals per image: the pre_nms_top_n best-scoring anchors (scores [N, A, H, W]) moved
    by bbox_deltas [N, 4A, H, W] times variances [H, W, A, 4] (anchors [H, W, A, 4]), clipped to
    img_size [N, 2] (height, width), those narrower than max(min_size, 1) dropped, greedy NMS at
    nms_thresh (adaptive with eta < 1), the best post_nms_top_n kept. Returns (rois [K, 4],
    probabilities [K, 1], rois per image int32 [N] or None); an image left with no box gives one
    zero box of score 0, as paddle's."""
    fn = "generate_proposals"
    s = floating(scores, fn, "scores", 4)
    n, a_num, h, w = s.shape
    d = floating(bbox_deltas, fn, "bbox_deltas", 4)
    if d.shape != [n, 4 * a_num, h, w]:
        raise ValueError(f"{fn}: bbox_deltas must be [N, 4A, H, W] = {[n, 4 * a_num, h, w]}, got {d.shape}")
    anc = floating(anchors, fn, "anchors")
    var = floating(variances, fn, "variances")
    for what, t in (("anchors", anc), ("variances", var)):
        if t.size != h * w * a_num * 4:
            raise ValueError(f"{fn}: {what} must be [H, W, A, 4] = {[h, w, a_num, 4]}, got {t.shape}")
    size = floating(img_size, fn, "img_size", 2, 2)
    if size.shape[0] != n:
        raise ValueError(f"{fn}: img_size must be [N, 2] with N = {n}, got {size.shape}")
    xp = array_module(s._array)
    offset = 1.0 if pixel_offset else 0.0
    score_all = s._array.transpose(0, 2, 3, 1).reshape(n, -1)  # the anchors' order: h, w, a
    delta_all = d._array.reshape(n, a_num, 4, h, w).transpose(0, 3, 4, 1, 2).reshape(n, -1, 4)
    anc_all, var_all = anc._array.reshape(-1, 4), var._array.reshape(-1, 4)
    im = size.numpy().astype(np.float64)
    rois, probs, counts = [], [], []
    for i in range(n):
        host_scores = wrap(score_all[i]).numpy()
        order = np.argsort(-host_scores, kind="stable")
        if 0 < pre_nms_top_n < order.shape[0]:
            order = order[:pre_nms_top_n]
        sel = xp.asarray(order)
        boxes = _decode(anc_all[sel], delta_all[i][sel], var_all[sel], offset)
        limit = xp.asarray([im[i, 1], im[i, 0], im[i, 1], im[i, 0]], dtype=boxes.dtype) - offset
        boxes = wrap(xp.maximum(xp.minimum(boxes, limit), 0)).numpy()
        bw, bh = boxes[:, 2] - boxes[:, 0] + offset, boxes[:, 3] - boxes[:, 1] + offset
        keep = (bw >= max(min_size, 1.0)) & (bh >= max(min_size, 1.0))
        if pixel_offset:
            keep &= (boxes[:, 0] + bw / 2 <= im[i, 1]) & (boxes[:, 1] + bh / 2 <= im[i, 0])
        kept = np.flatnonzero(keep)
        if kept.size == 0:
            box_i, prob_i = np.zeros((1, 4), boxes.dtype), np.zeros(1, host_scores.dtype)
        else:
            chosen = kept[greedy_nms(boxes[kept].astype(np.float64), nms_thresh, offset, eta)]
            if 0 < post_nms_top_n < chosen.shape[0]:
                chosen = chosen[:post_nms_top_n]
            box_i, prob_i = boxes[chosen], host_scores[order[chosen]]
        rois.append(box_i), probs.append(prob_i), counts.append(box_i.shape[0])
    out_rois = wrap(xp.asarray(np.concatenate(rois)).astype(s.dtype))
    out_probs = wrap(xp.asarray(np.concatenate(probs)).astype(s.dtype)[:, None])
    nums = wrap(xp.asarray(counts, dtype=np.int32)) if return_rois_num else None
    return out_rois, out_probs, nums
