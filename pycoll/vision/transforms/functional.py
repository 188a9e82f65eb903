"""paddle.vision.transforms.functional on images held as NumPy arrays ([H, W] or [H, W, C], the
layout paddle's OpenCV path uses), PIL images (when Pillow is installed; never required) and
pycoll Tensors ([C, H, W]). Each function returns the kind of image it was given, except
``to_tensor`` (a Tensor) and ``normalize`` on a PIL image (an array), as paddle's do."""
from __future__ import annotations

import functools
import numbers
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

import pycoll
from pycoll.kernels import host_image
from pycoll.nn._resample_functional import _bicubic_matrix
from pycoll.tensor import Tensor
from pycoll.vision.transforms._image import _check_image, _is_pil_image, _is_tensor_image, _to_pil, get_image_size
from pycoll.vision.transforms._resize import resample, resize_array
from pycoll.vision.transforms.colour import (adjust_brightness, adjust_contrast, adjust_hue,
                                            adjust_saturation, to_grayscale)
from pycoll.vision.transforms.geometry import affine, perspective, rotate

__all__ = ["adjust_brightness", "adjust_contrast", "adjust_hue", "adjust_saturation", "affine", "center_crop", "crop",
           "erase", "get_image_size", "hflip", "normalize", "pad", "perspective", "resize", "rotate", "to_grayscale",
           "to_tensor", "vflip"]

_PAD_MODES = ("constant", "edge", "reflect", "symmetric")  # numpy's names: reflect leaves the edge out
_INTERPOLATIONS = ("nearest", "bilinear")  # an array's own resampling (OpenCV's, as paddle's numpy path)
_INTERPOLATED = ("bicubic", "area")  # an array's and a Tensor's through nn.functional.interpolate


def to_tensor(pic: Any, data_format: str = "CHW") -> Tensor:
    """An image as a Tensor in ``data_format`` ('CHW' or 'HWC'): uint8 values become float32 in
    [0, 1] (divided by 255), other dtypes are kept; a 2-D array gets a channel axis."""
    _check_image(pic, "to_tensor")
    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"to_tensor: data_format must be 'CHW' or 'HWC', got {data_format!r}")
    if _is_tensor_image(pic):
        return pic if data_format == "CHW" else pic.transpose((1, 2, 0))
    if _is_pil_image(pic):
        mode = pic.mode
        arr = np.asarray(pic, {"I": np.int32, "I;16": np.int32, "F": np.float32}.get(mode))
        if mode == "1":
            arr = 255 * arr.astype(np.uint8)
        channels = 3 if mode == "YCbCr" else 1 if mode == "I;16" else len(mode)
        arr = arr.reshape(pic.size[1], pic.size[0], channels)
    else:
        arr = pic[:, :, None] if pic.ndim == 2 else pic
    if data_format == "CHW":
        arr = arr.transpose(2, 0, 1)
    if arr.dtype == np.uint8:
        arr = arr.astype(np.float32) / np.float32(255.0)
    return pycoll.to_tensor(np.ascontiguousarray(arr))


def _target_size(size: Union[int, Sequence[int]], w: int, h: int) -> Optional[Tuple[int, int]]:
    """(height, width) paddle resizes to: an int is the shorter side's length, the other side
    scaled and truncated; None when the shorter side already has that length."""
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        if size <= 0 or min(w, h) <= 0:
            raise ValueError(f"resize: size must be > 0 (and the image not empty), got size={size!r} for a "
                             f"{w}x{h} image")
        if (w <= h and w == size) or (h <= w and h == size):
            return None
        return (int(size * h / w), size) if w < h else (size, int(size * w / h))
    if isinstance(size, (list, tuple)) and len(size) == 2:
        if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) and v > 0 for v in size):
            raise ValueError(f"resize: size must be a (height, width) pair of ints > 0, got {size!r}")
        return int(size[0]), int(size[1])
    raise TypeError(f"resize: size must be an int or a (height, width) pair, got {size!r}")


