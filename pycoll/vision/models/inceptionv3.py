"""InceptionV3 (paddle.vision.models.InceptionV3 / inception_v3): a conv stem and eleven inception
blocks (A x3, B, C x4, D, E x2) of conv + batch norm + ReLU units, with paddle's layer names
(inception_stem.conv_1a_3x3 ..., inception_block_list.N.branch*, fc). The input must be at least
75 x 75."""
from __future__ import annotations

import math
from typing import Any, List, Tuple, Union

import pycoll
from pycoll import nn
from pycoll.nn import ParamAttr
from pycoll.nn.initializer import Uniform
from pycoll.tensor import Tensor
from pycoll.vision.models._common import ConvNormActivation, refuse_pretrained

Size = Union[int, Tuple[int, int]]


def _unit(in_channels: int, out_channels: int, kernel_size: Size, stride: int = 1,
          padding: Size = 0) -> ConvNormActivation:
    """Conv2D (no bias) + BatchNorm2D + ReLU, paddle's building block here."""
    return ConvNormActivation(in_channels, out_channels, kernel_size, stride=stride, padding=padding)


def _average_pool() -> nn.AvgPool2D:
    """The 3x3 stride-1 average pool of the A, C and E blocks; zero padding counts in the mean."""
    return nn.AvgPool2D(kernel_size=3, stride=1, padding=1, exclusive=False)


def _chain(x: Tensor, units: List[nn.Layer]) -> Tensor:
    for unit in units:
        x = unit(x)
    return x


class InceptionStem(nn.Layer):
    """Three 3x3 convs, max pool, 1x1 and 3x3 convs, max pool: 3 -> 192 channels."""

    def __init__(self) -> None:
        super().__init__()
        self.conv_1a_3x3 = _unit(3, 32, 3, stride=2)
        self.conv_2a_3x3 = _unit(32, 32, 3)
        self.conv_2b_3x3 = _unit(32, 64, 3, padding=1)
        self.max_pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)
        self.conv_3b_1x1 = _unit(64, 80, 1)
        self.conv_4a_3x3 = _unit(80, 192, 3)

    def forward(self, x: Tensor) -> Tensor:
        x = self.max_pool(_chain(x, [self.conv_1a_3x3, self.conv_2a_3x3, self.conv_2b_3x3]))
        return self.max_pool(_chain(x, [self.conv_3b_1x1, self.conv_4a_3x3]))


class InceptionA(nn.Layer):
    """1x1 | 1x1 -> 5x5 | 1x1 -> 3x3 -> 3x3 | avg pool -> 1x1 (``pool_features``): 224 + pool_features
    channels."""

    def __init__(self, num_channels: int, pool_features: int) -> None:
        super().__init__()
        self.branch1x1 = _unit(num_channels, 64, 1)
        self.branch5x5_1 = _unit(num_channels, 48, 1)
        self.branch5x5_2 = _unit(48, 64, 5, padding=2)
        self.branch3x3dbl_1 = _unit(num_channels, 64, 1)
        self.branch3x3dbl_2 = _unit(64, 96, 3, padding=1)
        self.branch3x3dbl_3 = _unit(96, 96, 3, padding=1)
        self.branch_pool = _average_pool()
        self.branch_pool_conv = _unit(num_channels, pool_features, 1)

    def forward(self, x: Tensor) -> Tensor:
        return pycoll.concat([self.branch1x1(x), _chain(x, [self.branch5x5_1, self.branch5x5_2]),
                              _chain(x, [self.branch3x3dbl_1, self.branch3x3dbl_2, self.branch3x3dbl_3]),
                              self.branch_pool_conv(self.branch_pool(x))], axis=1)


class InceptionB(nn.Layer):
    """Grid reduction: strided 3x3 | 1x1 -> 3x3 -> strided 3x3 | strided max pool."""

    def __init__(self, num_channels: int) -> None:
        super().__init__()
        self.branch3x3 = _unit(num_channels, 384, 3, stride=2)
        self.branch3x3dbl_1 = _unit(num_channels, 64, 1)
        self.branch3x3dbl_2 = _unit(64, 96, 3, padding=1)
        self.branch3x3dbl_3 = _unit(96, 96, 3, stride=2)
        self.branch_pool = nn.MaxPool2D(kernel_size=3, stride=2)

    def forward(self, x: Tensor) -> Tensor:
        return pycoll.concat([self.branch3x3(x),
                              _chain(x, [self.branch3x3dbl_1, self.branch3x3dbl_2, self.branch3x3dbl_3]),
                              self.branch_pool(x)], axis=1)


class InceptionC(nn.Layer):
    """Factorised 7x7 convolutions (1x7 and 7x1) through ``channels_7x7`` channels: 768 out."""

    def __init__(self, num_channels: int, channels_7x7: int) -> None:
        super().__init__()
        c = channels_7x7
        self.branch1x1 = _unit(num_channels, 192, 1)
        self.branch7x7_1 = _unit(num_channels, c, 1)
        self.branch7x7_2 = _unit(c, c, (1, 7), padding=(0, 3))
        self.branch7x7_3 = _unit(c, 192, (7, 1), padding=(3, 0))
        self.branch7x7dbl_1 = _unit(num_channels, c, 1)
        self.branch7x7dbl_2 = _unit(c, c, (7, 1), padding=(3, 0))
        self.branch7x7dbl_3 = _unit(c, c, (1, 7), padding=(0, 3))
        self.branch7x7dbl_4 = _unit(c, c, (7, 1), padding=(3, 0))
        self.branch7x7dbl_5 = _unit(c, 192, (1, 7), padding=(0, 3))
        self.branch_pool = _average_pool()
        self.branch_pool_conv = _unit(num_channels, 192, 1)

    def forward(self, x: Tensor) -> Tensor:
        return pycoll.concat([
            self.branch1x1(x), _chain(x, [self.branch7x7_1, self.branch7x7_2, self.branch7x7_3]),
            _chain(x, [self.branch7x7dbl_1, self.branch7x7dbl_2, self.branch7x7dbl_3, self.branch7x7dbl_4,
                       self.branch7x7dbl_5]),
            self.branch_pool_conv(self.branch_pool(x))], axis=1)


