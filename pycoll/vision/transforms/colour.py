"""paddle.vision.transforms.functional's colour adjustments: ``adjust_brightness``,
``adjust_contrast``, ``adjust_saturation``, ``adjust_hue`` and ``to_grayscale``, each on the
three kinds of image paddle takes, computed as paddle's backend for that kind does:

- PIL images: PIL itself (ImageEnhance, HSV conversion, ``convert('L')``), so the results are
  PIL's to the bit;
- NumPy arrays (HW / HWC, channels R, G, B): paddle's OpenCV path, with the OpenCV conversions
  done in NumPy (``_cv_colour``): lookup tables for brightness and contrast, BGR2HSV_FULL on the
  RGB data for hue (so the hue turns the way paddle's does), a float blend with the BGR2GRAY luma
  for saturation -- whose weight paddle draws from NumPy's global generator (uniform in
  [max(0, 1 - f), 1 + f]), so on arrays ``adjust_saturation`` is random, as in paddle;
- Tensors (CHW, or NCHW): paddle's tensor path, a blend ``clip(target + f * (img - target))``
  towards black, the mean grey or the grey image, hue turned in HSV; floating tensors hold values
  in [0, 1], integer ones in [0, 255] (paddle casts its grey weights to an integer tensor's dtype,
  which makes them 0; here they are applied in float32 and the result cast back).
"""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from pycoll.device import array_module
from pycoll.dtypes import is_floating
from pycoll.kernels import host_image
from pycoll.tensor import Tensor, wrap
from pycoll.vision.transforms._cv_colour import bgr_to_hsv_full, gray, hsv_to_bgr_full
from pycoll.vision.transforms._image import _check_image, _is_pil_image, _is_tensor_image

_GRAY_WEIGHTS = (0.2989, 0.587, 0.114)  # paddle's tensor path (not OpenCV's 0.299)


def _factor(value: Any, name: str, fn: str) -> float:
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{fn}: {name} must be a non-negative number, got {value!r}")
    return float(value)


def _tensor_channels(img: Tensor, fn: str) -> int:
    if img.ndim not in (3, 4) or img.shape[-3] not in (1, 3):
        raise ValueError(f"{fn}: a Tensor image must be [C, H, W] or [N, C, H, W] with 1 or 3 channels, got "
                         f"shape {img.shape}")
    return img.shape[-3]


def _working(a: Any) -> Any:
    """A Tensor image's array in the float dtype the blend runs in."""
    return a if is_floating(a.dtype) else a.astype(np.float32)


def _blend(img: Tensor, target: Any, factor: float) -> Tensor:
    """clip(target + factor * (img - target)) in img's range and dtype: paddle's _blend_images."""
    a = img._array
    xp = array_module(a)
    top = 1.0 if is_floating(a.dtype) else 255.0
    x = _working(a)
    out = xp.clip(target + x.dtype.type(factor) * (x - target), 0, top)
    return wrap(out.astype(a.dtype, copy=False))


def _tensor_gray(a: Any) -> Any:
    """[..., 1, H, W]: paddle's weighted channel sum of a [..., 3, H, W] array (float)."""
    x = _working(a)
    xp = array_module(x)
    weights = xp.asarray(_GRAY_WEIGHTS, dtype=x.dtype).reshape(3, 1, 1)
    return (x * weights).sum(axis=-3, keepdims=True)


def _lookup(img: Any, table: np.ndarray) -> np.ndarray:
    """``table[img]`` of an array image read as uint8 (paddle's cv2.LUT)."""
    arr = np.asarray(img).astype(np.uint8, copy=False)
    looked_up = host_image.lookup(arr, table)
    return table[arr] if looked_up is None else looked_up