def resize(img: Any, size: Union[int, Sequence[int]], interpolation: str = "bilinear") -> Any:
    """``img`` resized to ``size``: an int sets the shorter side (aspect kept), a pair is
    (height, width). 'nearest', 'bilinear', 'bicubic' or 'area' (arrays and Tensors; on Tensors the
    last two through ``nn.functional.interpolate``), 'lanczos' on arrays; more modes on PIL images
    (PIL's own resampling). On an array every mode gives OpenCV's values (paddle's numpy path;
    within 1 on uint8, where OpenCV computes in fixed point)."""
    _check_image(img, "resize")
    w, h = get_image_size(img)
    target = _target_size(size, w, h)
    if _is_pil_image(img):
        from PIL import Image
        modes = {"nearest": Image.NEAREST, "bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC,
                 "box": Image.BOX, "lanczos": Image.LANCZOS, "hamming": Image.HAMMING}
        if interpolation not in modes:
            raise ValueError(f"resize: interpolation must be one of {list(modes)} for a PIL image, "
                             f"got {interpolation!r}")
        return img if target is None else img.resize(target[::-1], modes[interpolation])
    array_only = ("lanczos",) if not _is_tensor_image(img) else ()
    if interpolation not in _INTERPOLATIONS + _INTERPOLATED + array_only:
        raise ValueError(f"resize: interpolation must be one of {list(_INTERPOLATIONS + _INTERPOLATED + array_only)}, "
                         f"got {interpolation!r}")
    if target is None:
        return img
    if _is_tensor_image(img):
        return _interpolated(img, target, interpolation)
    if interpolation in _INTERPOLATED + ("lanczos",):
        return _resampled_array(img, target, interpolation)
    return resize_array(img, target[0], target[1], interpolation)


def _resampled_array(img: np.ndarray, target: Tuple[int, int], interpolation: str) -> np.ndarray:
    """An HW / HWC array resized by 'bicubic', 'area' or 'lanczos' as OpenCV computes them (float
    weights: within 1 of OpenCV's fixed point on uint8), each axis through a map of a few taps a
    row (``_resize.resample``)."""
    sizes = list(zip(img.shape[:2], target))
    if interpolation == "area" and img.dtype.kind in "iu" and all(n % m == 0 for n, m in sizes):
        return _area_blocks(img, target)
    if interpolation == "area" and any(m > n for n, m in sizes):
        interpolation = "area_enlarging"  # OpenCV's other 'area', on both axes
    return resample(img, _axis_taps(interpolation, *sizes[0]), _axis_taps(interpolation, *sizes[1]))


def _area_enlarging_matrix(n_in: int, n_out: int) -> np.ndarray:
    """OpenCV's 'area' map of an axis where the image is enlarged along either: a linear blend of
    the two cells from floor(k * n_in / n_out), the second weighed by the part of output cell k
    past the first's end (in float32, as OpenCV computes it; edges repeated)."""
    k = np.arange(n_out)
    first = np.floor(k * (n_in / n_out)).astype(np.int64)
    part = ((k + 1) - (first + 1) * (n_out / n_in)).astype(np.float32)
    part = np.where(part <= 0, np.float32(0), part - np.floor(part)).astype(np.float64)
    m = np.zeros((n_out, n_in), np.float64)
    np.add.at(m, (k, np.minimum(first, n_in - 1)), 1 - part)
    np.add.at(m, (k, np.minimum(first + 1, n_in - 1)), part)
    return m


def _area_matrix(n_in: int, n_out: int) -> np.ndarray:
    """OpenCV's 'area' map of one axis shrunk from ``n_in`` to ``n_out`` cells: each output cell
    the mean of the input it covers, a cut input cell weighed by the part it lies in."""
    edges = np.arange(n_out + 1) * (n_in / n_out)
    lo, hi = edges[:-1, None], edges[1:, None]
    cells = np.arange(n_in)[None, :]
    return np.clip(np.minimum(hi, cells + 1) - np.maximum(lo, cells), 0, None) * (n_out / n_in)


def _lanczos4_matrix(n_in: int, n_out: int) -> np.ndarray:
    """OpenCV's Lanczos-4 map of one axis: the 8 cells around each output cell's source point
    (its centre mapped back, in float32 as OpenCV computes it; edges repeated), weighed by
    sinc(t) sinc(t / 4) of their distance t and normalised to sum 1 (no widening when shrinking)."""
    k = np.arange(n_out)
    src = ((k + 0.5) * (n_in / n_out) - 0.5).astype(np.float32).astype(np.float64)
    base = np.floor(src)
    t = (src - base)[:, None] + 3 - np.arange(8)[None, :]
    with np.errstate(invalid="ignore", divide="ignore"):
        w = np.where(np.abs(t) < 1e-6, 1.0, np.sin(np.pi * t) * np.sin(np.pi * t / 4) / (np.pi ** 2 * t ** 2 / 4))
    w /= w.sum(axis=1, keepdims=True)
    m = np.zeros((n_out, n_in), np.float64)
    np.add.at(m, (k[:, None], np.clip(base.astype(np.int64)[:, None] - 3 + np.arange(8), 0, n_in - 1)), w)
    return m


