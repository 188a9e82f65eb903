"""The OpenCV warps paddle's array path calls, in NumPy: ``cv2.getRotationMatrix2D``,
``cv2.getPerspectiveTransform``, ``cv2.warpAffine`` and ``cv2.warpPerspective`` with a constant
border, 'nearest', 'bilinear' or 'bicubic'.

OpenCV inverts the forward matrix in double precision (the 3x3 one by cofactors), then finds
each output pixel's source position in fixed point: the affine warp adds per-column and per-row
offsets rounded to 1/1024 of a pixel, the perspective warp divides in double and rounds to 1/32
(for 'nearest': to a whole pixel), its columns taken in blocks whose start is added first.
'bilinear' then weighs the four neighbours by those 1/32 fractions, 'bicubic' the sixteen by
OpenCV's tabulated Keys kernel (uint8 images: integer weights summing to 2**15, rounded), and a
neighbour outside the image reads the fill value. Written out here step for step, the results
equal cv2 4.14's on uint8 images pixel for pixel (float32 images: within a float rounding); cv2
5.0 computes the positions otherwise and differs by up to a few levels (bilinear) or one pixel
(nearest) on a fraction of them. uint8 images are warped in pycoll._C where it is built
(csrc/host_image.cpp, the same positions and bytes as the formulas here)."""
from __future__ import annotations

import functools
import math
from typing import Any, Optional, Sequence, Tuple

import numpy as np

from pycoll.kernels import host_image

_TAB_BITS = 5                     # INTER_BITS: bilinear fractions in 1/32 pixel
_TAB_SIZE = 1 << _TAB_BITS
_AB_BITS = 10                     # the affine warp's fixed point: 1/1024 pixel
_COEF_BITS = 15                   # INTER_REMAP_COEF_BITS: integer bilinear weights sum to 2**15
_BLOCK = 32                       # the perspective warp's block edge (BLOCK_SZ)
_INT_MIN, _INT_MAX = -2.0 ** 31, 2.0 ** 31 - 1


def rotation_matrix(center: Sequence[float], angle: float, scale: float) -> np.ndarray:
    """The 2x3 map rotating by ``angle`` degrees (counter-clockwise on screen) and scaling about
    ``center`` (x, y; held as float32, as OpenCV's Point2f)."""
    cx, cy = (float(np.float32(c)) for c in center)
    rad = angle * (math.pi / 180)
    alpha, beta = math.cos(rad) * scale, math.sin(rad) * scale
    return np.array([[alpha, beta, (1 - alpha) * cx - beta * cy],
                     [-beta, alpha, beta * cx + (1 - alpha) * cy]])


