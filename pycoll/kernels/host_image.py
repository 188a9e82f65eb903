"""Single-pass host kernels for uint8 images in paddle.vision.transforms' array path, where paddle
calls OpenCV: bilinear resize, the resize by taps (the other modes; float32 images too),
horizontal flip, lookup tables, RGB to grey, the saturation blend, the HSV_FULL conversions and
cv2's affine and perspective warps; and paddle.vision.ops.nms's greedy loop (``pycoll._C``, C++,
the GIL released; see csrc/host_image.h).

Each function returns None where the kernels do not serve its image: it is not a numpy uint8 array
(the flip takes any dtype), its shape is not one the kernel takes, or this build of ``pycoll._C``
lacks the kernels. The caller then runs its NumPy formula, which gives the same bytes.
Non-contiguous images are copied to contiguous ones first; results are new C-contiguous arrays.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Optional, Tuple

import numpy as np

from pycoll.kernels.compiled import having


def _kernels() -> Optional[ModuleType]:
    """pycoll._C if it is built with these kernels, else None."""
    return having("boxes_greedy_nms")  # the newest of them


def _served(img: Any, rgb: bool = False) -> Optional[ModuleType]:
    """The kernels, if ``img`` is a numpy.ndarray of uint8 (not a subclass) with pixels in it;
    ``rgb``: with 3 channels on its last axis."""
    if type(img) is not np.ndarray or img.dtype != np.uint8 or img.size == 0:
        return None
    if rgb and (img.ndim < 2 or img.shape[-1] != 3):
        return None
    return _kernels()


def resize_bilinear(img: Any, height: int, width: int) -> Optional[np.ndarray]:
    """An [H, W] or [H, W, C] image resized to [height, width(, C)] as OpenCV's INTER_LINEAR."""
    kernels = _served(img)
    if kernels is None or img.ndim not in (2, 3):
        return None
    return kernels.image_resize_bilinear(np.ascontiguousarray(img), height, width)


def resize_taps(img: Any, rows: Tuple[np.ndarray, np.ndarray], columns: Tuple[np.ndarray, np.ndarray]
                ) -> Optional[np.ndarray]:
    """An [H, W] or [H, W, C] uint8 or float32 image resized by the taps (index [n_out, T]
    int64, weight float32) of its rows and columns, the columns first: sums in float32, on uint8
    rounded half to even and clipped (``_resize.resample``'s loop)."""
    if type(img) is not np.ndarray or img.dtype not in (np.uint8, np.float32) or img.size == 0 \
            or img.ndim not in (2, 3):
        return None
    kernels = _kernels()
    if kernels is None or not hasattr(kernels, "image_resize_taps"):
        return None
    arrays = [np.ascontiguousarray(a, dtype) for a, dtype in
              ((rows[0], np.int64), (rows[1], np.float32), (columns[0], np.int64), (columns[1], np.float32))]
    return kernels.image_resize_taps(np.ascontiguousarray(img), *arrays)


def resize_nearest(img: Any, rows: np.ndarray, cols: np.ndarray) -> Optional[np.ndarray]:
    """``img[rows][:, cols]`` as a new C-contiguous array, for a numpy array of 2 or more axes
    (any dtype: the pixels' bytes move)."""
    if type(img) is not np.ndarray or img.ndim < 2 or img.size == 0 or img.dtype.hasobject:
        return None
    kernels = _kernels()
    if kernels is None or not hasattr(kernels, "image_resize_nearest"):
        return None
    return kernels.image_resize_nearest(np.ascontiguousarray(img), np.ascontiguousarray(rows, np.int64),
                                        np.ascontiguousarray(cols, np.int64))


def flip_width(img: Any) -> Optional[np.ndarray]:
    """``img[:, ::-1]`` as a new C-contiguous array, for a numpy array of 2 or more axes."""
    if type(img) is not np.ndarray or img.ndim < 2 or img.size == 0 or img.dtype.hasobject:
        return None
    kernels = _kernels()
    return None if kernels is None else kernels.image_flip_width(np.ascontiguousarray(img))


