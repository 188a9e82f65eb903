"""ShuffleNetV2 (paddle.vision.models.ShuffleNetV2, shufflenet_v2_x0_25 ... x2_0, shufflenet_v2_swish):
channel-split units joined by a channel shuffle, with paddle's layer names (_conv1, the blocks
"2_1" ... "4_4" registered on the model itself, _last_conv, _fc)."""
from __future__ import annotations

from typing import Any, Callable, Optional

import pycoll
from pycoll import nn
from pycoll.nn import functional as F
from pycoll.tensor import Tensor
from pycoll.vision.models._common import ConvNormActivation, refuse_pretrained

_STAGE_REPEATS = [4, 8, 4]
# scale -> output channels of the stem, the three stages and the last 1x1 conv
_STAGE_OUT_CHANNELS = {0.25: [24, 24, 48, 96, 512], 0.33: [24, 32, 64, 128, 512], 0.5: [24, 48, 96, 192, 1024],
                       1.0: [24, 116, 232, 464, 1024], 1.5: [24, 176, 352, 704, 1024],
                       2.0: [24, 224, 488, 976, 2048]}
_ACTIVATIONS = {None: None, "relu": nn.ReLU, "swish": nn.Swish}


def create_activation_layer(act: Optional[str]) -> Optional[Callable[..., nn.Layer]]:
    """The layer class paddle's ``act`` names: 'relu', 'swish', or None for no activation."""
    if act not in _ACTIVATIONS:
        raise ValueError(f"ShuffleNetV2: act must be 'relu', 'swish' or None, got {act!r}")
    return _ACTIVATIONS[act]


def _conv_bn(in_channels: int, out_channels: int, kernel_size: int, stride: int = 1, groups: int = 1,
             activation_layer: Optional[Callable[..., nn.Layer]] = None) -> ConvNormActivation:
    return ConvNormActivation(in_channels, out_channels, kernel_size, stride, padding=(kernel_size - 1) // 2,
                              groups=groups, activation_layer=activation_layer)