_AXIS_MAPS = {"bicubic": lambda n_in, n_out: _bicubic_matrix(n_in, n_out, False, 0.0, one_cell_centred=True),
              "area": _area_matrix, "area_enlarging": _area_enlarging_matrix, "lanczos": _lanczos4_matrix}


def _area_blocks(img: np.ndarray, target: Tuple[int, int]) -> np.ndarray:
    """An integer image shrunk by whole factors, as OpenCV's fast 'area' path: each block's sum,
    plus half the block, divided by the block (a mean rounded half up)."""
    (h, w), (m_h, m_w) = img.shape[:2], target
    f_h, f_w = h // m_h, w // m_w
    sums = img.reshape(m_h, f_h, m_w, f_w, -1).sum(axis=(1, 3), dtype=np.int64)
    area = f_h * f_w
    out = ((sums + area // 2) // area).astype(img.dtype)
    return out.reshape(target) if img.ndim == 2 else out


@functools.lru_cache(maxsize=64)
def _axis_taps(interpolation: str, n_in: int, n_out: int) -> Tuple[np.ndarray, np.ndarray]:
    """One axis' map of ``interpolation`` from ``n_in`` to ``n_out`` cells as taps: [n_out, T]
    indices and float32 weights, read-only (kept for the next image of these sizes: a dataset's
    images share them). Applied densely, a map multiplied every output row by the whole input
    (11x Paddle's time for the three modes at 720p: bench/RESULTS.md)."""
    dense = _AXIS_MAPS[interpolation](n_in, n_out)
    nonzero = dense != 0
    width = max(int(nonzero.sum(axis=1).max()), 1)
    index = np.argsort(~nonzero, axis=1, kind="stable")[:, :width]
    weight = np.take_along_axis(dense, index, axis=1).astype(np.float32)
    index.flags.writeable = weight.flags.writeable = False
    return index, weight


def _interpolated(img: Tensor, target: Tuple[int, int], interpolation: str) -> Tensor:
    """A [C, H, W] (or batched) Tensor image resized by ``nn.functional.interpolate``."""
    from pycoll.nn.functional import interpolate

    batch = img.unsqueeze(0) if img.ndim == 3 else img
    out = interpolate(batch, size=list(target), mode=interpolation, align_corners=False)
    return out.squeeze(0) if img.ndim == 3 else out


def _pad_widths(padding: Union[int, Sequence[int]]) -> Tuple[int, int, int, int]:
    """(left, top, right, bottom) from an int, (left/right, top/bottom) or (left, top, right, bottom)."""
    if isinstance(padding, numbers.Integral) and not isinstance(padding, bool):
        return (int(padding),) * 4
    if isinstance(padding, (list, tuple)) and len(padding) in (2, 4):
        p = [int(v) for v in padding]
        return (p[0], p[1], p[0], p[1]) if len(p) == 2 else tuple(p)
    raise ValueError(f"pad: padding must be an int or a sequence of 2 or 4 ints, got {padding!r}")


def pad(img: Any, padding: Union[int, Sequence[int]], fill: Union[float, Sequence[float]] = 0,
        padding_mode: str = "constant") -> Any:
    """``img`` padded by ``padding`` (int, (left/right, top/bottom) or (left, top, right, bottom)).
    padding_mode: 'constant' (``fill``: a number for every channel, or one per channel), 'edge',
    'reflect' (edge pixel not repeated) or 'symmetric' (repeated). paddle's OpenCV path puts a
    number ``fill`` in the first channel alone; here, as on paddle's PIL path, it fills them all."""
    _check_image(img, "pad")
    if padding_mode not in _PAD_MODES:
        raise ValueError(f"pad: padding_mode must be one of {list(_PAD_MODES)}, got {padding_mode!r}")
    left, top, right, bottom = _pad_widths(padding)
    if _is_tensor_image(img):
        from pycoll.nn.functional import pad as tensor_pad
        mode = {"edge": "replicate"}.get(padding_mode, padding_mode)
        if mode == "symmetric":
            raise ValueError("pad: padding_mode 'symmetric' is not available for Tensor images")
        batch = tensor_pad(img.unsqueeze(0), [left, right, top, bottom], mode=mode, value=float(fill))
        return batch.squeeze(0)
    arr = np.asarray(img)
    widths = [(top, bottom), (left, right)] + [(0, 0)] * (arr.ndim - 2)
    if padding_mode != "constant":
        out = np.pad(arr, widths, mode=padding_mode)
    elif min(left, top, right, bottom) < 0:  # (a negative width crops: np.pad's rule)
        out = np.pad(arr, widths, mode="constant", constant_values=fill)
    else:  # the image copied once, the fill written into the border alone
        h, w = arr.shape[:2]
        out = np.empty((h + top + bottom, w + left + right) + arr.shape[2:], arr.dtype)
        out[top:top + h, left:left + w] = arr
        border_row = np.empty(out.shape[1:], arr.dtype)  # one row of fill (its pixels' bytes: fast copies)
        border_row[...] = np.asarray(fill, arr.dtype)
        out[:top] = border_row
        out[top + h:] = border_row
        out[top:top + h, :left] = border_row[:left]
        out[top:top + h, left + w:] = border_row[:right]
    return _to_pil(out) if _is_pil_image(img) else out


def crop(img: Any, top: int, left: int, height: int, width: int) -> Any:
    """The ``height`` x ``width`` window of ``img`` whose top-left corner is (``top``, ``left``)."""
    _check_image(img, "crop")
    if _is_pil_image(img):
        return img.crop((left, top, left + width, top + height))
    if _is_tensor_image(img):
        return img[..., top:top + height, left:left + width]
    return img[top:top + height, left:left + width]


def center_crop(img: Any, output_size: Union[int, Sequence[int]]) -> Any:
    """The centred ``output_size`` ((height, width), or an int for a square) window of ``img``."""
    _check_image(img, "center_crop")
    th, tw = (int(output_size), int(output_size)) if isinstance(output_size, numbers.Number) else output_size
    w, h = get_image_size(img)
    return crop(img, int(round((h - th) / 2.0)), int(round((w - tw) / 2.0)), th, tw)


def hflip(img: Any) -> Any:
    """``img`` mirrored left to right."""
    _check_image(img, "hflip")
    if _is_pil_image(img):
        from PIL import Image
        return img.transpose(Image.FLIP_LEFT_RIGHT)
    if _is_tensor_image(img):
        return pycoll.flip(img, axis=[-1])
    flipped = host_image.flip_width(img)
    return np.ascontiguousarray(img[:, ::-1]) if flipped is None else flipped


def vflip(img: Any) -> Any:
    """``img`` mirrored top to bottom."""
    _check_image(img, "vflip")
    if _is_pil_image(img):
        from PIL import Image
        return img.transpose(Image.FLIP_TOP_BOTTOM)
    if _is_tensor_image(img):
        return pycoll.flip(img, axis=[-2])
    return np.ascontiguousarray(img[::-1])


def normalize(img: Any, mean: Union[float, Sequence[float]], std: Union[float, Sequence[float]],
              data_format: str = "CHW", to_rgb: bool = False) -> Any:
    """(img - mean) / std per channel, channels along the first ('CHW') or last ('HWC') axis,
    in float32; ``to_rgb`` first reverses the last axis (BGR to RGB on an HWC image) of an array.
    A PIL image is read as a float32 array first; a Tensor stays a Tensor."""
    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"normalize: data_format must be 'CHW' or 'HWC', got {data_format!r}")
    shape = (-1, 1, 1) if data_format == "CHW" else (1, 1, -1)
    mean = np.asarray(mean, np.float32).reshape(shape)
    std = np.asarray(std, np.float32).reshape(shape)
    if _is_tensor_image(img):
        return (img - pycoll.to_tensor(mean, dtype=img.dtype)) / pycoll.to_tensor(std, dtype=img.dtype)
    if _is_pil_image(img):
        img = np.asarray(img).astype(np.float32)
    if not isinstance(img, np.ndarray):
        raise TypeError(f"normalize: img must be a numpy array, a PIL image or a Tensor, got {type(img).__name__}")
    if to_rgb:
        img = img[..., ::-1]
    return (img - mean) / std


def erase(img: Any, i: int, j: int, h: int, w: int, v: Any, inplace: bool = False) -> Any:
    """``img`` with the h x w window at row i, column j set to ``v`` (an array: HWC; a Tensor: CHW)."""
    if _is_tensor_image(img):
        out = img if inplace else img.clone()
        out[..., i:i + h, j:j + w] = v
        return out
    if _is_pil_image(img):
        arr = np.array(img)
        arr[i:i + h, j:j + w, ...] = v
        return _to_pil(arr)
    out = img if inplace else img.copy()
    out[i:i + h, j:j + w, ...] = v
    return out
