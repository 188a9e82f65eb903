"""paddle.vision.ops.box_coder and prior_box: box encoding against priors and SSD's prior boxes.

Both compute on the array module of their inputs (NumPy or CuPy). Their outputs take no gradient,
as paddle's (paddle 3.3.1 has no backward for either: a box_coder output is stop_gradient, so a
loss through it leaves its inputs' gradients alone)."""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from pycoll._graph import no_grad
from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module
from pycoll.dtypes import is_floating
from pycoll.math_ops import abs as abs_, exp, log
from pycoll.shape_ops import stack, unsqueeze
from pycoll.tensor import Tensor, wrap
from pycoll.vision.ops._common import floating

__all__ = ["box_coder", "prior_box"]

_CODE_TYPES = ("encode_center_size", "decode_center_size")


def _centre_size(b: Tensor, offset: float) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """(cx, cy, w, h) of boxes b[..., 4] given as (x1, y1, x2, y2)."""
    w = b[..., 2] - b[..., 0] + offset
    h = b[..., 3] - b[..., 1] + offset
    return b[..., 0] + w * 0.5, b[..., 1] + h * 0.5, w, h


@no_grad()
def box_coder(prior_box: Tensor, prior_box_var: Union[Tensor, Sequence[float]], target_box: Tensor,
              code_type: str = "encode_center_size", box_normalized: bool = True, axis: int = 0,
              name: Optional[str] = None) -> Tensor:
    """Encode target boxes against priors, or decode offsets back into boxes (paddle's box_coder).

    prior_box [M, 4] (x1, y1, x2, y2); prior_box_var a [M, 4] tensor or 4 floats dividing
    (encode) or scaling (decode) the four codes. 'encode_center_size': target_box [N, 4] gives
    [N, M, 4] codes ((tx - px) / pw, (ty - py) / ph, log(tw / pw), log(th / ph)). 'decode_center_size':
    target_box [N, M, 4] codes give [N, M, 4] boxes; ``axis`` 0 pairs prior j with column j,
    ``axis`` 1 pairs prior i with row i (then prior_box is [N, 4]). box_normalized=False counts
    pixels: widths are x2 - x1 + 1 and decoded corners end one pixel earlier."""
    fn = "box_coder"
    if code_type not in _CODE_TYPES:
        raise ValueError(f"{fn}: code_type must be one of {list(_CODE_TYPES)}, got {code_type!r}")
    if axis not in (0, 1):
        raise ValueError(f"{fn}: axis must be 0 or 1, got {axis!r}")
    prior = floating(prior_box, fn, "prior_box", 2, 4)
    target = floating(target_box, fn, "target_box")
    if isinstance(prior_box_var, (list, tuple)):
        if len(prior_box_var) != 4:
            raise ValueError(f"{fn}: prior_box_var as a list must hold 4 floats, got {prior_box_var!r}")
        xp = array_module(prior._array)
        # paddle keeps a list variance as float32 numbers (an op attribute), also for float64 boxes
        var = wrap(xp.asarray(np.asarray(prior_box_var, dtype=np.float32), dtype=prior.dtype))
    elif isinstance(prior_box_var, Tensor) or hasattr(prior_box_var, "__array__"):
        var = floating(prior_box_var, fn, "prior_box_var", 2, 4)
        if var.shape[0] != prior.shape[0]:
            raise ValueError(f"{fn}: prior_box_var must be [M, 4] like prior_box {prior.shape}, got {var.shape}")
    else:
        raise TypeError(f"{fn}: prior_box_var must be a Tensor or a list/tuple of 4 floats, "
                        f"got {type(prior_box_var).__name__}")
    offset = 0.0 if box_normalized else 1.0
    pcx, pcy, pw, ph = _centre_size(prior, offset)
    v = [var[..., k] for k in range(4)]
    if code_type == "encode_center_size":
        if target.ndim != 2 or target.shape[1] != 4:
            raise ValueError(f"{fn}: target_box must be [N, 4] to encode, got {target.shape}")
        # paddle's kernel: the target's centre is the corners' midpoint, even for pixel boxes
        _, _, tw, th = _centre_size(target, offset)
        tcx, tcy = (target[..., 0] + target[..., 2]) * 0.5, (target[..., 1] + target[..., 3]) * 0.5
        tcx, tcy, tw, th = (unsqueeze(t, 1) for t in (tcx, tcy, tw, th))  # [N, 1] against [M]
        codes = [(tcx - pcx) / pw / v[0], (tcy - pcy) / ph / v[1],
                 log(abs_(tw / pw)) / v[2], log(abs_(th / ph)) / v[3]]
        return stack(codes, axis=-1)
    if target.ndim != 3 or target.shape[2] != 4:
        raise ValueError(f"{fn}: target_box must be [N, M, 4] to decode, got {target.shape}")
    if target.shape[1 - axis] != prior.shape[0]:
        raise ValueError(f"{fn}: with axis={axis} prior_box must have target_box.shape[{1 - axis}] = "
                         f"{target.shape[1 - axis]} rows, got {prior.shape[0]}")
    if axis == 1:  # prior i goes with row i: broadcast along the columns
        pcx, pcy, pw, ph = (unsqueeze(t, 1) for t in (pcx, pcy, pw, ph))
        v = [unsqueeze(t, 1) if t.ndim == 1 and var.ndim == 2 else t for t in v]
    cx = v[0] * target[..., 0] * pw + pcx
    cy = v[1] * target[..., 1] * ph + pcy
    w = exp(v[2] * target[..., 2]) * pw
    h = exp(v[3] * target[..., 3]) * ph
    return stack([cx - w * 0.5, cy - h * 0.5, cx + w * 0.5 - offset, cy + h * 0.5 - offset], axis=-1)


