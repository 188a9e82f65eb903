"""Upsample, UpsamplingNearest2D, UpsamplingBilinear2D, PixelShuffle and PixelUnshuffle (paddle.nn
names); the functions are in `pycoll.nn.functional` (interpolate, pixel_shuffle)."""
from __future__ import annotations

from typing import Any, Optional

from pycoll._param_aliases import param_aliases
from pycoll.nn import _resample_functional as RF
from pycoll.nn.image_layers import _named
from pycoll.nn.layer import Layer
from pycoll.tensor import Tensor


class Upsample(Layer):
    """F.interpolate with this layer's size or scale_factor, mode, align_corners and align_mode."""

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest", align_corners: bool = False,
                 align_mode: int = 0, data_format: Optional[str] = None, recompute_scale_factor: Optional[bool] = None,
                 name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self.size, self.scale_factor, self.mode = size, scale_factor, mode.lower()
        self.align_corners, self.align_mode, self.data_format = align_corners, align_mode, data_format
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, x: Tensor) -> Tensor:
        return RF.interpolate(x, self.size, self.scale_factor, self.mode, self.align_corners, self.align_mode,
                              self.data_format, self.recompute_scale_factor)

    def extra_repr(self) -> str:
        what = f"scale_factor={self.scale_factor}" if self.scale_factor is not None else f"size={self.size}"
        return (f"{what}, mode={self.mode}, align_corners={self.align_corners}, align_mode={self.align_mode}, "
                f"data_format={self.data_format}")


class UpsamplingNearest2D(Layer):
    """Nearest-neighbour resizing of 4-D x."""

    _mode, _align_corners = "nearest", False

    def __init__(self, size: Any = None, scale_factor: Any = None, data_format: str = "NCHW",
                 name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self.size, self.scale_factor, self.data_format = size, scale_factor, data_format

    @param_aliases({"input": "x"})
    def forward(self, x: Tensor) -> Tensor:
        return RF.interpolate(x, self.size, self.scale_factor, self._mode, self._align_corners, 0, self.data_format)

    def extra_repr(self) -> str:
        what = f"scale_factor={self.scale_factor}" if self.scale_factor is not None else f"size={self.size}"
        return f"{what}, data_format={self.data_format}"


class UpsamplingBilinear2D(UpsamplingNearest2D):
    """Bilinear resizing of 4-D x with the corners aligned (align_corners=True, as paddle's)."""

    _mode, _align_corners = "bilinear", True


class PixelShuffle(Layer):
    def __init__(self, upscale_factor: int, data_format: str = "NCHW", name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self._upscale_factor, self._data_format = upscale_factor, data_format

    def forward(self, x: Tensor) -> Tensor:
        return RF.pixel_shuffle(x, self._upscale_factor, self._data_format)

    def extra_repr(self) -> str:
        return _named(f"upscale_factor={self._upscale_factor}", self._data_format, None)


class PixelUnshuffle(Layer):
    def __init__(self, downscale_factor: int, data_format: str = "NCHW", name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self._downscale_factor, self._data_format = downscale_factor, data_format

    def forward(self, x: Tensor) -> Tensor:
        return RF.pixel_unshuffle(x, self._downscale_factor, self._data_format)

    def extra_repr(self) -> str:
        return _named(f"downscale_factor={self._downscale_factor}", self._data_format, None)
