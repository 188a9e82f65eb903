"""paddle.vision.transforms' classes: ``BaseTransform`` (a transform applied to the fields of a
sample named by ``keys``), ``Compose`` and the geometric / tensor transforms over the functions
of ``functional``. The random ones draw from Python's ``random`` (and, for RandomResizedCrop,
NumPy's global generator) exactly as paddle's do, so seeding those reproduces paddle's choices."""
from __future__ import annotations

import math
import numbers
import random
from typing import Any, Callable, Optional, Sequence, Tuple, Union

import numpy as np

from pycoll.vision.transforms import functional as F

Size = Union[int, Sequence[int]]


class Compose:
    """Applies ``transforms`` in order to a sample (one image, or a tuple for keyed transforms)."""

    def __init__(self, transforms: Sequence[Callable[[Any], Any]]) -> None:
        self.transforms = transforms

    def __call__(self, data: Any) -> Any:
        for transform in self.transforms:
            data = transform(data)
        return data

    def __repr__(self) -> str:
        return type(self).__name__ + "(" + "".join(f"\n    {t}" for t in self.transforms) + "\n)"


class BaseTransform:
    """A transform over a sample that is one item or a tuple: item i is handled by
    ``self._apply_<keys[i]>`` (keys default to ('image',)); items past ``keys`` pass through.
    Subclasses implement ``_apply_image`` (and ``_get_params``, drawn once per call into
    ``self.params`` so every field of a sample sees the same random choice)."""

    def __init__(self, keys: Optional[Sequence[str]] = None) -> None:
        if keys is None:
            keys = ("image",)
        elif not isinstance(keys, (list, tuple)):
            raise ValueError(f"keys should be a sequence, but got keys={keys!r}")
        for key in keys:
            if self._get_apply(key) is None:
                raise NotImplementedError(f"{key} is unsupported data structure")
        self.keys = keys
        self.params = None

    def _get_params(self, inputs: Tuple[Any, ...]) -> Any:
        return None

    def __call__(self, inputs: Any) -> Any:
        if not isinstance(inputs, tuple):
            inputs = (inputs,)
        self.params = self._get_params(inputs)
        outputs = [self._get_apply(key)(item) for key, item in zip(self.keys, inputs)]
        outputs += inputs[len(self.keys):]
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def _get_apply(self, key: str) -> Optional[Callable[[Any], Any]]:
        return getattr(self, f"_apply_{key}", None)

    def _apply_image(self, image: Any) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _pair(size: Size, name: str, cls: str) -> Tuple[int, int]:
    if isinstance(size, numbers.Number) and not isinstance(size, bool):
        return int(size), int(size)
    if isinstance(size, (list, tuple)) and len(size) == 2:
        return int(size[0]), int(size[1])
    raise ValueError(f"{cls}: {name} must be an int or a (height, width) pair, got {size!r}")


def _probability(prob: float, cls: str) -> float:
    if not 0 <= prob <= 1:
        raise ValueError(f"{cls}: prob must be between 0 and 1, got {prob!r}")
    return prob


class ToTensor(BaseTransform):
    """``F.to_tensor``: an HWC image as a Tensor in ``data_format``, uint8 scaled to [0, 1]."""

    def __init__(self, data_format: str = "CHW", keys: Optional[Sequence[str]] = None) -> None:
        super().__init__(keys)
        if data_format not in ("CHW", "HWC"):
            raise ValueError(f"ToTensor: data_format must be 'CHW' or 'HWC', got {data_format!r}")
        self.data_format = data_format

    def _apply_image(self, img: Any) -> Any:
        return F.to_tensor(img, self.data_format)


class Resize(BaseTransform):
    """``F.resize``: an int ``size`` sets the shorter side (aspect kept), a pair is (height, width)."""

    def __init__(self, size: Size, interpolation: str = "bilinear", keys: Optional[Sequence[str]] = None) -> None:
        super().__init__(keys)
        if not (isinstance(size, numbers.Integral) or (isinstance(size, (list, tuple)) and len(size) == 2)):
            raise ValueError(f"Resize: size must be an int or a (height, width) pair, got {size!r}")
        self.size, self.interpolation = size, interpolation

    def _apply_image(self, img: Any) -> Any:
        return F.resize(img, self.size, self.interpolation)


class RandomResizedCrop(BaseTransform):
    """A random window of ``scale`` (fraction of the area) and aspect ``ratio``, resized to ``size``
    (paddle's 10 attempts, then a centred crop of the nearest admissible aspect)."""

    def __init__(self, size: Size, scale: Sequence[float] = (0.08, 1.0), ratio: Sequence[float] = (3.0 / 4, 4.0 / 3),
                 interpolation: str = "bilinear", keys: Optional[Sequence[str]] = None) -> None:
        super().__init__(keys)
        self.size = _pair(size, "size", "RandomResizedCrop")
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            raise ValueError(f"RandomResizedCrop: scale and ratio must be (min, max), got {scale!r}, {ratio!r}")
        self.scale, self.ratio, self.interpolation = scale, ratio, interpolation

    def _get_param(self, image: Any, attempts: int = 10) -> Tuple[int, int, int, int]:
        width, height = F.get_image_size(image)
        area = height * width
        log_ratio = tuple(math.log(x) for x in self.ratio)
        for _ in range(attempts):
            target_area = np.random.uniform(*self.scale) * area
            aspect_ratio = math.exp(np.random.uniform(*log_ratio))
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                return random.randint(0, height - h), random.randint(0, width - w), h, w
        in_ratio = float(width) / float(height)
        if in_ratio < min(self.ratio):
            w, h = width, int(round(width / min(self.ratio)))
        elif in_ratio > max(self.ratio):
            w, h = int(round(height * max(self.ratio))), height
        else:
            w, h = width, height
        return (height - h) // 2, (width - w) // 2, h, w

    def _apply_image(self, img: Any) -> Any:
        i, j, h, w = self._get_param(img)
        return F.resize(F.crop(img, i, j, h, w), self.size, self.interpolation)


