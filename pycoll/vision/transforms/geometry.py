"""paddle.vision.transforms.functional's warps: ``affine``, ``rotate`` and ``perspective``, on
PIL images (PIL's own ``transform`` / ``rotate``), NumPy arrays (paddle's OpenCV path, done in
NumPy by ``_cv_warp``) -- both 'nearest', 'bilinear' or 'bicubic' -- and CHW / NCHW floating
Tensors (paddle's tensor path: a sampling grid through ``grid_sample``, 'nearest' or 'bilinear',
the area outside filled with ``fill``).

Each kind keeps paddle's own conventions, which differ between them: on arrays ``affine`` puts
``translate`` in place of the centre's offset (paddle's OpenCV path), so the rotation and shear
turn about the top-left corner and ``center`` has no effect; on Tensors a given ``center`` is
measured against the image's height for x and its width for y, as paddle does. Where paddle
fails or drops ``fill``, it works here: it fills on PIL images too (paddle's PIL ``affine`` and
``perspective`` always fill black), a single number fills every channel (as pycoll's ``pad``
does; paddle's OpenCV ``rotate`` and ``perspective`` put it in the first channel alone) and fits
images of any channel count."""
from __future__ import annotations

import math
import numbers
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from pycoll.device import array_module
from pycoll.dtypes import is_floating
from pycoll.tensor import Tensor, wrap
from pycoll.vision.transforms import _cv_warp
from pycoll.vision.transforms._image import _check_image, _is_pil_image, _is_tensor_image

Fill = Union[float, Sequence[float]]
Point = Sequence[float]
_IMAGE_MODES = ("nearest", "bilinear", "bicubic")  # PIL images
_ARRAY_MODES = _IMAGE_MODES + ("area",)  # paddle's cv2 path passes INTER_AREA, which OpenCV's warps take as bilinear
_TENSOR_MODES = ("nearest", "bilinear")


def _get_affine_matrix(center: Point, angle: float, translate: Point, scale: float,
                       shear: Point) -> List[float]:
    """The inverse (output -> input) affine map, row-major 2x3, of: move to ``center``, rotate by
    ``angle`` and shear by ``shear`` (degrees), scale, move back, translate."""
    rot, sx, sy = math.radians(angle), math.radians(shear[0]), math.radians(shear[1])
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    m = [v / scale for v in (d, -b, 0.0, -c, a, 0.0)]
    (cx, cy), (tx, ty) = center, translate
    m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty) + cx
    m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty) + cy
    return m


def _get_perspective_coeffs(startpoints: Sequence[Point], endpoints: Sequence[Point]) -> List[float]:
    """(a, b, c, d, e, f, g, h) of the map from ``endpoints`` back to ``startpoints``:
    (x, y) -> ((ax + by + c) / (gx + hy + 1), (dx + ey + f) / (gx + hy + 1)), by least squares."""
    rows = []
    for (ex, ey), (sx, sy) in zip(endpoints, startpoints):
        rows.append([ex, ey, 1, 0, 0, 0, -sx * ex, -sx * ey])
        rows.append([0, 0, 0, ex, ey, 1, -sy * ex, -sy * ey])
    target = np.asarray(startpoints, np.float64).reshape(8)
    return list(np.linalg.lstsq(np.asarray(rows, np.float64), target, rcond=None)[0])


def _check_points(points: Any, name: str) -> None:
    if not isinstance(points, (list, tuple)) or len(points) != 4 or \
            not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in points):
        raise ValueError(f"perspective: {name} must be four [x, y] corners, got {points!r}")


def _check_interpolation(img: Any, interpolation: Any, fn: str) -> None:
    modes = _TENSOR_MODES if _is_tensor_image(img) else _IMAGE_MODES if _is_pil_image(img) else _ARRAY_MODES
    if interpolation not in modes:
        kind = "a PIL image" if _is_pil_image(img) else "a Tensor" if _is_tensor_image(img) else "an array"
        raise ValueError(f"{fn}: interpolation must be one of {list(modes)} for {kind}, got {interpolation!r}")


def _array_mode(interpolation: str) -> str:
    """The warp an array's ``interpolation`` runs: 'area' is bilinear there (OpenCV's rule)."""
    return "bilinear" if interpolation == "area" else interpolation