def _lu_solve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x = b by Gaussian elimination with partial pivoting, in OpenCV's order of operations;
    NaNs where a is singular (degenerate points: OpenCV's map then sends every pixel outside the
    image, which gets the fill, as paddle's perspective gives it)."""
    a, b = a.copy(), b.copy()
    n = len(b)
    for i in range(n):
        k = i
        for j in range(i + 1, n):
            if abs(a[j, i]) > abs(a[k, i]):
                k = j
        if a[k, i] == 0:
            return np.full_like(b, np.nan)
        a[[i, k], i:], b[[i, k]] = a[[k, i], i:], b[[k, i]]
        d = -1.0 / a[i, i]
        for j in range(i + 1, n):
            alpha = a[j, i] * d
            a[j, i + 1:] += alpha * a[i, i + 1:]
            b[j] += alpha * b[i]
    for i in range(n - 1, -1, -1):
        s = b[i]
        for k in range(i + 1, n):
            s -= a[i, k] * b[k]
        b[i] = s / a[i, i]
    return b


def perspective_transform(src: Sequence[Sequence[float]], dst: Sequence[Sequence[float]]) -> np.ndarray:
    """The 3x3 homography taking the four ``src`` points (x, y; float32) to the four ``dst`` points."""
    s = np.asarray(src, np.float32).astype(np.float64)
    d = np.asarray(dst, np.float32).astype(np.float64)
    a, b = np.zeros((8, 8)), np.concatenate([d[:, 0], d[:, 1]])
    a[:4, 0:2] = a[4:, 3:5] = s
    a[:4, 2] = a[4:, 5] = 1
    a[:4, 6:8] = -s * d[:, :1]
    a[4:, 6:8] = -s * d[:, 1:]
    return np.append(_lu_solve(a, b), 1.0).reshape(3, 3)


def _invert_affine(m: np.ndarray) -> Tuple[float, ...]:
    m0, m1, m2, m3, m4, m5 = (float(v) for v in np.asarray(m, np.float64).reshape(6))
    d = m0 * m4 - m1 * m3
    d = 1.0 / d if d != 0 else 0.0
    a11, a12, a21, a22 = m4 * d, -m1 * d, -m3 * d, m0 * d
    return a11, a12, -a11 * m2 - a12 * m5, a21, a22, -a21 * m2 - a22 * m5


def _invert3(m: np.ndarray) -> np.ndarray:
    m = np.asarray(m, np.float64)
    cof = np.array([[m[1, 1] * m[2, 2] - m[1, 2] * m[2, 1], m[0, 2] * m[2, 1] - m[0, 1] * m[2, 2],
                     m[0, 1] * m[1, 2] - m[0, 2] * m[1, 1]],
                    [m[1, 2] * m[2, 0] - m[1, 0] * m[2, 2], m[0, 0] * m[2, 2] - m[0, 2] * m[2, 0],
                     m[0, 2] * m[1, 0] - m[0, 0] * m[1, 2]],
                    [m[1, 0] * m[2, 1] - m[1, 1] * m[2, 0], m[0, 1] * m[2, 0] - m[0, 0] * m[2, 1],
                     m[0, 0] * m[1, 1] - m[0, 1] * m[1, 0]]])
    det = m[0, 0] * cof[0, 0] + m[0, 1] * cof[1, 0] + m[0, 2] * cof[2, 0]
    return cof * (1.0 / det) if det != 0 else np.zeros((3, 3))


def _border(img: np.ndarray, fill: object) -> np.ndarray:
    """The fill value per channel in the image's dtype: a number for every channel (where cv2's
    borderValue would fill the first channel alone), a sequence per channel (missing ones 0)."""
    channels = img.shape[2] if img.ndim == 3 else 1
    given = np.asarray(fill, np.float64).reshape(-1)
    values = np.zeros(channels)
    if given.size == 1 and np.ndim(fill) == 0:
        values[:] = given[0]
    else:
        values[:min(channels, given.size)] = given[:channels]
    if img.dtype.kind in "ui":
        info = np.iinfo(img.dtype)
        values = np.clip(np.rint(values), info.min, info.max)
    return values.astype(img.dtype) if img.ndim == 3 else values[:1].astype(img.dtype)[0]


def _pick(img: np.ndarray, ix: np.ndarray, iy: np.ndarray, border: np.ndarray) -> np.ndarray:
    """img at (iy, ix), the border value where that lies outside the image."""
    h, w = img.shape[:2]
    inside = (ix >= 0) & (ix < w) & (iy >= 0) & (iy < h)
    out = img[np.clip(iy, 0, h - 1), np.clip(ix, 0, w - 1)]
    out[~inside] = border
    return out


def _bilinear(img: np.ndarray, fx: np.ndarray, fy: np.ndarray, border: np.ndarray) -> np.ndarray:
    """Bilinear samples at fixed-point positions fx, fy (in 1/32 pixel)."""
    ix, iy, ax, ay = fx >> _TAB_BITS, fy >> _TAB_BITS, fx & (_TAB_SIZE - 1), fy & (_TAB_SIZE - 1)
    tail = (...,) + (None,) * (img.ndim - 2)
    ax, ay = ax[tail], ay[tail]
    taps = [_pick(img, ix + dx, iy + dy, border) for dy in (0, 1) for dx in (0, 1)]
    if img.dtype.kind in "ui":
        bx, by = _TAB_SIZE - ax, _TAB_SIZE - ay  # weights in 1/1024, times 32 to the 2**15 scale
        acc = sum(t.astype(np.int64) * w for t, w in zip(taps, (by * bx, by * ax, ay * bx, ay * ax)))
        info = np.iinfo(img.dtype)
        out = np.clip((acc * 32 + (1 << (_COEF_BITS - 1))) >> _COEF_BITS, info.min, info.max).astype(img.dtype)
    else:
        step = np.float32(1.0 / _TAB_SIZE)
        wx1, wy1 = ax.astype(np.float32) * step, ay.astype(np.float32) * step
        wx0, wy0 = np.float32(1) - wx1, np.float32(1) - wy1
        p = [t.astype(np.float32) for t in taps]
        out = ((p[0] * (wy0 * wx0) + p[1] * (wy0 * wx1)) + (p[2] * (wy1 * wx0) + p[3] * (wy1 * wx1))).astype(img.dtype)
    h, w = img.shape[:2]
    out[(ix + 1 < 0) | (ix >= w) | (iy + 1 < 0) | (iy >= h)] = border
    return out


def _cubic_taps() -> np.ndarray:
    """[32, 4]: the float32 Keys kernel (A = -0.75) at each 1/32 fraction, as OpenCV computes it."""
    f32 = np.float32
    x = np.arange(_TAB_SIZE, dtype=f32) * f32(1.0 / _TAB_SIZE)
    a, one = f32(-0.75), f32(1)
    c0 = ((a * (x + one) - f32(5) * a) * (x + one) + f32(8) * a) * (x + one) - f32(4) * a
    c1 = ((a + f32(2)) * x - (a + f32(3))) * x * x + one
    c2 = ((a + f32(2)) * (one - x) - (a + f32(3))) * (one - x) * (one - x) + one
    return np.stack([c0, c1, c2, one - c0 - c1 - c2], axis=1)


@functools.lru_cache(maxsize=2)
def _cubic_weights(integer: bool) -> np.ndarray:
    """OpenCV's bicubic tables: [32 * 32, 4, 4] weights (rows y, columns x), one per pair of 1/32
    fractions; float32 products, or for integer images those rounded to 2**15 and corrected, on
    the largest or smallest of the central taps, to sum to 2**15 exactly."""
    taps = _cubic_taps()
    table = (taps[:, None, :, None] * taps[None, :, None, :]).reshape(_TAB_SIZE * _TAB_SIZE, 4, 4)
    if not integer:
        return table
    table = np.rint(table * np.float32(1 << _COEF_BITS)).astype(np.int64)
    for t in table:
        diff = int(t.sum()) - (1 << _COEF_BITS)
        if diff:
            low = high = (2, 2)
            for k1 in (2, 3):
                for k2 in (2, 3):
                    if t[k1, k2] < t[low]:
                        low = (k1, k2)
                    elif t[k1, k2] > t[high]:
                        high = (k1, k2)
            t[high if diff < 0 else low] -= diff
    return table


def _bicubic(img: np.ndarray, fx: np.ndarray, fy: np.ndarray, border: np.ndarray) -> np.ndarray:
    """Bicubic samples (4 x 4 neighbours, OpenCV's weights) at fixed-point positions in 1/32 pixel."""
    ix, iy = (fx >> _TAB_BITS) - 1, (fy >> _TAB_BITS) - 1
    integer = img.dtype.kind in "ui"
    weights = _cubic_weights(integer)[(fy & (_TAB_SIZE - 1)) * _TAB_SIZE + (fx & (_TAB_SIZE - 1))]
    tail = (...,) + (None,) * (img.ndim - 2)
    work = np.int64 if integer else np.float32
    acc = sum(_pick(img, ix + dx, iy + dy, border).astype(work) * weights[..., dy, dx][tail]
              for dy in range(4) for dx in range(4))
    if integer:
        info = np.iinfo(img.dtype)
        out = np.clip((acc + (1 << (_COEF_BITS - 1))) >> _COEF_BITS, info.min, info.max).astype(img.dtype)
    else:
        out = acc.astype(img.dtype)
    h, w = img.shape[:2]
    out[(ix + 4 <= 0) | (ix >= w) | (iy + 4 <= 0) | (iy >= h)] = border
    return out


def _compiled(img: np.ndarray, inverse: Any, size: Tuple[int, int], interpolation: str,
              border: np.ndarray) -> Optional[np.ndarray]:
    """The warp by the compiled kernel (uint8 images, where it is built), else None."""
    if img.dtype != np.uint8:
        return None
    weights = _cubic_weights(True) if interpolation == "bicubic" else None
    return host_image.warp(img, np.asarray(inverse, np.float64), size, interpolation, border, weights)


def _sample(img: np.ndarray, fx: np.ndarray, fy: np.ndarray, border: np.ndarray, interpolation: str) -> np.ndarray:
    """``img`` at positions fx, fy: whole pixels for 'nearest', 1/32 pixels for the others."""
    if interpolation == "nearest":
        return _pick(img, fx, fy, border)
    return (_bicubic if interpolation == "bicubic" else _bilinear)(img, fx, fy, border)


def warp_affine(img: np.ndarray, matrix: np.ndarray, size: Tuple[int, int], interpolation: str,
                fill: object) -> np.ndarray:
    """``img`` [H, W(, C)] warped by the forward 2x3 ``matrix`` onto a (width, height) ``size``."""
    inverse = _invert_affine(matrix)
    border = _border(img, fill)
    fast = _compiled(img, inverse, size, interpolation, border)
    if fast is not None:
        return fast
    m0, m1, m2, m3, m4, m5 = inverse
    width, height = size
    scale = 1 << _AB_BITS
    x, y = np.arange(width, dtype=np.float64), np.arange(height, dtype=np.float64)
    nearest = interpolation == "nearest"
    half = scale // 2 if nearest else scale // _TAB_SIZE // 2
    col_x, col_y = np.rint(m0 * x * scale).astype(np.int64), np.rint(m3 * x * scale).astype(np.int64)
    row_x = np.rint((m1 * y + m2) * scale).astype(np.int64) + half
    row_y = np.rint((m4 * y + m5) * scale).astype(np.int64) + half
    fx, fy = row_x[:, None] + col_x[None, :], row_y[:, None] + col_y[None, :]
    shift = _AB_BITS if nearest else _AB_BITS - _TAB_BITS
    return _sample(img, fx >> shift, fy >> shift, border, interpolation)


def warp_perspective(img: np.ndarray, matrix: np.ndarray, size: Tuple[int, int], interpolation: str,
                     fill: object) -> np.ndarray:
    """``img`` [H, W(, C)] warped by the forward 3x3 ``matrix`` onto a (width, height) ``size``."""
    m = _invert3(matrix).reshape(9)
    border = _border(img, fill)
    fast = _compiled(img, m, size, interpolation, border)
    if fast is not None:
        return fast
    width, height = size
    block_h = min(_BLOCK // 2, height)
    block_w = min(_BLOCK * _BLOCK // block_h, width)
    cols = np.arange(width)
    start = ((cols // block_w) * block_w).astype(np.float64)[None, :]
    offset = (cols % block_w).astype(np.float64)[None, :]
    y = np.arange(height, dtype=np.float64)[:, None]
    x0 = (m[0] * start + m[1] * y + m[2]) + m[0] * offset
    y0 = (m[3] * start + m[4] * y + m[5]) + m[3] * offset
    w0 = (m[6] * start + m[7] * y + m[8]) + m[6] * offset
    nearest = interpolation == "nearest"
    numerator = 1.0 if nearest else float(_TAB_SIZE)
    safe = np.where(w0 != 0, w0, 1.0)
    w0 = np.where(w0 != 0, numerator / safe, 0.0)
    # NaN (a degenerate map): outside the image
    fx = np.rint(np.clip(np.nan_to_num(x0 * w0, nan=_INT_MIN), _INT_MIN, _INT_MAX)).astype(np.int64)
    fy = np.rint(np.clip(np.nan_to_num(y0 * w0, nan=_INT_MIN), _INT_MIN, _INT_MAX)).astype(np.int64)
    return _sample(img, fx, fy, border, interpolation)