def adjust_brightness(img: Any, brightness_factor: float) -> Any:
    """Brightness scaled by ``brightness_factor`` (0: black, 1: unchanged). Arrays: pixel values
    (as uint8) times the factor, clipped and truncated (paddle's lookup table)."""
    _check_image(img, "adjust_brightness")
    factor = _factor(brightness_factor, "brightness_factor", "adjust_brightness")
    if _is_pil_image(img):
        from PIL import ImageEnhance
        return ImageEnhance.Brightness(img).enhance(factor)
    if _is_tensor_image(img):
        _tensor_channels(img, "adjust_brightness")
        return _blend(img, 0.0, factor)
    return _lookup(img, (np.arange(256) * factor).clip(0, 255).astype(np.uint8))


def adjust_contrast(img: Any, contrast_factor: float) -> Any:
    """Contrast scaled by ``contrast_factor`` (0: flat grey, 1: unchanged). Arrays: values moved
    away from (factor > 1) or toward (< 1) 74, clipped (paddle's lookup table); Tensors: blended
    with the mean of the grey image."""
    _check_image(img, "adjust_contrast")
    factor = _factor(contrast_factor, "contrast_factor", "adjust_contrast")
    if _is_pil_image(img):
        from PIL import ImageEnhance
        return ImageEnhance.Contrast(img).enhance(factor)
    if _is_tensor_image(img):
        a = img._array
        grey = _working(a) if _tensor_channels(img, "adjust_contrast") == 1 else _tensor_gray(a)
        return _blend(img, grey.mean(axis=(-3, -2, -1), keepdims=True), factor)
    return _lookup(img, ((np.arange(256) - 74) * factor + 74).clip(0, 255).astype(np.uint8))


def _rgb_array(img: Any, fn: str) -> np.ndarray:
    """``img``, an [H, W, 3] (RGB) or [H, W, 4] (RGBA: OpenCV reads its first three) array."""
    if img.ndim != 3 or img.shape[2] not in (3, 4):
        raise ValueError(f"{fn}: an array image must be [H, W, 3] (RGB) or [H, W, 4] (RGBA), got shape {img.shape}")
    return img


def adjust_saturation(img: Any, saturation_factor: float) -> Any:
    """Colour saturation scaled by ``saturation_factor`` (0: grey, 1: unchanged). On arrays the
    blend weight is drawn by paddle's rule from NumPy's global generator (see the module's notes)."""
    _check_image(img, "adjust_saturation")
    factor = _factor(saturation_factor, "saturation_factor", "adjust_saturation")
    if _is_pil_image(img):
        from PIL import ImageEnhance
        return ImageEnhance.Color(img).enhance(factor)
    if _is_tensor_image(img):
        if _tensor_channels(img, "adjust_saturation") == 1:
            return img
        return _blend(img, _tensor_gray(img._array), factor)
    _rgb_array(img, "adjust_saturation")
    alpha = np.random.uniform(max(0.0, 1 - factor), 1 + factor)
    blended = host_image.blend_gray(img, np.float32(alpha), np.float32(1 - alpha))
    if blended is not None:
        return blended
    arr = img.astype(np.float32)
    mixed = arr * np.float32(alpha) + gray(arr[..., :3], blue_first=True)[..., None] * np.float32(1 - alpha)
    return mixed.clip(0, 255).astype(img.dtype)


def _rgb_to_hsv(xp: Any, x: Any) -> Any:
    """paddle's float HSV of [..., 3, H, W] RGB in [0, 1]: hue in [0, 1)."""
    high, low = x.max(axis=-3), x.min(axis=-3)
    flat = high == low
    delta = high - low
    s = delta / xp.where(flat, 1, high)
    r, g, b = x[..., 0, :, :], x[..., 1, :, :], x[..., 2, :, :]
    span = xp.where(flat, 1, delta)
    rc, gc, bc = (high - r) / span, (high - g) / span, (high - b) / span
    h = xp.where(high == r, bc - gc, xp.where(high == g, rc - bc + 2, gc - rc + 4))
    h = h / 6 + 1
    return h - xp.trunc(h), s, high


