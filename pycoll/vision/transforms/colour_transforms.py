"""paddle.vision.transforms' colour transforms: ``BrightnessTransform``, ``ContrastTransform``,
``SaturationTransform``, ``HueTransform``, ``ColorJitter`` (the four in a random order) and
``Grayscale``. Factors are drawn with Python's ``random`` exactly as paddle draws them (one
``random.uniform`` per adjustment that is not a no-op, after ColorJitter's ``random.shuffle`` of
all four), so the same ``random.seed`` gives the same factors as in paddle."""
from __future__ import annotations

import numbers
import random
from typing import Any, List, Optional, Sequence, Tuple, Union

from pycoll.vision.transforms import colour
from pycoll.vision.transforms.transforms import BaseTransform, Compose

Range = Union[float, Sequence[float]]


def _factor_range(value: Range, name: str, center: float = 1.0, bound: Tuple[float, float] = (0, float("inf")),
                  clip_first_on_zero: bool = True) -> Optional[List[float]]:
    """paddle's _check_input: a number v gives [center - v, center + v] (the low end clipped at 0
    for factors), a pair is checked against ``bound``; None when the range is the no-op [center]."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"{name}: a single number must be non-negative, got {value!r}")
        span = [center - value, center + value]
        if clip_first_on_zero:
            span[0] = max(span[0], 0)
    elif isinstance(value, (list, tuple)) and len(value) == 2 and all(isinstance(v, numbers.Real) for v in value):
        if not bound[0] <= value[0] <= value[1] <= bound[1]:
            raise ValueError(f"{name}: a (min, max) pair must satisfy {bound[0]} <= min <= max <= {bound[1]}, "
                             f"got {value!r}")
        span = list(value)
    else:
        raise TypeError(f"{name} must be a number or a (min, max) pair, got {value!r}")
    return None if span[0] == span[1] == center else span


class _ColourTransform(BaseTransform):
    """A factor drawn uniformly from ``self.value`` (skipped when it is None) fed to the subclass's
    ``_adjust``."""

    def _apply_image(self, img: Any) -> Any:
        if self.value is None:
            return img
        return self._adjust(img, random.uniform(self.value[0], self.value[1]))


class BrightnessTransform(_ColourTransform):
    """``adjust_brightness`` by a factor drawn from [max(0, 1 - value), 1 + value] (or a given
    (min, max) range)."""

    _adjust = staticmethod(colour.adjust_brightness)

    def __init__(self, value: Range, keys: Optional[Sequence[str]] = None) -> None:
        super().__init__(keys)
        self.value = _factor_range(value, "brightness")


class ContrastTransform(_ColourTransform):
    """``adjust_contrast`` by a factor drawn from [max(0, 1 - value), 1 + value] (or a given range)."""

    _adjust = staticmethod(colour.adjust_contrast)

    def __init__(self, value: Range, keys: Optional[Sequence[str]] = None) -> None:
        super().__init__(keys)
        self.value = _factor_range(value, "contrast")


class SaturationTransform(_ColourTransform):
    """``adjust_saturation`` by a factor drawn from [max(0, 1 - value), 1 + value] (or a given range)."""

    _adjust = staticmethod(colour.adjust_saturation)

    def __init__(self, value: Range, keys: Optional[Sequence[str]] = None) -> None:
        super().__init__(keys)
        self.value = _factor_range(value, "saturation")


class HueTransform(_ColourTransform):
    """``adjust_hue`` by a factor drawn from [-value, value] (value in [0, 0.5]; or a given range
    inside [-0.5, 0.5])."""

    _adjust = staticmethod(colour.adjust_hue)

    def __init__(self, value: Range, keys: Optional[Sequence[str]] = None) -> None:
        super().__init__(keys)
        self.value = _factor_range(value, "hue", center=0, bound=(-0.5, 0.5), clip_first_on_zero=False)
        if self.value is not None and not -0.5 <= self.value[0] <= self.value[1] <= 0.5:
            raise ValueError(f"hue: a single number must be in [0, 0.5], got {value!r}")


class ColorJitter(BaseTransform):
    """Brightness, contrast, saturation and hue transforms (see those) applied in a random order;
    0 leaves that property alone."""

    def __init__(self, brightness: Range = 0, contrast: Range = 0, saturation: Range = 0, hue: Range = 0,
                 keys: Optional[Sequence[str]] = None) -> None:
        super().__init__(keys)
        self.brightness, self.contrast, self.saturation, self.hue = brightness, contrast, saturation, hue
        self._parts = [BrightnessTransform(brightness, self.keys), ContrastTransform(contrast, self.keys),
                       SaturationTransform(saturation, self.keys), HueTransform(hue, self.keys)]

    def _get_param(self) -> Compose:
        """The four transforms in a fresh random order (paddle's random.shuffle of four)."""
        order = list(self._parts)
        random.shuffle(order)
        return Compose(order)

    def _apply_image(self, img: Any) -> Any:
        return self._get_param()(img)


class Grayscale(BaseTransform):
    """``to_grayscale`` with ``num_output_channels`` (1 or 3) channels."""

    def __init__(self, num_output_channels: int = 1, keys: Optional[Sequence[str]] = None) -> None:
        super().__init__(keys)
        if num_output_channels not in (1, 3):
            raise ValueError(f"Grayscale: num_output_channels must be 1 or 3, got {num_output_channels!r}")
        self.num_output_channels = num_output_channels

    def _apply_image(self, img: Any) -> Any:
        return colour.to_grayscale(img, self.num_output_channels)