def _floats(value: Any, fn: str, name: str) -> List[float]:
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) for v in items):
        raise TypeError(f"{fn}: {name} must be a number or a list of numbers, got {value!r}")
    return [float(v) for v in items]


def _expand_ratios(ratios: List[float], flip: bool) -> List[float]:
    """1 first, then each new ratio (and its inverse with flip), duplicates (within 1e-6) dropped."""
    out = [1.0]
    for r in ratios:
        if any(abs(r - o) < 1e-6 for o in out):
            continue
        out.append(r)
        if flip:
            out.append(1.0 / r)
    return out


def prior_box(input: Tensor, image: Tensor, min_sizes: Union[Sequence[float], float],
              max_sizes: Union[Sequence[float], float, None] = None,
              aspect_ratios: Union[Sequence[float], float] = [1.0],
              variance: Union[Sequence[float], float] = [0.1, 0.1, 0.2, 0.2], flip: bool = False,
              clip: bool = False, steps: Union[Sequence[float], float] = [0.0, 0.0], offset: float = 0.5,
              min_max_aspect_ratios_order: bool = False, name: Optional[str] = None) -> Tuple[Tensor, Tensor]:
    """SSD's prior boxes for every cell of the feature map ``input`` [N, C, H, W] over ``image``
    [N, C, IH, IW]: boxes [H, W, num_priors, 4] (x1, y1, x2, y2 as fractions of the image) and their
    variances, of the same shape. Per cell and min size: one box per aspect ratio (1 first, then
    the given ones, with their inverses under ``flip``), plus sqrt(min * max) where max_sizes are
    given; ``min_max_aspect_ratios_order`` puts the min box, then the max box, then the other
    ratios (Caffe's order). ``steps`` (step_w, step_h) default to the image / feature ratio."""
    fn = "prior_box"
    feat, img = as_tensor(input), as_tensor(image)
    if feat.ndim != 4 or img.ndim != 4:
        raise ValueError(f"{fn}: input and image must be 4-D [N, C, H, W], got shapes {feat.shape} and {img.shape}")
    mins = _floats(min_sizes, fn, "min_sizes")
    ratios = _expand_ratios(_floats(aspect_ratios, fn, "aspect_ratios"), flip)
    step = _floats(steps, fn, "steps")
    if len(step) != 2:
        raise ValueError(f"{fn}: steps should be (step_w, step_h), got {steps!r}")
    variances = _floats(variance, fn, "variance")
    if len(variances) != 4:
        raise ValueError(f"{fn}: variance must hold 4 numbers, got {variance!r}")
    maxs = [] if max_sizes is None else _floats(max_sizes, fn, "max_sizes")
    if maxs and maxs[0] <= 0:
        maxs = []
    if maxs and len(maxs) != len(mins):
        raise ValueError(f"{fn}: max_sizes must pair with min_sizes ({len(mins)}), got {max_sizes!r}")
    for k, (low, high) in enumerate(zip(mins, maxs)):
        if high <= low:  # paddle refuses it too
            raise ValueError(f"{fn}: max_sizes[{k}] must be greater than min_sizes[{k}], got {high} and {low}")
    fh, fw = feat.shape[2:]
    ih, iw = img.shape[2:]
    step_w = step[0] if step[0] != 0 else iw / fw
    step_h = step[1] if step[1] != 0 else ih / fh
    half_sizes = []  # (half width, half height) of each prior of a cell, in order
    for k, m in enumerate(mins):
        big = [(math.sqrt(m * maxs[k]) / 2,) * 2] if maxs else []
        shaped = [(m * math.sqrt(r) / 2, m / math.sqrt(r) / 2) for r in ratios]
        if min_max_aspect_ratios_order:
            half_sizes += [(m / 2, m / 2)] + big + [s for s, r in zip(shaped, ratios) if abs(r - 1) >= 1e-6]
        else:
            half_sizes += shaped + big
    xp = array_module(feat._array)
    dtype = feat.dtype if is_floating(feat.dtype) else np.float32
    half = xp.asarray(half_sizes, dtype=np.float64).reshape(-1, 2)  # [P, 2] (no min_sizes: P = 0, as paddle's)
    cx = (xp.arange(fw) + offset) * step_w
    cy = (xp.arange(fh) + offset) * step_h
    centre = xp.stack(xp.broadcast_arrays(cx[None, :, None], cy[:, None, None]), -1)  # [H, W, 1, 2]
    size = xp.asarray([iw, ih], dtype=np.float64)
    boxes = xp.concatenate([(centre - half) / size, (centre + half) / size], axis=-1).astype(dtype)
    if clip:
        boxes = xp.clip(boxes, 0.0, 1.0)
    var = xp.broadcast_to(xp.asarray(variances, dtype=dtype), boxes.shape).copy()
    return wrap(boxes), wrap(var)
