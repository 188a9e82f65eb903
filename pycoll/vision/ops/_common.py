"""What the detection ops share: argument checks and the box geometry (areas, IoU matrices)."""
from __future__ import annotations

from typing import Any, Tuple

import numpy as np

from pycoll._fp_quiet import quiet
from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module
from pycoll.tensor import Tensor


def floating(x: Any, fn: str, name: str, ndim: Any = None, last: Any = None) -> Tensor:
    """``x`` as a Tensor of float32/float64 numbers (of ``ndim`` axes and last axis ``last`` when
    given); ValueError naming ``name`` otherwise."""
    x = as_tensor(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"{fn}: {name} must be float32 or float64, got {x.dtype}")
    if ndim is not None and x.ndim not in (ndim if isinstance(ndim, tuple) else (ndim,)):
        raise ValueError(f"{fn}: {name} must have {ndim} axes, got shape {x.shape}")
    if last is not None and x.shape[-1] != last:
        raise ValueError(f"{fn}: {name}'s last axis must hold {last} numbers, got shape {x.shape}")
    return x


def pair(value: Any, fn: str, name: str) -> Tuple[int, int]:
    """An int or a pair of ints (>= 1), paddle's ``output_size``."""
    items = (value, value) if isinstance(value, (int, np.integer)) and not isinstance(value, bool) else value
    if not isinstance(items, (list, tuple)) or len(items) != 2 \
            or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1 for v in items):
        raise ValueError(f"{fn}: {name} must be an int >= 1 or a pair of them, got {value!r}")
    return int(items[0]), int(items[1])


def round_half_away(xp: Any, v: Any) -> Any:
    """std::round: halves away from zero (NumPy's round takes them to even)."""
    return xp.copysign(xp.floor(xp.abs(v) + 0.5), v)


def box_area(b: Any, offset: float) -> Any:
    """Areas of boxes b[..., 4] (x1, y1, x2, y2); ``offset`` 1 counts pixels (paddle's
    unnormalized boxes), 0 measures lengths. Boxes with x2 < x1 or y2 < y1 have area 0."""
    w, h = b[..., 2] - b[..., 0], b[..., 3] - b[..., 1]
    xp = array_module(b)
    return xp.where((w < 0) | (h < 0), 0, (w + offset) * (h + offset))


def iou_matrix(a: Any, b: Any, offset: float = 0.0) -> Any:
    """IoU of every box of a [M, 4] with every box of b [K, 4] as [M, K] (paddle's JaccardOverlap:
    0 for boxes that do not meet)."""
    xp = array_module(a)
    # one [M, K] plane per coordinate (not [M, K, 2] ones: their pairs of strided elements took 8x)
    ax1, ay1, ax2, ay2 = (a[:, i, None] for i in range(4))
    bx1, by1, bx2, by2 = (b[None, :, i] for i in range(4))
    meet = (bx1 <= ax2) & (by1 <= ay2) & (bx2 >= ax1) & (by2 >= ay1)
    inter = (xp.minimum(ax2, bx2) - xp.maximum(ax1, bx1) + offset) * (xp.minimum(ay2, by2) - xp.maximum(ay1, by1) + offset)
    union = box_area(a, offset)[:, None] + box_area(b, offset)[None, :] - inter
    with quiet():
        return xp.where(meet, inter / union, 0)


def batch_index(boxes_num: Any, num_boxes: int, batch: int, fn: str) -> Any:
    """The image each of ``num_boxes`` rois belongs to, from paddle's ``boxes_num`` (rois per image)."""
    counts = as_tensor(boxes_num)
    if counts.dtype.kind not in "iu" or counts.ndim != 1 or counts.shape[0] != batch:
        raise ValueError(f"{fn}: boxes_num must be a 1-D int tensor of {batch} counts (one per image), "
                         f"got shape {counts.shape} dtype {counts.dtype}")
    host = np.asarray(counts.numpy(), dtype=np.int64)
    if (host < 0).any() or host.sum() != num_boxes:
        raise ValueError(f"{fn}: boxes_num must be counts >= 0 adding up to the {num_boxes} boxes, got {host.tolist()}")
    xp = array_module(counts._array)
    return xp.asarray(np.repeat(np.arange(batch), host))