class CenterCrop(BaseTransform):
    """``F.center_crop`` to ``size`` ((height, width), or an int for a square)."""

    def __init__(self, size: Size, keys: Optional[Sequence[str]] = None) -> None:
        super().__init__(keys)
        self.size = _pair(size, "size", "CenterCrop")

    def _apply_image(self, img: Any) -> Any:
        return F.center_crop(img, self.size)


class RandomHorizontalFlip(BaseTransform):
    """Mirrors left to right with probability ``prob``."""

    def __init__(self, prob: float = 0.5, keys: Optional[Sequence[str]] = None) -> None:
        super().__init__(keys)
        self.prob = _probability(prob, "RandomHorizontalFlip")

    def _apply_image(self, img: Any) -> Any:
        return F.hflip(img) if random.random() < self.prob else img


class RandomVerticalFlip(BaseTransform):
    """Mirrors top to bottom with probability ``prob``."""

    def __init__(self, prob: float = 0.5, keys: Optional[Sequence[str]] = None) -> None:
        super().__init__(keys)
        self.prob = _probability(prob, "RandomVerticalFlip")

    def _apply_image(self, img: Any) -> Any:
        return F.vflip(img) if random.random() < self.prob else img


class Normalize(BaseTransform):
    """``F.normalize``: (img - mean) / std per channel; a number is used for all three channels."""

    def __init__(self, mean: Union[float, Sequence[float]] = 0.0, std: Union[float, Sequence[float]] = 1.0,
                 data_format: str = "CHW", to_rgb: bool = False, keys: Optional[Sequence[str]] = None) -> None:
        super().__init__(keys)
        if data_format not in ("CHW", "HWC"):
            raise ValueError(f"Normalize: data_format must be 'CHW' or 'HWC', got {data_format!r}")
        self.mean = [mean] * 3 if isinstance(mean, numbers.Number) else mean
        self.std = [std] * 3 if isinstance(std, numbers.Number) else std
        self.data_format, self.to_rgb = data_format, to_rgb

    def _apply_image(self, img: Any) -> Any:
        return F.normalize(img, self.mean, self.std, self.data_format, self.to_rgb)


class Transpose(BaseTransform):
    """Permutes the axes of an array (a 2-D one gets a channel axis first; a PIL image is read as
    an array) or a Tensor by ``order`` (default HWC -> CHW)."""

    def __init__(self, order: Sequence[int] = (2, 0, 1), keys: Optional[Sequence[str]] = None) -> None:
        super().__init__(keys)
        self.order = order

    def _apply_image(self, img: Any) -> Any:
        if F._is_tensor_image(img):
            return img.transpose(self.order)
        img = np.asarray(img)
        if img.ndim == 2:
            img = img[..., np.newaxis]
        return img.transpose(self.order)


class RandomCrop(BaseTransform):
    """A random ``size`` window, after padding by ``padding`` (as ``F.pad``) and, with
    ``pad_if_needed``, padding the sides that are shorter than ``size``."""

    def __init__(self, size: Size, padding: Optional[Size] = None, pad_if_needed: bool = False,
                 fill: Union[float, Sequence[float]] = 0, padding_mode: str = "constant",
                 keys: Optional[Sequence[str]] = None) -> None:
        super().__init__(keys)
        self.size = _pair(size, "size", "RandomCrop")
        self.padding, self.pad_if_needed, self.fill, self.padding_mode = padding, pad_if_needed, fill, padding_mode

    def _get_param(self, img: Any, output_size: Tuple[int, int]) -> Tuple[int, int, int, int]:
        w, h = F.get_image_size(img)
        th, tw = output_size
        if w == tw and h == th:
            return 0, 0, h, w
        if h < th or w < tw:
            raise ValueError(f"RandomCrop: the image ({h}x{w} after padding) is smaller than size {output_size}; "
                             f"pass padding or pad_if_needed=True")
        return random.randint(0, h - th), random.randint(0, w - tw), th, tw

    def _apply_image(self, img: Any) -> Any:
        if self.padding is not None:
            img = F.pad(img, self.padding, self.fill, self.padding_mode)
        w, h = F.get_image_size(img)
        if self.pad_if_needed and w < self.size[1]:
            img = F.pad(img, (self.size[1] - w, 0), self.fill, self.padding_mode)
        if self.pad_if_needed and h < self.size[0]:
            img = F.pad(img, (0, self.size[0] - h), self.fill, self.padding_mode)
        return F.crop(img, *self._get_param(img, self.size))


class Pad(BaseTransform):
    """``F.pad`` with this transform's padding, fill and padding_mode."""

    def __init__(self, padding: Size, fill: Union[float, Sequence[float]] = 0, padding_mode: str = "constant",
                 keys: Optional[Sequence[str]] = None) -> None:
        F._pad_widths(padding)  # refuses a bad padding now, not at the first image
        if padding_mode not in F._PAD_MODES:
            raise ValueError(f"Pad: padding_mode must be one of {list(F._PAD_MODES)}, got {padding_mode!r}")
        super().__init__(keys)
        self.padding = tuple(padding) if isinstance(padding, list) else padding
        self.fill = tuple(fill) if isinstance(fill, list) else fill
        self.padding_mode = padding_mode

    def _apply_image(self, img: Any) -> Any:
        return F.pad(img, self.padding, self.fill, self.padding_mode)