def _check_fill(fill: Any, fn: str) -> None:
    if isinstance(fill, numbers.Real) and not isinstance(fill, bool):
        return
    if isinstance(fill, (list, tuple)) and fill and all(isinstance(v, numbers.Real) for v in fill):
        return
    raise TypeError(f"{fn}: fill must be a number or a sequence of numbers (one per channel), got {fill!r}")


def _pil_fill(img: Any, fill: Fill) -> Any:
    """``fill`` as PIL wants it for img's mode: one value per band."""
    bands = len(img.getbands())
    values = [fill] * bands if isinstance(fill, numbers.Real) else list(fill)[:bands]
    values = [int(round(v)) if img.mode not in ("F", "I") else v for v in values]
    return values[0] if bands == 1 else tuple(values)


def _pil_resample(interpolation: str) -> Any:
    from PIL import Image
    return {"nearest": Image.NEAREST, "bilinear": Image.BILINEAR, "bicubic": Image.BICUBIC}[interpolation]


def _tensor_batch(img: Tensor, fn: str) -> Tensor:
    if img.ndim not in (3, 4) or not is_floating(img.dtype):
        raise ValueError(f"{fn}: a Tensor image must be a floating [C, H, W] or [N, C, H, W] tensor, got shape "
                         f"{img.shape} dtype {img.dtype}")
    return img.unsqueeze(0) if img.ndim == 3 else img


def _fill_values(xp: Any, fill: Fill, channels: int, dtype: Any) -> Any:
    values = xp.asarray(fill, dtype=dtype).reshape(-1)
    if values.size not in (1, channels):
        raise ValueError(f"fill must be one number or {channels} (one per channel), got {fill!r}")
    return xp.broadcast_to(values, (channels,)).reshape(1, channels, 1, 1)


def _sample(batch: Tensor, grid: Any, mode: str, fill: Fill) -> Tensor:
    """paddle's _grid_transform: ``batch`` [N, C, H, W] sampled at the normalised ``grid`` [oh, ow, 2]
    (align_corners=False), a ones channel alongside telling where the samples fell outside."""
    from pycoll.nn.functional import grid_sample
    a = batch._array
    xp = array_module(a)
    n, c = a.shape[:2]
    padded = xp.concatenate([a, xp.ones((n, 1) + a.shape[2:], a.dtype)], axis=1)
    grids = xp.broadcast_to(grid.astype(a.dtype)[None], (n,) + grid.shape)
    out = grid_sample(wrap(padded), wrap(xp.ascontiguousarray(grids)), mode=mode, padding_mode="zeros",
                      align_corners=False)._array
    values, inside = out[:, :-1], out[:, -1:]
    fill_img = _fill_values(xp, fill, c, a.dtype)
    if mode == "nearest":
        outside = (inside < 0.5).astype(a.dtype)
        return wrap(values * (1 - outside) + outside * fill_img)
    return wrap(values * inside + (1 - inside) * fill_img)


def _affine_grid(xp: Any, theta: Any, w: int, h: int, ow: int, oh: int) -> Any:
    """The [oh, ow, 2] normalised source positions of the output pixel centres under the 2x3
    float32 ``theta`` (pixel units about the image centre), as paddle's _affine_grid builds them."""
    f32 = np.float32
    xs = xp.arange(ow, dtype=f32) + f32(-ow * 0.5 + 0.5)
    ys = xp.arange(oh, dtype=f32) + f32(-oh * 0.5 + 0.5)
    base = xp.stack([xp.broadcast_to(xs[None, :], (oh, ow)), xp.broadcast_to(ys[:, None], (oh, ow)),
                     xp.ones((oh, ow), f32)], axis=-1)
    scaled = xp.asarray(theta, f32).reshape(2, 3).T / xp.asarray([0.5 * w, 0.5 * h], f32)
    return base @ scaled


