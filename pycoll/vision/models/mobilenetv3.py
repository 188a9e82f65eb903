"""MobileNetV3 (paddle.vision.models.MobileNetV3Small / MobileNetV3Large, mobilenet_v3_small /
mobilenet_v3_large): inverted residuals with squeeze-and-excitation and hardswish, paddle's
sublayer names (conv, blocks.N.expand_conv / bottleneck_conv / mid_se / linear_conv, lastconv,
classifier.0 / .3) and its batch norm (epsilon 1e-3, momentum 0.99)."""
from __future__ import annotations

from functools import partial
from typing import Any, Callable, List, Optional

import pycoll
from pycoll import nn
from pycoll.tensor import Tensor
from pycoll.vision.models._common import ConvNormActivation, make_divisible, refuse_pretrained

_ACTIVATIONS = {None: None, "relu": nn.ReLU, "hardswish": nn.Hardswish}


class SqueezeExcitation(nn.Layer):
    """Average pool, 1x1 conv ``fc1``, ``activation``, 1x1 conv ``fc2``, ``scale_activation``: a
    per-channel gate that multiplies the input."""

    def __init__(self, input_channels: int, squeeze_channels: int,
                 activation: Callable[..., nn.Layer] = nn.ReLU,
                 scale_activation: Callable[..., nn.Layer] = nn.Sigmoid) -> None:
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2D(1)
        self.fc1 = nn.Conv2D(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2D(squeeze_channels, input_channels, 1)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def forward(self, input: Tensor) -> Tensor:
        scale = self.fc2(self.activation(self.fc1(self.avgpool(input))))
        return self.scale_activation(scale) * input


class InvertedResidualConfig:
    """One block's settings, channels scaled by ``scale`` and rounded to multiples of 8;
    ``activation`` is None, 'relu' or 'hardswish'."""

    def __init__(self, in_channels: int, kernel: int, expanded_channels: int, out_channels: int, use_se: bool,
                 activation: Optional[str], stride: int, scale: float = 1.0) -> None:
        if activation not in _ACTIVATIONS:
            raise ValueError(f"InvertedResidualConfig: activation must be None, 'relu' or 'hardswish', "
                             f"got {activation!r}")
        self.in_channels = self.adjust_channels(in_channels, scale=scale)
        self.kernel = kernel
        self.expanded_channels = self.adjust_channels(expanded_channels, scale=scale)
        self.out_channels = self.adjust_channels(out_channels, scale=scale)
        self.use_se = use_se
        self.activation_layer = _ACTIVATIONS[activation]
        self.stride = stride

    @staticmethod
    def adjust_channels(channels: float, scale: float = 1.0) -> int:
        return make_divisible(channels * scale, 8)


class InvertedResidual(nn.Layer):
    """1x1 expansion (when the channels grow), depthwise ``filter_size`` conv, optional
    squeeze-and-excitation (hardsigmoid gate), 1x1 linear projection; the input is added back when
    the stride is 1 and the channels agree."""

    def __init__(self, in_channels: int, expanded_channels: int, out_channels: int, filter_size: int, stride: int,
                 use_se: bool, activation_layer: Optional[Callable[..., nn.Layer]],
                 norm_layer: Callable[..., nn.Layer]) -> None:
        super().__init__()
        self.use_res_connect = stride == 1 and in_channels == out_channels
        self.use_se = use_se
        self.expand = in_channels != expanded_channels
        if self.expand:
            self.expand_conv = ConvNormActivation(in_channels, expanded_channels, kernel_size=1, padding=0,
                                                  norm_layer=norm_layer, activation_layer=activation_layer)
        self.bottleneck_conv = ConvNormActivation(expanded_channels, expanded_channels, kernel_size=filter_size,
                                                  stride=stride, padding=(filter_size - 1) // 2,
                                                  groups=expanded_channels, norm_layer=norm_layer,
                                                  activation_layer=activation_layer)
        if use_se:
            self.mid_se = SqueezeExcitation(expanded_channels, make_divisible(expanded_channels // 4),
                                            scale_activation=nn.Hardsigmoid)
        self.linear_conv = ConvNormActivation(expanded_channels, out_channels, kernel_size=1, padding=0,
                                              norm_layer=norm_layer, activation_layer=None)

    def forward(self, x: Tensor) -> Tensor:
        identity = x
        if self.expand:
            x = self.expand_conv(x)
        x = self.bottleneck_conv(x)
        if self.use_se:
            x = self.mid_se(x)
        x = self.linear_conv(x)
        return identity + x if self.use_res_connect else x


class MobileNetV3(nn.Layer):
    """The MobileNetV3 trunk over a list of InvertedResidualConfig: stem conv (hardswish), the
    blocks, a 1x1 conv to 6x the last block's input channels, then (``with_pool``) an average pool
    and (``num_classes > 0``) Linear -> hardswish -> dropout 0.2 -> Linear with ``last_channel``
    hidden units."""

    def __init__(self, config: List[InvertedResidualConfig], last_channel: int, scale: float = 1.0,
                 num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__()
        if not config:
            raise ValueError("MobileNetV3: config must hold at least one InvertedResidualConfig, got an empty list")
        self.config = config
        self.scale = scale
        self.last_channel = last_channel
        self.num_classes = num_classes
        self.with_pool = with_pool
        self.firstconv_in_channels = config[0].in_channels
        self.lastconv_in_channels = config[-1].in_channels
        self.lastconv_out_channels = self.lastconv_in_channels * 6
        norm_layer = partial(nn.BatchNorm2D, epsilon=0.001, momentum=0.99)
        self.conv = ConvNormActivation(3, self.firstconv_in_channels, kernel_size=3, stride=2, padding=1,
                                       norm_layer=norm_layer, activation_layer=nn.Hardswish)
        self.blocks = nn.Sequential(*[
            InvertedResidual(cfg.in_channels, cfg.expanded_channels, cfg.out_channels, cfg.kernel, cfg.stride,
                             cfg.use_se, cfg.activation_layer, norm_layer) for cfg in config])
        self.lastconv = ConvNormActivation(self.lastconv_in_channels, self.lastconv_out_channels, kernel_size=1,
                                           padding=0, norm_layer=norm_layer, activation_layer=nn.Hardswish)
        if with_pool:
            self.avgpool = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.classifier = nn.Sequential(nn.Linear(self.lastconv_out_channels, last_channel), nn.Hardswish(),
                                            nn.Dropout(p=0.2), nn.Linear(last_channel, num_classes))

    def forward(self, x: Tensor) -> Tensor:
        x = self.lastconv(self.blocks(self.conv(x)))
        if self.with_pool:
            x = self.avgpool(x)
        if self.num_classes > 0:
            x = self.classifier(pycoll.flatten(x, 1))
        return x


# in, kernel, expanded, out, squeeze-and-excitation, activation, stride (before scaling)
_SMALL = [(16, 3, 16, 16, True, "relu", 2), (16, 3, 72, 24, False, "relu", 2), (24, 3, 88, 24, False, "relu", 1),
          (24, 5, 96, 40, True, "hardswish", 2), (40, 5, 240, 40, True, "hardswish", 1),
          (40, 5, 240, 40, True, "hardswish", 1), (40, 5, 120, 48, True, "hardswish", 1),
          (48, 5, 144, 48, True, "hardswish", 1), (48, 5, 288, 96, True, "hardswish", 2),
          (96, 5, 576, 96, True, "hardswish", 1), (96, 5, 576, 96, True, "hardswish", 1)]
_LARGE = [(16, 3, 16, 16, False, "relu", 1), (16, 3, 64, 24, False, "relu", 2), (24, 3, 72, 24, False, "relu", 1),
          (24, 5, 72, 40, True, "relu", 2), (40, 5, 120, 40, True, "relu", 1), (40, 5, 120, 40, True, "relu", 1),
          (40, 3, 240, 80, False, "hardswish", 2), (80, 3, 200, 80, False, "hardswish", 1),
          (80, 3, 184, 80, False, "hardswish", 1), (80, 3, 184, 80, False, "hardswish", 1),
          (80, 3, 480, 112, True, "hardswish", 1), (112, 3, 672, 112, True, "hardswish", 1),
          (112, 5, 672, 160, True, "hardswish", 2), (160, 5, 960, 160, True, "hardswish", 1),
          (160, 5, 960, 160, True, "hardswish", 1)]


class MobileNetV3Small(MobileNetV3):
    """MobileNetV3-Small with width multiplier ``scale``."""

    def __init__(self, scale: float = 1.0, num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__([InvertedResidualConfig(*row, scale=scale) for row in _SMALL],
                         last_channel=make_divisible(1024 * scale, 8), scale=scale, num_classes=num_classes,
                         with_pool=with_pool)


class MobileNetV3Large(MobileNetV3):
    """MobileNetV3-Large with width multiplier ``scale``."""

    def __init__(self, scale: float = 1.0, num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__([InvertedResidualConfig(*row, scale=scale) for row in _LARGE],
                         last_channel=make_divisible(1280 * scale, 8), scale=scale, num_classes=num_classes,
                         with_pool=with_pool)


def mobilenet_v3_small(pretrained: bool = False, scale: float = 1.0, **kwargs: Any) -> MobileNetV3Small:
    """``MobileNetV3Small(scale, **kwargs)``; ``pretrained=True`` is refused (pycoll downloads nothing)."""
    refuse_pretrained(f"mobilenet_v3_small_x{scale}", pretrained)
    return MobileNetV3Small(scale=scale, **kwargs)


def mobilenet_v3_large(pretrained: bool = False, scale: float = 1.0, **kwargs: Any) -> MobileNetV3Large:
    """``MobileNetV3Large(scale, **kwargs)``; ``pretrained=True`` is refused (pycoll downloads nothing)."""
    refuse_pretrained(f"mobilenet_v3_large_x{scale}", pretrained)
    return MobileNetV3Large(scale=scale, **kwargs)