def _hsv_to_rgb(xp: Any, h: Any, s: Any, v: Any) -> Any:
    scaled = h * 6
    sector = xp.floor(scaled)
    f = scaled - sector
    sector = sector.astype(np.int32) % 6
    p = xp.clip(v * (1 - s), 0, 1)
    q = xp.clip(v * (1 - s * f), 0, 1)
    t = xp.clip(v * (1 - s * (1 - f)), 0, 1)
    picks = {"r": (v, q, p, p, t, v), "g": (t, v, v, q, p, p), "b": (p, p, t, v, v, q)}
    channels = [xp.choose(sector, picks[c]) for c in "rgb"]
    return xp.stack(channels, axis=-3)


def adjust_hue(img: Any, hue_factor: float) -> Any:
    """Hue turned by ``hue_factor`` (in [-0.5, 0.5]) of a full turn; grey images are returned as
    they are. Arrays are turned through OpenCV's HSV_FULL on uint8 values, the hue shifted by
    int(hue_factor * 255) modulo 256, as paddle's OpenCV path does."""
    _check_image(img, "adjust_hue")
    if not isinstance(hue_factor, numbers.Real) or not -0.5 <= hue_factor <= 0.5:
        raise ValueError(f"adjust_hue: hue_factor must be in [-0.5, 0.5], got {hue_factor!r}")
    shift = int(hue_factor * 255)
    if _is_pil_image(img):
        from PIL import Image
        if img.mode in ("L", "1", "I", "F"):
            return img
        h, s, v = img.convert("HSV").split()
        turned = ((np.asarray(h).astype(np.int16) + shift) % 256).astype(np.uint8)
        return Image.merge("HSV", (Image.fromarray(turned, "L"), s, v)).convert(img.mode)
    if _is_tensor_image(img):
        if _tensor_channels(img, "adjust_hue") == 1:
            return img
        a = img._array
        xp = array_module(a)
        x = a.astype(np.float32) / np.float32(255) if a.dtype == np.uint8 else a
        h, s, v = _rgb_to_hsv(xp, x)
        h = h + x.dtype.type(hue_factor)
        out = _hsv_to_rgb(xp, h - xp.floor(h), s, v)
        return wrap((out * np.float32(255)).astype(a.dtype) if a.dtype == np.uint8 else out)
    arr = _rgb_array(img, "adjust_hue")
    turned = hsv_to_bgr_full(bgr_to_hsv_full(arr[..., :3].astype(np.uint8)), hue_shift=shift).astype(arr.dtype)
    # RGBA: the alpha channel kept (paddle's OpenCV conversion drops it, giving [H, W, 3])
    return turned if arr.shape[2] == 3 else np.concatenate([turned, arr[..., 3:]], axis=2)


def to_grayscale(img: Any, num_output_channels: int = 1) -> Any:
    """The grey image, with 1 channel or (``num_output_channels=3``) 3 equal ones. Arrays:
    OpenCV's RGB2GRAY (HxWx1 or HxWx3); Tensors: paddle's weights 0.2989, 0.587, 0.114."""
    _check_image(img, "to_grayscale")
    if num_output_channels not in (1, 3):
        raise ValueError(f"to_grayscale: num_output_channels must be 1 or 3, got {num_output_channels!r}")
    if _is_pil_image(img):
        from PIL import Image
        grey = img.convert("L")
        if num_output_channels == 1:
            return grey
        return Image.fromarray(np.dstack([np.asarray(grey)] * 3), "RGB")
    if _is_tensor_image(img):
        if img.ndim not in (3, 4) or img.shape[-3] != 3:
            raise ValueError(f"to_grayscale: a Tensor image must be [3, H, W] or [N, 3, H, W], got shape {img.shape}")
        a = img._array
        xp = array_module(a)
        grey = _tensor_gray(a).astype(a.dtype, copy=False)
        shape = list(grey.shape)
        shape[-3] = num_output_channels
        return wrap(xp.ascontiguousarray(xp.broadcast_to(grey, shape)))
    rgb = _rgb_array(img, "to_grayscale")[..., :3]
    if num_output_channels == 1:
        return gray(rgb)[..., None]  # a new array: no copy needed
    return gray(rgb, channels=3)