def affine(img: Any, angle: float, translate: Sequence[float], scale: float, shear: Union[float, Sequence[float]],
           interpolation: str = "nearest", fill: Fill = 0, center: Optional[Sequence[float]] = None) -> Any:
    """``img`` rotated by ``angle`` degrees (clockwise), translated by ``translate`` (pixels),
    scaled by ``scale`` and sheared by ``shear`` (degrees, along x and y; one number: along x),
    about ``center`` (default: the image centre; see the module's notes for arrays)."""
    _check_image(img, "affine")
    if not isinstance(angle, numbers.Real) or isinstance(angle, bool):
        raise TypeError(f"affine: angle must be a number, got {angle!r}")
    if not isinstance(translate, (list, tuple)) or len(translate) != 2:
        raise ValueError(f"affine: translate must be a sequence of two numbers, got {translate!r}")
    if not isinstance(scale, numbers.Real) or scale <= 0:
        raise ValueError(f"affine: scale must be a positive number, got {scale!r}")
    if isinstance(shear, numbers.Real):
        shear = [float(shear), 0.0]
    if not isinstance(shear, (list, tuple)) or len(shear) not in (1, 2):
        raise ValueError(f"affine: shear must be a number or a sequence of one or two numbers, got {shear!r}")
    shear = [float(shear[0])] * 2 if len(shear) == 1 else [float(v) for v in shear]
    if center is not None and (not isinstance(center, (list, tuple)) or len(center) != 2):
        raise ValueError(f"affine: center must be None or an (x, y) pair, got {center!r}")
    _check_interpolation(img, interpolation, "affine")
    _check_fill(fill, "affine")
    angle = float(angle)
    if _is_pil_image(img):
        from PIL import Image
        width, height = img.size
        centre = [width * 0.5, height * 0.5] if center is None else center
        matrix = _get_affine_matrix(centre, angle, translate, scale, shear)
        return img.transform(img.size, Image.AFFINE, matrix, _pil_resample(interpolation),
                             fillcolor=_pil_fill(img, fill))
    if _is_tensor_image(img):
        batch = _tensor_batch(img, "affine")
        centre = [0.0, 0.0]
        if center is not None:  # paddle's: x measured against the height, y against the width
            height, width = img.shape[-1], img.shape[-2]
            centre = [c - s * 0.5 for c, s in zip(center, [width, height])]
        matrix = _get_affine_matrix(centre, angle, [float(t) for t in translate], scale, shear)
        xp = array_module(batch._array)
        h, w = batch.shape[-2:]
        out = _sample(batch, _affine_grid(xp, matrix, w, h, w, h), interpolation, fill)
        return out.squeeze(0) if img.ndim == 3 else out
    h, w = img.shape[:2]
    m = _cv_warp.rotation_matrix((0.0, 0.0), angle, scale)  # its offset column is replaced by translate
    tan_x, tan_y = math.tan(shear[0] * math.pi / 180), math.tan(shear[1] * math.pi / 180)
    warp = np.stack([m[0] + tan_y * m[1], m[1] + tan_x * m[0]])
    warp[:, 2] = translate
    return _cv_warp.warp_affine(img, warp, (w, h), _array_mode(interpolation), fill)


def _rotated_size(w: int, h: int, matrix: Sequence[float], centre: Tuple[float, float]) -> Tuple[int, int]:
    """paddle's OpenCV path: the bounding box of the corners turned by ``matrix`` about ``centre``."""
    a, b, _, d, e, _ = matrix
    c = a * -centre[0] + b * -centre[1] + centre[0]
    f = d * -centre[0] + e * -centre[1] + centre[1]
    xs = [a * x + b * y + c for x, y in ((0, 0), (w, 0), (w, h), (0, h))]
    ys = [d * x + e * y + f for x, y in ((0, 0), (w, 0), (w, h), (0, h))]
    return math.ceil(max(xs)) - math.floor(min(xs)), math.ceil(max(ys)) - math.floor(min(ys))


def _rotate_tensor(img: Tensor, angle: float, interpolation: str, expand: bool,
                   center: Optional[Sequence[float]], fill: Fill) -> Tensor:
    """paddle's tensor rotate: the 2x3 map built in float32 about the image centre, the output
    enlarged to the floor/ceil box of the turned corners with ``expand``."""
    batch = _tensor_batch(img, "rotate")
    xp = array_module(batch._array)
    f32 = np.float32
    h, w = batch.shape[-2:]
    rad = math.radians(-angle % 360)
    rc = [0.0, 0.0] if center is None else [p - s * 0.5 for p, s in zip(center, [w, h])]
    m = np.array([math.cos(rad), math.sin(rad), 0.0, -math.sin(rad), math.cos(rad), 0.0], f32)
    m[2] += m[0] * f32(-rc[0]) + m[1] * f32(-rc[1]) + f32(rc[0])
    m[5] += m[3] * f32(-rc[0]) + m[4] * f32(-rc[1]) + f32(rc[1])
    ow, oh = w, h
    if expand:
        corners = np.array([[-0.5 * w, -0.5 * h, 1.0], [-0.5 * w, 0.5 * h, 1.0], [0.5 * w, 0.5 * h, 1.0],
                            [0.5 * w, -0.5 * h, 1.0]], f32)
        pos = corners @ m.reshape(2, 3).T
        ow, oh = (int(v) for v in np.ceil(pos.max(axis=0)) - np.floor(pos.min(axis=0)))
    out = _sample(batch, _affine_grid(xp, m, w, h, ow, oh), interpolation, fill)
    return out.squeeze(0) if img.ndim == 3 else out


