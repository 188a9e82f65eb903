"""Resizing HWC / HW NumPy images the way paddle does it on arrays (OpenCV's ``cv2.resize``):
'nearest' takes source pixel floor(i * in / out); 'bilinear' samples at half-pixel centres
((i + 0.5) * in / out - 0.5, clamped to the edge) and, on uint8 images, reproduces OpenCV's
11-bit fixed-point weights and rounding (equal to paddle's output when shrinking; when enlarging,
OpenCV's vectorised path rounds a few pixels in a hundred one step differently). uint8 'bilinear'
runs in pycoll._C where it is built (csrc/host_image.cpp, the same bytes as the formula here),
and so do 'nearest' (any dtype: the pixels' bytes move) and float32 'bilinear', through
``resample``: a resize by a few taps a row along each axis (functional's 'bicubic', 'area' and
'lanczos' too)."""
from __future__ import annotations

from typing import Tuple

import numpy as np

from pycoll.kernels import host_image

_COEF_SCALE = 2048  # OpenCV's INTER_RESIZE_COEF_SCALE (11 fractional bits)


def _taps(out_size: int, in_size: int) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each output position: the two source indices and the weight of the second, in float32
    as OpenCV computes them (scale = 1 / (out / in))."""
    scale = 1.0 / (float(out_size) / in_size)
    pos = ((np.arange(out_size) + 0.5) * scale - 0.5).astype(np.float32)
    first = np.floor(pos).astype(np.int64)
    frac = (pos - first).astype(np.float32)
    low, high = first < 0, first >= in_size - 1
    frac[low | high] = 0
    first[low] = 0
    first[high] = in_size - 1
    return first, np.minimum(first + 1, in_size - 1), frac


def _bilinear_uint8(img: np.ndarray, oh: int, ow: int) -> np.ndarray:
    y0, y1, fy = _taps(oh, img.shape[0])
    x0, x1, fx = _taps(ow, img.shape[1])
    tail = (None,) * (img.ndim - 2)
    ax0 = np.rint((np.float32(1) - fx) * np.float32(_COEF_SCALE)).astype(np.int64)
    ay0 = np.rint((np.float32(1) - fy) * np.float32(_COEF_SCALE)).astype(np.int64)
    ax0, ay0 = ax0[(None, slice(None)) + tail], ay0[(slice(None), None) + tail]
    a = img.astype(np.int64)
    rows = a[:, x0] * ax0 + a[:, x1] * (_COEF_SCALE - ax0)  # 11 fractional bits
    top, bottom = rows[y0] >> 4, rows[y1] >> 4
    out = (((ay0 * top) >> 16) + (((_COEF_SCALE - ay0) * bottom) >> 16) + 2) >> 2
    return np.clip(out, 0, 255).astype(np.uint8)


def resize_array(img: np.ndarray, oh: int, ow: int, interpolation: str) -> np.ndarray:
    """``img`` [H, W] or [H, W, C] resized to [oh, ow(, C)] with 'nearest' or 'bilinear' (uint8
    and float32 images through the host kernels where built: the same bytes)."""
    h, w = img.shape[:2]
    if interpolation == "nearest":
        rows = np.minimum(np.floor(np.arange(oh) * (1.0 / (oh / h))).astype(np.int64), h - 1)
        cols = np.minimum(np.floor(np.arange(ow) * (1.0 / (ow / w))).astype(np.int64), w - 1)
        fast = host_image.resize_nearest(img, rows, cols)
        return img[rows][:, cols] if fast is None else fast
    if img.dtype == np.uint8:
        fast = host_image.resize_bilinear(img, oh, ow)
        return _bilinear_uint8(img, oh, ow) if fast is None else fast
    return resample(img, _linear_taps(oh, h), _linear_taps(ow, w))


def _linear_taps(out_size: int, in_size: int) -> Tuple[np.ndarray, np.ndarray]:
    """`_taps` as [out, 2] indices and float32 weights (the first's 1 - the second's)."""
    first, second, frac = _taps(out_size, in_size)
    return np.stack([first, second], axis=1), np.stack([np.float32(1) - frac, frac], axis=1)


def resample(img: np.ndarray, rows: Tuple[np.ndarray, np.ndarray], columns: Tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """``img`` [H, W(, C)] resized by the taps (index [n_out, T], weight float32) of its rows and
    columns, the columns first (OpenCV's order): each output cell the sum over t of the taken
    cells times their weights, in float32 (an integer image rounded half to even and clipped, as
    OpenCV's saturate_cast). uint8 and float32 images run in the host kernel (the same bytes)."""
    fast = host_image.resize_taps(img, rows, columns)
    if fast is not None:
        return fast
    out = (img[:, :, None] if img.ndim == 2 else img).astype(np.float32)
    for axis, (index, weight) in ((1, columns), (0, rows)):
        shape = [1] * out.ndim
        shape[axis] = -1
        taken = out
        out = np.take(taken, index[:, 0], axis=axis) * weight[:, 0].reshape(shape)
        for t in range(1, index.shape[1]):
            out += np.take(taken, index[:, t], axis=axis) * weight[:, t].reshape(shape)
    if img.dtype.kind in "iu":
        info = np.iinfo(img.dtype)
        out = np.clip(np.rint(out), info.min, info.max)
    out = out.astype(img.dtype)
    return out[:, :, 0] if img.ndim == 2 else out