class InceptionD(nn.Layer):
    """Grid reduction: 1x1 -> strided 3x3 | 1x1 -> 1x7 -> 7x1 -> strided 3x3 | strided max pool."""

    def __init__(self, num_channels: int) -> None:
        super().__init__()
        self.branch3x3_1 = _unit(num_channels, 192, 1)
        self.branch3x3_2 = _unit(192, 320, 3, stride=2)
        self.branch7x7x3_1 = _unit(num_channels, 192, 1)
        self.branch7x7x3_2 = _unit(192, 192, (1, 7), padding=(0, 3))
        self.branch7x7x3_3 = _unit(192, 192, (7, 1), padding=(3, 0))
        self.branch7x7x3_4 = _unit(192, 192, 3, stride=2)
        self.branch_pool = nn.MaxPool2D(kernel_size=3, stride=2)

    def forward(self, x: Tensor) -> Tensor:
        return pycoll.concat([
            _chain(x, [self.branch3x3_1, self.branch3x3_2]),
            _chain(x, [self.branch7x7x3_1, self.branch7x7x3_2, self.branch7x7x3_3, self.branch7x7x3_4]),
            self.branch_pool(x)], axis=1)


class InceptionE(nn.Layer):
    """1x1 | 1x1 -> (1x3, 3x1) | 1x1 -> 3x3 -> (1x3, 3x1) | avg pool -> 1x1: 2048 channels."""

    def __init__(self, num_channels: int) -> None:
        super().__init__()
        self.branch1x1 = _unit(num_channels, 320, 1)
        self.branch3x3_1 = _unit(num_channels, 384, 1)
        self.branch3x3_2a = _unit(384, 384, (1, 3), padding=(0, 1))
        self.branch3x3_2b = _unit(384, 384, (3, 1), padding=(1, 0))
        self.branch3x3dbl_1 = _unit(num_channels, 448, 1)
        self.branch3x3dbl_2 = _unit(448, 384, 3, padding=1)
        self.branch3x3dbl_3a = _unit(384, 384, (1, 3), padding=(0, 1))
        self.branch3x3dbl_3b = _unit(384, 384, (3, 1), padding=(1, 0))
        self.branch_pool = _average_pool()
        self.branch_pool_conv = _unit(num_channels, 192, 1)

    def forward(self, x: Tensor) -> Tensor:
        b3 = self.branch3x3_1(x)
        b3dbl = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
        return pycoll.concat([self.branch1x1(x), self.branch3x3_2a(b3), self.branch3x3_2b(b3),
                              self.branch3x3dbl_3a(b3dbl), self.branch3x3dbl_3b(b3dbl),
                              self.branch_pool_conv(self.branch_pool(x))], axis=1)


class InceptionV3(nn.Layer):
    """InceptionV3 for inputs of at least 75 x 75. ``with_pool=False`` leaves out the final
    average pool (the head reshapes the features to [-1, 2048], as paddle does: one row per sample
    only where the feature map is 1 x 1), ``num_classes <= 0`` the dropout + linear head ``fc``."""

    def __init__(self, num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.with_pool = with_pool
        self.layers_config = {"inception_a": [[192, 256, 288], [32, 64, 64]], "inception_b": [288],
                              "inception_c": [[768, 768, 768, 768], [128, 160, 160, 192]], "inception_d": [768],
                              "inception_e": [1280, 2048]}
        cfg = self.layers_config
        self.inception_stem = InceptionStem()
        blocks = [InceptionA(c, p) for c, p in zip(*cfg["inception_a"])]
        blocks += [InceptionB(c) for c in cfg["inception_b"]]
        blocks += [InceptionC(c, c7) for c, c7 in zip(*cfg["inception_c"])]
        blocks += [InceptionD(c) for c in cfg["inception_d"]]
        blocks += [InceptionE(c) for c in cfg["inception_e"]]
        self.inception_block_list = nn.LayerList(blocks)
        if with_pool:
            self.avg_pool = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            self.dropout = nn.Dropout(p=0.2, mode="downscale_in_infer")
            stdv = 1.0 / math.sqrt(2048.0)
            self.fc = nn.Linear(2048, num_classes, weight_attr=ParamAttr(initializer=Uniform(-stdv, stdv)))

    def forward(self, x: Tensor) -> Tensor:
        x = _chain(self.inception_stem(x), list(self.inception_block_list))
        if self.with_pool:
            x = self.avg_pool(x)
        if self.num_classes > 0:
            x = self.fc(self.dropout(pycoll.reshape(x, [-1, 2048])))
        return x


def inception_v3(pretrained: bool = False, **kwargs: Any) -> InceptionV3:
    """``InceptionV3(**kwargs)``; ``pretrained=True`` is refused (pycoll downloads nothing)."""
    refuse_pretrained("inception_v3", pretrained)
    return InceptionV3(**kwargs)
