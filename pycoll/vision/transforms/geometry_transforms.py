"""paddle.vision.transforms' random warps and erasing: ``RandomAffine``, ``RandomRotation``,
``RandomPerspective`` and ``RandomErasing``. The parameters are drawn from the generators paddle
draws them from, in its order: Python's ``random`` for the warps and for RandomErasing's coin,
NumPy's global generator for RandomErasing's area, aspect, position and (on arrays) random values,
so seeding those gives paddle's choices. RandomErasing's random values for a Tensor come from
pycoll's generator (``pycoll.seed``), as paddle's come from its own."""
from __future__ import annotations

import numbers
import random
from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

import pycoll
from pycoll.vision.transforms import functional as F
from pycoll.vision.transforms.transforms import BaseTransform

Fill = Union[float, Sequence[float]]
_MODES = ("nearest", "bilinear", "bicubic", "area")  # ('area': arrays only, bilinear there as in OpenCV)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _angle_range(value: Any, name: str, sizes: Tuple[int, ...] = (2,)) -> List[float]:
    """paddle's _setup_angle: a number v gives [-v, v]; else a sequence of one of ``sizes`` lengths."""
    if _is_number(value):
        if value < 0:
            raise ValueError(f"{name}: a single number must be non-negative, got {value!r}")
        return [-float(value), float(value)]
    if not isinstance(value, (list, tuple)) or len(value) not in sizes or not all(_is_number(v) for v in value):
        raise ValueError(f"{name} must be a number or a sequence of {' or '.join(map(str, sizes))} numbers, "
                         f"got {value!r}")
    return [float(v) for v in value]


def _pair(value: Any, name: str, cls: str) -> Sequence[float]:
    if not isinstance(value, (list, tuple)) or len(value) != 2 or not all(_is_number(v) for v in value):
        raise ValueError(f"{cls}: {name} must be a sequence of two numbers, got {value!r}")
    return value


def _check_mode(interpolation: Any, cls: str) -> None:
    if interpolation not in _MODES:
        raise ValueError(f"{cls}: interpolation must be one of {list(_MODES)}, got {interpolation!r}")


def _check_fill(fill: Any, cls: str) -> Fill:
    if fill is None:
        return 0
    if not (_is_number(fill) or isinstance(fill, (list, tuple))):
        raise TypeError(f"{cls}: fill must be a number or a sequence of numbers, got {fill!r}")
    return fill


class RandomAffine(BaseTransform):
    """``affine`` with an angle drawn from ``degrees`` (a number v: [-v, v]), a translation of up
    to ``translate`` (fractions of width and height), a scale from ``scale`` (min, max) and a shear
    from ``shear`` (v: x in [-v, v]; (min, max): x; (xmin, xmax, ymin, ymax): x and y)."""

    def __init__(self, degrees: Union[float, Sequence[float]], translate: Optional[Sequence[float]] = None,
                 scale: Optional[Sequence[float]] = None, shear: Union[None, float, Sequence[float]] = None,
                 interpolation: str = "nearest", fill: Fill = 0, center: Optional[Sequence[float]] = None,
                 keys: Optional[Sequence[str]] = None) -> None:
        self.degrees = _angle_range(degrees, "degrees")
        super().__init__(keys)
        _check_mode(interpolation, "RandomAffine")
        self.interpolation = interpolation
        if translate is not None and not all(0.0 <= t <= 1.0 for t in _pair(translate, "translate", "RandomAffine")):
            raise ValueError(f"RandomAffine: translate values must be between 0 and 1, got {translate!r}")
        self.translate = translate
        if scale is not None and not all(s > 0 for s in _pair(scale, "scale", "RandomAffine")):
            raise ValueError(f"RandomAffine: scale values must be positive, got {scale!r}")
        self.scale = scale
        self.shear = None if shear is None else _angle_range(shear, "shear", (2, 4))
        self.fill = _check_fill(fill, "RandomAffine")
        if center is not None:
            _pair(center, "center", "RandomAffine")
        self.center = center

    def _get_param(self, img_size: Sequence[int], degrees: Sequence[float], translate: Optional[Sequence[float]] = None,
                   scale_ranges: Optional[Sequence[float]] = None, shears: Optional[Sequence[float]] = None
                   ) -> Tuple[float, Tuple[int, int], float, Tuple[float, float]]:
        """(angle, (tx, ty), scale, (shear_x, shear_y)) for an image of (width, height) ``img_size``."""
        angle = random.uniform(degrees[0], degrees[1])
        translations = (0, 0)
        if translate is not None:
            max_dx, max_dy = float(translate[0] * img_size[0]), float(translate[1] * img_size[1])
            translations = (int(random.uniform(-max_dx, max_dx)), int(random.uniform(-max_dy, max_dy)))
        scale = 1.0 if scale_ranges is None else random.uniform(scale_ranges[0], scale_ranges[1])
        shear_x = shear_y = 0.0
        if shears is not None:
            shear_x = random.uniform(shears[0], shears[1])
            if len(shears) == 4:
                shear_y = random.uniform(shears[2], shears[3])
        return angle, translations, scale, (shear_x, shear_y)

    def _apply_image(self, img: Any) -> Any:
        size = list(F.get_image_size(img))
        angle, translations, scale, shear = self._get_param(size, self.degrees, self.translate, self.scale, self.shear)
        return F.affine(img, angle, translations, scale, shear, interpolation=self.interpolation, fill=self.fill,
                        center=self.center)


