"""SqueezeNet (paddle.vision.models.SqueezeNet / squeezenet1_0 / squeezenet1_1): fire modules (a 1x1
squeeze conv feeding concatenated 1x1 and 3x3 expand convs) and a 1x1 conv classifier, with paddle's
layer names (_conv, _conv1.._conv8 of MakeFire, _conv9)."""
from __future__ import annotations

from typing import Any, Union, Sequence

import pycoll
from pycoll import nn
from pycoll.nn import functional as F
from pycoll.tensor import Tensor
from pycoll.vision.models._common import refuse_pretrained

# per version: the stem conv (out channels, kernel, stride, padding) and, for fires 1..8, after
# which of them the 3x3 stride-2 max pool runs again
_STEM = {"1.0": (96, 7, 2, 0), "1.1": (64, 3, 2, 1)}
_POOL_AFTER = {"1.0": (3, 7), "1.1": (2, 4)}
# MakeFire(in, squeeze, expand1x1, expand3x3) for _conv1.._conv8 (the first one's input is the stem's)
_FIRES = [(16, 64, 64), (16, 64, 64), (32, 128, 128), (32, 128, 128), (48, 192, 192), (48, 192, 192),
          (64, 256, 256), (64, 256, 256)]


class MakeFireConv(nn.Layer):
    """Conv2D (``_conv``, with bias) followed by ReLU."""

    def __init__(self, input_channels: int, output_channels: int, filter_size: Union[int, Sequence[int]],
                 padding: Union[int, Sequence[int]] = 0) -> None:
        super().__init__()
        self._conv = nn.Conv2D(input_channels, output_channels, filter_size, padding=padding)

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self._conv(x))


class MakeFire(nn.Layer):
    """A fire module: squeeze (``_conv``), then the 1x1 (``_conv_path1``) and 3x3 (``_conv_path2``)
    expansions concatenated along the channels."""

    def __init__(self, input_channels: int, squeeze_channels: int, expand1x1_channels: int,
                 expand3x3_channels: int) -> None:
        super().__init__()
        self._conv = MakeFireConv(input_channels, squeeze_channels, 1)
        self._conv_path1 = MakeFireConv(squeeze_channels, expand1x1_channels, 1)
        self._conv_path2 = MakeFireConv(squeeze_channels, expand3x3_channels, 3, padding=1)

    def forward(self, inputs: Tensor) -> Tensor:
        x = self._conv(inputs)
        return pycoll.concat([self._conv_path1(x), self._conv_path2(x)], axis=1)


class SqueezeNet(nn.Layer):
    """SqueezeNet ``version`` '1.0' or '1.1'. ``num_classes <= 0`` leaves out the 1x1 classifier conv
    ``_conv9`` (paddle keeps it, with zero-sized weights that never run); ``with_pool=False`` leaves
    out the final ReLU, average pool and squeeze, so the output stays [N, C, H, W]."""

    def __init__(self, version: str, num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__()
        if version not in _STEM:
            raise ValueError(f"SqueezeNet: version must be one of {sorted(_STEM)}, got {version!r}")
        self.version = version
        self.num_classes = num_classes
        self.with_pool = with_pool
        out, kernel, stride, padding = _STEM[version]
        self._conv = nn.Conv2D(3, out, kernel, stride=stride, padding=padding)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)
        in_channels = out
        for i, (squeeze, e1, e3) in enumerate(_FIRES, start=1):
            setattr(self, f"_conv{i}", MakeFire(in_channels, squeeze, e1, e3))
            in_channels = e1 + e3
        self._drop = nn.Dropout(p=0.5, mode="downscale_in_infer")
        if num_classes > 0:
            self._conv9 = nn.Conv2D(512, num_classes, 1)
        self._avg_pool = nn.AdaptiveAvgPool2D(1)

    def forward(self, inputs: Tensor) -> Tensor:
        x = self._pool(F.relu(self._conv(inputs)))
        pool_after = _POOL_AFTER[self.version]
        for i in range(1, len(_FIRES) + 1):
            x = getattr(self, f"_conv{i}")(x)
            if i in pool_after:
                x = self._pool(x)
        if self.num_classes > 0:
            x = self._conv9(self._drop(x))
        if self.with_pool:
            x = pycoll.squeeze(self._avg_pool(F.relu(x)), axis=[2, 3])
        return x


def squeezenet1_0(pretrained: bool = False, **kwargs: Any) -> SqueezeNet:
    """``SqueezeNet('1.0', **kwargs)``; ``pretrained=True`` is refused (pycoll downloads nothing)."""
    refuse_pretrained("squeezenet1_0", pretrained)
    return SqueezeNet("1.0", **kwargs)


def squeezenet1_1(pretrained: bool = False, **kwargs: Any) -> SqueezeNet:
    """``SqueezeNet('1.1', **kwargs)``; ``pretrained=True`` is refused (pycoll downloads nothing)."""
    refuse_pretrained("squeezenet1_1", pretrained)
    return SqueezeNet("1.1", **kwargs)