class InvertedResidual(nn.Layer):
    """The stride-1 unit: half the channels pass through, the other half go through 1x1, 3x3
    depthwise and 1x1 convs; the halves are concatenated and shuffled."""

    def __init__(self, in_channels: int, out_channels: int, stride: int,
                 activation_layer: Optional[Callable[..., nn.Layer]] = nn.ReLU) -> None:
        super().__init__()
        half = out_channels // 2
        self._conv_pw = _conv_bn(in_channels // 2, half, 1, activation_layer=activation_layer)
        self._conv_dw = _conv_bn(half, half, 3, stride=stride, groups=half)
        self._conv_linear = _conv_bn(half, half, 1, activation_layer=activation_layer)

    def forward(self, inputs: Tensor) -> Tensor:
        half = inputs.shape[1] // 2
        x1, x2 = pycoll.split(inputs, num_or_sections=[half, half], axis=1)
        x2 = self._conv_linear(self._conv_dw(self._conv_pw(x2)))
        return F.channel_shuffle(pycoll.concat([x1, x2], axis=1), 2)


class InvertedResidualDS(nn.Layer):
    """The downsampling unit: two branches (3x3 depthwise + 1x1, and 1x1 + 3x3 depthwise + 1x1),
    both strided, concatenated and shuffled."""

    def __init__(self, in_channels: int, out_channels: int, stride: int,
                 activation_layer: Optional[Callable[..., nn.Layer]] = nn.ReLU) -> None:
        super().__init__()
        half = out_channels // 2
        self._conv_dw_1 = _conv_bn(in_channels, in_channels, 3, stride=stride, groups=in_channels)
        self._conv_linear_1 = _conv_bn(in_channels, half, 1, activation_layer=activation_layer)
        self._conv_pw_2 = _conv_bn(in_channels, half, 1, activation_layer=activation_layer)
        self._conv_dw_2 = _conv_bn(half, half, 3, stride=stride, groups=half)
        self._conv_linear_2 = _conv_bn(half, half, 1, activation_layer=activation_layer)

    def forward(self, inputs: Tensor) -> Tensor:
        x1 = self._conv_linear_1(self._conv_dw_1(inputs))
        x2 = self._conv_linear_2(self._conv_dw_2(self._conv_pw_2(inputs)))
        return F.channel_shuffle(pycoll.concat([x1, x2], axis=1), 2)


class ShuffleNetV2(nn.Layer):
    """ShuffleNetV2 at ``scale`` 0.25, 0.33, 0.5, 1.0, 1.5 or 2.0, with activation ``act`` ('relu',
    'swish' or None). ``with_pool=False`` leaves out the average pool, ``num_classes <= 0`` the
    linear head."""

    def __init__(self, scale: float = 1.0, act: Optional[str] = "relu", num_classes: int = 1000,
                 with_pool: bool = True) -> None:
        super().__init__()
        if scale not in _STAGE_OUT_CHANNELS:
            raise ValueError(f"ShuffleNetV2: scale must be one of {sorted(_STAGE_OUT_CHANNELS)}, got {scale!r}")
        self.scale = scale
        self.num_classes = num_classes
        self.with_pool = with_pool
        activation_layer = create_activation_layer(act)
        channels = _STAGE_OUT_CHANNELS[scale]
        self._conv1 = _conv_bn(3, channels[0], 3, stride=2, activation_layer=activation_layer)
        self._max_pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self._block_list = []
        for stage, repeats in enumerate(_STAGE_REPEATS):
            for i in range(repeats):
                if i == 0:
                    block = InvertedResidualDS(channels[stage], channels[stage + 1], 2, activation_layer)
                else:
                    block = InvertedResidual(channels[stage + 1], channels[stage + 1], 1, activation_layer)
                self._block_list.append(self.add_sublayer(f"{stage + 2}_{i + 1}", block))
        self._last_conv = _conv_bn(channels[-2], channels[-1], 1, activation_layer=activation_layer)
        if with_pool:
            self._pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self._out_c = channels[-1]
            self._fc = nn.Linear(channels[-1], num_classes)

    def forward(self, inputs: Tensor) -> Tensor:
        x = self._max_pool(self._conv1(inputs))
        for block in self._block_list:
            x = block(x)
        x = self._last_conv(x)
        if self.with_pool:
            x = self._pool2d_avg(x)
        if self.num_classes > 0:
            x = self._fc(pycoll.flatten(x, start_axis=1, stop_axis=-1))
        return x


def _shufflenet_v2(arch: str, pretrained: bool, scale: float, **kwargs: Any) -> ShuffleNetV2:
    refuse_pretrained(arch, pretrained)
    return ShuffleNetV2(scale=scale, **kwargs)


def shufflenet_v2_x0_25(pretrained: bool = False, **kwargs: Any) -> ShuffleNetV2:
    """``ShuffleNetV2(scale=0.25, **kwargs)``; ``pretrained=True`` is refused (pycoll downloads nothing)."""
    return _shufflenet_v2("shufflenet_v2_x0_25", pretrained, 0.25, **kwargs)


def shufflenet_v2_x0_33(pretrained: bool = False, **kwargs: Any) -> ShuffleNetV2:
    """``ShuffleNetV2(scale=0.33, **kwargs)``; ``pretrained=True`` is refused."""
    return _shufflenet_v2("shufflenet_v2_x0_33", pretrained, 0.33, **kwargs)


def shufflenet_v2_x0_5(pretrained: bool = False, **kwargs: Any) -> ShuffleNetV2:
    """``ShuffleNetV2(scale=0.5, **kwargs)``; ``pretrained=True`` is refused."""
    return _shufflenet_v2("shufflenet_v2_x0_5", pretrained, 0.5, **kwargs)


def shufflenet_v2_x1_0(pretrained: bool = False, **kwargs: Any) -> ShuffleNetV2:
    """``ShuffleNetV2(scale=1.0, **kwargs)``; ``pretrained=True`` is refused."""
    return _shufflenet_v2("shufflenet_v2_x1_0", pretrained, 1.0, **kwargs)


def shufflenet_v2_x1_5(pretrained: bool = False, **kwargs: Any) -> ShuffleNetV2:
    """``ShuffleNetV2(scale=1.5, **kwargs)``; ``pretrained=True`` is refused."""
    return _shufflenet_v2("shufflenet_v2_x1_5", pretrained, 1.5, **kwargs)


def shufflenet_v2_x2_0(pretrained: bool = False, **kwargs: Any) -> ShuffleNetV2:
    """``ShuffleNetV2(scale=2.0, **kwargs)``; ``pretrained=True`` is refused."""
    return _shufflenet_v2("shufflenet_v2_x2_0", pretrained, 2.0, **kwargs)


def shufflenet_v2_swish(pretrained: bool = False, **kwargs: Any) -> ShuffleNetV2:
    """``ShuffleNetV2(scale=1.0, act='swish', **kwargs)``; ``pretrained=True`` is refused."""
    return _shufflenet_v2("shufflenet_v2_swish", pretrained, 1.0, act="swish", **kwargs)