def lookup(img: Any, table: np.ndarray) -> Optional[np.ndarray]:
    """``table[img]`` for a uint8 image and a uint8 table of 256 entries."""
    kernels = _served(img)
    if kernels is None or table.dtype != np.uint8 or table.shape != (256,):
        return None
    return kernels.image_lookup(np.ascontiguousarray(img), np.ascontiguousarray(table))


def gray(img: Any, blue_first: bool = False, channels: int = 1) -> Optional[np.ndarray]:
    """The [...] luma of a [..., 3] image as OpenCV's RGB2GRAY (BGR2GRAY with ``blue_first``);
    ``channels=3``: [..., 3] of it, as GRAY2RGB after."""
    kernels = _served(img, rgb=True)
    if kernels is None:
        return None
    return kernels.image_gray(np.ascontiguousarray(img), bool(blue_first), channels)


def blend_gray(img: Any, alpha: float, beta: float) -> Optional[np.ndarray]:
    """uint8(clip(img * alpha + luma * beta, 0, 255)) in float32, the luma that of each [..., 3]
    pixel read as B, G, R (paddle's array adjust_saturation)."""
    kernels = _served(img, rgb=True)
    return None if kernels is None else kernels.image_blend_gray(np.ascontiguousarray(img), alpha, beta)


def bgr_to_hsv_full(img: Any) -> Optional[np.ndarray]:
    """OpenCV's BGR2HSV_FULL of a [..., 3] image (hue over 0..255)."""
    kernels = _served(img, rgb=True)
    return None if kernels is None else kernels.image_bgr_to_hsv_full(np.ascontiguousarray(img))


def hsv_to_bgr_full(hsv: Any, hue_shift: int = 0) -> Optional[np.ndarray]:
    """OpenCV's HSV2BGR_FULL of a [..., 3] image, ``hue_shift`` added to the hue first (mod 256)."""
    kernels = _served(hsv, rgb=True)
    return None if kernels is None else kernels.image_hsv_to_bgr_full(np.ascontiguousarray(hsv), int(hue_shift))


_SAMPLES = {"nearest": 0, "bilinear": 1, "bicubic": 2}


def warp(img: Any, inverse: np.ndarray, size: Tuple[int, int], interpolation: str, border: np.ndarray,
         cubic_weights: Optional[np.ndarray] = None) -> Optional[np.ndarray]:
    """An [H, W(, C)] image warped onto ``size`` (width, height) as cv2.warpAffine (``inverse``:
    the inverse 2x3 map) or cv2.warpPerspective (the inverse 3x3 map) with a constant ``border``
    (uint8, one per channel) and 'nearest', 'bilinear' or 'bicubic' (whose [1024, 4, 4]
    ``cubic_weights`` sum to 2**15) interpolation."""
    kernels = _served(img)
    if kernels is None or img.ndim not in (2, 3):
        return None
    weights = np.zeros(0, np.int32) if cubic_weights is None else np.ascontiguousarray(cubic_weights, np.int32)
    width, height = size
    return kernels.image_warp(np.ascontiguousarray(img), np.ascontiguousarray(inverse, np.float64).reshape(-1),
                              int(height), int(width), np.ascontiguousarray(np.asarray(border, np.uint8).reshape(-1)),
                              _SAMPLES[interpolation], weights)


def greedy_nms(boxes: np.ndarray, threshold: float, offset: float, eta: float) -> Optional[np.ndarray]:
    """The positions of ``boxes`` (a float64 host array [k, 4], best first) that paddle's greedy
    NMS keeps (``pycoll.vision.ops.nms.greedy_nms``'s loop, compiled)."""
    kernels = _kernels()
    if kernels is None:
        return None
    return kernels.boxes_greedy_nms(np.ascontiguousarray(boxes, dtype=np.float64), float(threshold), float(offset),
                                    float(eta))
