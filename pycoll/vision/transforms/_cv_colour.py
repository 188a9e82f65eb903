"""The OpenCV colour conversions paddle's array path calls (``cv2.cvtColor``), in NumPy, so that
arrays come out as paddle computes them without OpenCV:

- ``gray``: RGB2GRAY / BGR2GRAY. Integer images use OpenCV's 15-bit fixed-point weights
  (9798, 19235, 3735 for R, G, B) with rounding, equal to cv2 on every uint8 colour; float images
  the float weights 0.299, 0.587, 0.114 (equal to cv2 within a float32 rounding).
- ``bgr_to_hsv_full`` / ``hsv_to_bgr_full``: BGR2HSV_FULL and HSV2BGR_FULL on uint8 images (hue
  over 0..255). The forward conversion is OpenCV's integer one (reciprocal tables with 12
  fractional bits) and equals cv2 on all 2^24 colours; the backward one is OpenCV's float32
  sector formula rounded to uint8 and equals cv2 on all but 88 of the 2^24 HSV triples, where a
  result lies on .5 and cv2's vector code rounds it the other way (off by one).

On uint8 images each runs in pycoll._C where it is built (csrc/host_image.cpp, the same bytes as
the formulas here, which serve the other dtypes and a build without the kernels)."""
from __future__ import annotations

import numpy as np

from pycoll.kernels import host_image

_GRAY_SHIFT = 15
_GRAY_WEIGHTS = (9798, 19235, 3735)  # R, G, B in units of 2**-15
_GRAY_FLOAT_WEIGHTS = (0.299, 0.587, 0.114)
_HSV_SHIFT = 12


def gray(img: np.ndarray, blue_first: bool = False, channels: int = 1) -> np.ndarray:
    """The [H, W] luma of a [H, W, 3] array whose channels are R, G, B (B, G, R with
    ``blue_first``), in the array's dtype; ``channels=3``: [H, W, 3] of it (GRAY2RGB after)."""
    fast = host_image.gray(img, blue_first, channels)
    if fast is not None:
        return fast
    r, g, b = (img[..., 2], img[..., 1], img[..., 0]) if blue_first else (img[..., 0], img[..., 1], img[..., 2])
    if img.dtype.kind in "ui":
        wr, wg, wb = _GRAY_WEIGHTS
        acc = r.astype(np.int64) * wr + g.astype(np.int64) * wg + b.astype(np.int64) * wb
        grey = ((acc + (1 << (_GRAY_SHIFT - 1))) >> _GRAY_SHIFT).astype(img.dtype)
    else:
        wr, wg, wb = (img.dtype.type(w) for w in _GRAY_FLOAT_WEIGHTS)
        grey = (b * wb + g * wg + r * wr).astype(img.dtype, copy=False)
    if channels == 1:
        return grey
    out = np.empty(grey.shape + (channels,), grey.dtype)
    out[...] = grey[..., None]  # (np.repeat along a new last axis is a slow, element-wise copy)
    return out


def _reciprocal_table(numerator: int, scale: float) -> np.ndarray:
    """round((numerator << 12) / (scale * i)) for i in 0..255, 0 at i = 0 (OpenCV's tables)."""
    i = np.arange(1, 256, dtype=np.float64)
    return np.concatenate([[0], np.rint((numerator << _HSV_SHIFT) / (scale * i))]).astype(np.int64)


_SAT_DIV = _reciprocal_table(255, 1.0)
_HUE_DIV = _reciprocal_table(256, 6.0)


def bgr_to_hsv_full(img: np.ndarray) -> np.ndarray:
    """A uint8 [..., 3] B, G, R array as uint8 H, S, V (hue in 0..255)."""
    fast = host_image.bgr_to_hsv_full(img)
    if fast is not None:
        return fast
    a = img.astype(np.int64)
    b, g, r = a[..., 0], a[..., 1], a[..., 2]
    v = np.maximum(np.maximum(b, g), r)
    diff = v - np.minimum(np.minimum(b, g), r)
    half = 1 << (_HSV_SHIFT - 1)
    s = (diff * _SAT_DIV[v] + half) >> _HSV_SHIFT
    h = np.where(v == r, g - b, np.where(v == g, b - r + 2 * diff, r - g + 4 * diff))
    h = (h * _HUE_DIV[diff] + half) >> _HSV_SHIFT
    h = np.where(h < 0, h + 256, h)
    return np.stack([np.clip(h, 0, 255), s, v], axis=-1).astype(np.uint8)


def hsv_to_bgr_full(hsv: np.ndarray, hue_shift: int = 0) -> np.ndarray:
    """A uint8 [..., 3] H, S, V array (hue in 0..255) as uint8 B, G, R, ``hue_shift`` added to the
    hue first (modulo 256)."""
    fast = host_image.hsv_to_bgr_full(hsv, hue_shift)
    if fast is not None:
        return fast
    f32 = np.float32
    one = f32(1)
    hue = (hsv[..., 0].astype(np.int64) + hue_shift) % 256
    h = hue.astype(f32) * (f32(6) / f32(255))
    s = hsv[..., 1].astype(f32) * (one / f32(255))
    v = hsv[..., 2].astype(f32) * (one / f32(255))
    whole = np.trunc(h)
    h = h - whole
    sector = whole - np.trunc(whole * (one / f32(6))) * f32(6)
    top, low = v, v * (one - s)
    falling, rising = v * (one - s * h), v * (one - s * (one - h))
    b = np.select([sector < 2, sector == 2, sector < 5], [low, rising, top], falling)
    g = np.select([sector < 1, sector < 3, sector == 3], [rising, top, falling], low)
    r = np.select([sector < 1, sector == 1, sector < 4, sector == 4], [top, falling, low, rising], top)
    out = np.rint(np.stack([b, g, r], axis=-1) * f32(255))
    return np.clip(out, 0, 255).astype(np.uint8)