def rotate(img: Any, angle: float, interpolation: str = "nearest", expand: bool = False,
           center: Optional[Sequence[float]] = None, fill: Fill = 0) -> Any:
    """``img`` rotated by ``angle`` degrees counter-clockwise about ``center`` (x, y; default the
    image centre); ``expand`` enlarges the output to hold the whole rotated image."""
    _check_image(img, "rotate")
    if not isinstance(angle, numbers.Real) or isinstance(angle, bool):
        raise TypeError(f"rotate: angle must be a number, got {angle!r}")
    if center is not None and (not isinstance(center, (list, tuple)) or len(center) != 2):
        raise ValueError(f"rotate: center must be None or an (x, y) pair, got {center!r}")
    _check_interpolation(img, interpolation, "rotate")
    _check_fill(fill, "rotate")
    angle = float(angle)
    if _is_pil_image(img):
        return img.rotate(angle, _pil_resample(interpolation), expand, None if center is None else tuple(center),
                          fillcolor=_pil_fill(img, fill))
    if _is_tensor_image(img):
        return _rotate_tensor(img, angle, interpolation, expand, center, fill)
    h, w = img.shape[:2]
    centre = (w / 2.0, h / 2.0) if center is None else tuple(center)
    m = _cv_warp.rotation_matrix(centre, angle, 1.0)
    if expand:
        rad = -math.radians(angle)
        cos, sin = round(math.cos(rad), 15), round(math.sin(rad), 15)
        nw, nh = _rotated_size(w, h, (cos, sin, 0.0, -sin, cos, 0.0), centre)
        m[0, 2] += (nw - w) * 0.5
        m[1, 2] += (nh - h) * 0.5
        w, h = int(nw), int(nh)
    return _cv_warp.warp_affine(img, m, (w, h), _array_mode(interpolation), fill)


def perspective(img: Any, startpoints: Sequence[Point], endpoints: Sequence[Point],
                interpolation: str = "nearest", fill: Fill = 0) -> Any:
    """``img`` warped so that its corners ``startpoints`` ([top-left, top-right, bottom-right,
    bottom-left], each [x, y]) move to ``endpoints``."""
    _check_image(img, "perspective")
    _check_points(startpoints, "startpoints")
    _check_points(endpoints, "endpoints")
    _check_interpolation(img, interpolation, "perspective")
    _check_fill(fill, "perspective")
    if _is_pil_image(img):
        from PIL import Image
        coeffs = _get_perspective_coeffs(startpoints, endpoints)
        return img.transform(img.size, Image.PERSPECTIVE, coeffs, _pil_resample(interpolation),
                             fillcolor=_pil_fill(img, fill))
    if _is_tensor_image(img):
        batch = _tensor_batch(img, "perspective")
        xp = array_module(batch._array)
        c = np.asarray(_get_perspective_coeffs(startpoints, endpoints), np.float32)
        h, w = batch.shape[-2:]
        f32 = np.float32
        xs = xp.arange(w, dtype=f32) + f32(0.5)
        ys = xp.arange(h, dtype=f32) + f32(0.5)
        base = xp.stack([xp.broadcast_to(xs[None, :], (h, w)), xp.broadcast_to(ys[:, None], (h, w)),
                         xp.ones((h, w), f32)], axis=-1)
        num = base @ (xp.asarray(c[:6].reshape(2, 3).T) / xp.asarray([0.5 * w, 0.5 * h], f32))
        den = base @ xp.asarray(np.array([[c[6], c[7], 1], [c[6], c[7], 1]], f32).T)
        out = _sample(batch, num / den - 1, interpolation, fill)
        return out.squeeze(0) if img.ndim == 3 else out
    h, w = img.shape[:2]
    matrix = _cv_warp.perspective_transform(startpoints, endpoints)
    return _cv_warp.warp_perspective(img, matrix, (w, h), _array_mode(interpolation), fill)
