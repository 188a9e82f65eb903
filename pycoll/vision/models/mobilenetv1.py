"""MobileNetV1 (paddle.vision.models.MobileNetV1 / mobilenet_v1), paddle's sublayer names
(conv1, conv2_1 ... conv6, each a depthwise and a pointwise ConvNormActivation)."""
from __future__ import annotations

from typing import Any

import pycoll
from pycoll import nn
from pycoll.tensor import Tensor
from pycoll.vision.models._common import ConvNormActivation, refuse_pretrained

# name, in channels, depthwise channels, pointwise channels, stride (before scaling)
_BLOCKS = ([("conv2_1", 32, 32, 64, 1), ("conv2_2", 64, 64, 128, 2), ("conv3_1", 128, 128, 128, 1),
            ("conv3_2", 128, 128, 256, 2), ("conv4_1", 256, 256, 256, 1), ("conv4_2", 256, 256, 512, 2)]
           + [(f"conv5_{i}", 512, 512, 512, 1) for i in range(1, 6)]
           + [("conv5_6", 512, 512, 1024, 2), ("conv6", 1024, 1024, 1024, 1)])


class DepthwiseSeparable(nn.Layer):
    """A 3x3 depthwise ConvNormActivation (``_depthwise_conv``) then a 1x1 one (``_pointwise_conv``)."""

    def __init__(self, in_channels: int, out_channels1: int, out_channels2: int, num_groups: int, stride: int,
                 scale: float) -> None:
        super().__init__()
        self._depthwise_conv = ConvNormActivation(in_channels, int(out_channels1 * scale), kernel_size=3,
                                                  stride=stride, padding=1, groups=int(num_groups * scale))
        self._pointwise_conv = ConvNormActivation(int(out_channels1 * scale), int(out_channels2 * scale),
                                                  kernel_size=1, stride=1, padding=0)

    def forward(self, x: Tensor) -> Tensor:
        return self._pointwise_conv(self._depthwise_conv(x))


class MobileNetV1(nn.Layer):
    """MobileNetV1 with channel multiplier ``scale``; ``with_pool`` / ``num_classes`` as ResNet's."""

    def __init__(self, scale: float = 1.0, num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__()
        self.scale = scale
        self.num_classes = num_classes
        self.with_pool = with_pool
        self.conv1 = ConvNormActivation(3, int(32 * scale), kernel_size=3, stride=2, padding=1)
        self.dwsl = [self.add_sublayer(name, DepthwiseSeparable(int(cin * scale), c1, c2, c1, stride, scale))
                     for name, cin, c1, c2, stride in _BLOCKS]
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.fc = nn.Linear(int(1024 * scale), num_classes)

    def forward(self, x: Tensor) -> Tensor:
        x = self.conv1(x)
        for block in self.dwsl:
            x = block(x)
        if self.with_pool:
            x = self.pool2d_avg(x)
        if self.num_classes > 0:
            x = self.fc(pycoll.flatten(x, 1))
        return x


def mobilenet_v1(pretrained: bool = False, scale: float = 1.0, **kwargs: Any) -> MobileNetV1:
    """``MobileNetV1(scale, **kwargs)``; ``pretrained=True`` is refused (pycoll downloads nothing)."""
    refuse_pretrained(f"mobilenetv1_{scale}", pretrained)
    return MobileNetV1(scale=scale, **kwargs)