class RandomRotation(BaseTransform):
    """``rotate`` by an angle drawn from ``degrees`` (a number v: [-v, v], or (min, max))."""

    def __init__(self, degrees: Union[float, Sequence[float]], interpolation: str = "nearest", expand: bool = False,
                 center: Optional[Sequence[float]] = None, fill: Fill = 0, keys: Optional[Sequence[str]] = None) -> None:
        self.degrees = _angle_range(degrees, "degrees")
        super().__init__(keys)
        _check_mode(interpolation, "RandomRotation")
        self.interpolation, self.expand, self.center = interpolation, expand, center
        self.fill = _check_fill(fill, "RandomRotation")

    def _get_param(self, degrees: Sequence[float]) -> float:
        return random.uniform(degrees[0], degrees[1])

    def _apply_image(self, img: Any) -> Any:
        angle = self._get_param(self.degrees)
        return F.rotate(img, angle, self.interpolation, self.expand, self.center, self.fill)


class RandomPerspective(BaseTransform):
    """With probability ``prob``, ``perspective`` moving each corner inwards by up to
    ``distortion_scale`` of half the width and height."""

    def __init__(self, prob: float = 0.5, distortion_scale: float = 0.5, interpolation: str = "nearest",
                 fill: Fill = 0, keys: Optional[Sequence[str]] = None) -> None:
        super().__init__(keys)
        if not _is_number(prob) or not 0 <= prob <= 1:
            raise ValueError(f"RandomPerspective: prob must be between 0 and 1, got {prob!r}")
        if not _is_number(distortion_scale) or not 0 <= distortion_scale <= 1:
            raise ValueError(f"RandomPerspective: distortion_scale must be between 0 and 1, got {distortion_scale!r}")
        _check_mode(interpolation, "RandomPerspective")
        self.prob, self.distortion_scale, self.interpolation = prob, distortion_scale, interpolation
        self.fill = _check_fill(fill, "RandomPerspective")

    def get_params(self, width: int, height: int, distortion_scale: float) -> Tuple[List[List[int]], List[List[int]]]:
        """(startpoints, endpoints): the image corners and where they move, drawn as paddle draws them."""
        dx, dy = int(distortion_scale * (width // 2)), int(distortion_scale * (height // 2))
        top_left = [int(random.uniform(0, dx + 1)), int(random.uniform(0, dy + 1))]
        top_right = [int(random.uniform(width - dx - 1, width)), int(random.uniform(0, dy + 1))]
        bottom_right = [int(random.uniform(width - dx - 1, width)), int(random.uniform(height - dy - 1, height))]
        bottom_left = [int(random.uniform(0, dx + 1)), int(random.uniform(height - dy - 1, height))]
        start = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        return start, [top_left, top_right, bottom_right, bottom_left]

    def _apply_image(self, img: Any) -> Any:
        width, height = F.get_image_size(img)
        if random.random() < self.prob:
            start, end = self.get_params(width, height, self.distortion_scale)
            return F.perspective(img, start, end, self.interpolation, self.fill)
        return img


class RandomErasing(BaseTransform):
    """With probability ``prob``, a rectangle of ``scale`` (fraction of the area, (min, max)) and
    aspect ``ratio`` set to ``value``: a number, one per channel, or 'random' (normal values; on
    arrays times 255). Ten tries for a rectangle that fits, else the image is kept."""

    def __init__(self, prob: float = 0.5, scale: Sequence[float] = (0.02, 0.33), ratio: Sequence[float] = (0.3, 3.3),
                 value: Union[float, Sequence[float], str] = 0, inplace: bool = False,
                 keys: Optional[Sequence[str]] = None) -> None:
        super().__init__(keys)
        scale, ratio = _pair(scale, "scale", "RandomErasing"), _pair(ratio, "ratio", "RandomErasing")
        if not 0 <= scale[0] <= scale[1] <= 1:
            raise ValueError(f"RandomErasing: scale must be (min, max) within [0, 1], got {scale!r}")
        if not 0 <= ratio[0] <= ratio[1]:
            raise ValueError(f"RandomErasing: ratio must be (min, max) with 0 <= min, got {ratio!r}")
        if not _is_number(prob) or not 0 <= prob <= 1:
            raise ValueError(f"RandomErasing: prob must be between 0 and 1, got {prob!r}")
        if isinstance(value, str):
            if value != "random":
                raise ValueError(f"RandomErasing: a string value must be 'random', got {value!r}")
        elif not (_is_number(value) or (isinstance(value, (list, tuple)) and len(value) in (1, 3))):
            raise ValueError(f"RandomErasing: value must be a number, 1 or 3 numbers or 'random', got {value!r}")
        self.prob, self.scale, self.ratio, self.value, self.inplace = prob, scale, ratio, value, inplace

    def _get_param(self, img: Any, value: Optional[Sequence[float]]) -> Tuple[int, int, int, int, Any]:
        """(top, left, height, width, values) of the rectangle, or (0, 0, H, W, img) after ten misses."""
        if F._is_tensor_image(img):
            c, h, w = img.shape[-3:]
        else:
            shape = np.asarray(img).shape
            h, w, c = shape[0], shape[1], shape[2] if len(shape) == 3 else 1
        log_ratio = np.log(self.ratio)
        for _ in range(10):
            area = np.random.uniform(*self.scale) * (h * w)
            aspect = np.exp(np.random.uniform(*log_ratio))
            eh, ew = int(round(np.sqrt(area * aspect))), int(round(np.sqrt(area / aspect)))
            if eh >= h or ew >= w:
                continue
            if F._is_tensor_image(img):
                v = pycoll.randn([c, eh, ew]).astype(img.dtype) if value is None else \
                    pycoll.to_tensor(value, dtype=img.dtype)[:, None, None]
            else:
                v = np.random.normal(size=[eh, ew, c]) * 255 if value is None else np.array(value)[None, None, :]
                v = v[..., 0] if np.ndim(img) == 2 else v
            return np.random.randint(0, h - eh + 1), np.random.randint(0, w - ew + 1), eh, ew, v
        return 0, 0, h, w, img

    def _apply_image(self, img: Any) -> Any:
        if random.random() >= self.prob:
            return img
        value = None if isinstance(self.value, str) else [self.value] if _is_number(self.value) else self.value
        top, left, eh, ew, v = self._get_param(img, value)
        return F.erase(img, top, left, eh, ew, v, self.inplace)
