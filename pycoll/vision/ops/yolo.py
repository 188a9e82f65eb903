"""paddle.vision.ops.yolo_box (YOLOv3's head decoded into boxes and scores) and yolo_loss."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from pycoll._fp_quiet import quiet
from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module
from pycoll.tensor import Tensor, wrap
from pycoll.vision.ops._common import floating

__all__ = ["yolo_box"]


def sigmoid(xp: Any, v: Any) -> Any:
    with quiet():
        return 1.0 / (1.0 + xp.exp(-v))


def check_anchors(anchors: Any, fn: str) -> np.ndarray:
    """paddle's flat anchor list (w0, h0, w1, h1, ...) as [A, 2] floats."""
    if not isinstance(anchors, (list, tuple)) or not anchors or len(anchors) % 2 \
            or not all(isinstance(v, (int, float, np.integer, np.floating)) for v in anchors):
        raise ValueError(f"{fn}: anchors must be a list of (width, height) numbers, an even count, got {anchors!r}")
    return np.asarray(anchors, dtype=np.float64).reshape(-1, 2)


def yolo_box(x: Tensor, img_size: Tensor, anchors: Sequence[int], class_num: int, conf_thresh: float,
             downsample_ratio: int, clip_bbox: bool = True, name: Optional[str] = None, scale_x_y: float = 1.0,
             iou_aware: bool = False, iou_aware_factor: float = 0.5) -> Tuple[Tensor, Tensor]:
    """Decode a YOLOv3 head x [N, A * (5 + class_num), H, W] (with iou_aware, A IoU channels first:
    [N, A * (6 + class_num), H, W]) into boxes [N, A * H * W, 4] (x1, y1, x2, y2 in the pixels of
    img_size [N, 2] = (height, width)) and scores [N, A * H * W, class_num] (objectness times class
    probability). Predictions whose objectness is below conf_thresh get zero boxes and scores;
    clip_bbox keeps boxes inside the image. Takes no gradient (as paddle's)."""
    fn = "yolo_box"
    x = floating(x, fn, "x", 4)
    anchor = check_anchors(anchors, fn)
    a_num, (n, ch, h, w) = anchor.shape[0], x.shape
    per = 5 + class_num
    if ch != a_num * (per + (1 if iou_aware else 0)):
        raise ValueError(f"{fn}: x must have {a_num} anchors x ({per}{' + 1' if iou_aware else ''}) = "
                         f"{a_num * (per + (1 if iou_aware else 0))} channels, got {ch}")
    size = as_tensor(img_size)
    if size.shape != [n, 2] or size.dtype.kind not in "iu":
        raise ValueError(f"{fn}: img_size must be an int [N, 2] tensor of (height, width), N = {n}, "
                         f"got shape {size.shape} dtype {size.dtype}")
    a = x._array
    xp = array_module(a)
    dt = a.dtype
    pred = a[:, a_num:] if iou_aware else a
    pred = pred.reshape(n, a_num, per, h, w)
    conf = sigmoid(xp, pred[:, :, 4])
    if iou_aware:
        conf = conf ** (1 - iou_aware_factor) * sigmoid(xp, a[:, :a_num]) ** iou_aware_factor
    img = size._array.astype(dt)
    img_h, img_w = img[:, 0, None, None, None], img[:, 1, None, None, None]
    bias = -0.5 * (scale_x_y - 1)
    cx = (xp.arange(w, dtype=dt) + sigmoid(xp, pred[:, :, 0]) * scale_x_y + bias) * img_w / w
    cy = (xp.arange(h, dtype=dt)[:, None] + sigmoid(xp, pred[:, :, 1]) * scale_x_y + bias) * img_h / h
    anc = xp.asarray(anchor, dtype=dt)
    with quiet():
        bw = xp.exp(pred[:, :, 2]) * anc[:, 0, None, None] * img_w / (downsample_ratio * w)
        bh = xp.exp(pred[:, :, 3]) * anc[:, 1, None, None] * img_h / (downsample_ratio * h)
    x1, y1, x2, y2 = cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2
    if clip_bbox:
        x1, y1 = xp.maximum(x1, 0), xp.maximum(y1, 0)
        x2, y2 = xp.minimum(x2, img_w - 1), xp.minimum(y2, img_h - 1)
    keep = (conf >= conf_thresh)[..., None]  # [N, A, H, W, 1]
    boxes = xp.where(keep, xp.stack([x1, y1, x2, y2], axis=-1), 0).astype(dt)
    scores = xp.where(keep, conf[..., None] * sigmoid(xp, xp.moveaxis(pred[:, :, 5:], 2, -1)), 0).astype(dt)
    return wrap(boxes.reshape(n, -1, 4)), wrap(scores.reshape(n, -1, class_num))
