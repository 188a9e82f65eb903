"""AlexNet (paddle.vision.models.AlexNet / alexnet), with paddle's layer names and its
U(-1/sqrt(fan_in), 1/sqrt(fan_in)) initialisation."""
from __future__ import annotations

import math
from typing import Any, Optional, Union, Sequence

import pycoll
from pycoll import nn
from pycoll.nn import ParamAttr
from pycoll.nn import functional as F
from pycoll.nn.initializer import Uniform
from pycoll.tensor import Tensor
from pycoll.vision.models._common import refuse_pretrained


def _uniform(fan_in: int) -> dict:
    stdv = 1.0 / math.sqrt(fan_in)
    return {"weight_attr": ParamAttr(initializer=Uniform(-stdv, stdv)),
            "bias_attr": ParamAttr(initializer=Uniform(-stdv, stdv))}


class ConvPoolLayer(nn.Layer):
    """Conv2D (``_conv``), an optional ReLU, then a 3x3 stride-2 max pool (``_pool``)."""

    def __init__(self, input_channels: int, output_channels: int, filter_size: Union[int, Sequence[int]],
                 stride: Union[int, Sequence[int]], padding: Union[int, Sequence[int]], fan_in: int,
                 groups: int = 1, act: Optional[str] = None) -> None:
        super().__init__()
        self.relu = nn.ReLU() if act == "relu" else None
        self._conv = nn.Conv2D(input_channels, output_channels, filter_size, stride=stride, padding=padding,
                               groups=groups, **_uniform(fan_in))
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2, padding=0)

    def forward(self, inputs: Tensor) -> Tensor:
        x = self._conv(inputs)
        if self.relu is not None:
            x = self.relu(x)
        return self._pool(x)


class AlexNet(nn.Layer):
    """AlexNet for [N, 3, 224, 224] input; ``num_classes <= 0`` leaves out the classifier."""

    def __init__(self, num_classes: int = 1000) -> None:
        super().__init__()
        self.num_classes = num_classes
        self._conv1 = ConvPoolLayer(3, 64, 11, 4, 2, 3 * 11 * 11, act="relu")
        self._conv2 = ConvPoolLayer(64, 192, 5, 1, 2, 64 * 5 * 5, act="relu")
        self._conv3 = nn.Conv2D(192, 384, 3, stride=1, padding=1, **_uniform(192 * 3 * 3))
        self._conv4 = nn.Conv2D(384, 256, 3, stride=1, padding=1, **_uniform(384 * 3 * 3))
        self._conv5 = ConvPoolLayer(256, 256, 3, 1, 1, 256 * 3 * 3, act="relu")
        if num_classes > 0:
            fan_in = 256 * 6 * 6  # paddle draws all three linear layers with this bound
            self._drop1 = nn.Dropout(p=0.5, mode="downscale_in_infer")
            self._fc6 = nn.Linear(256 * 6 * 6, 4096, **_uniform(fan_in))
            self._drop2 = nn.Dropout(p=0.5, mode="downscale_in_infer")
            self._fc7 = nn.Linear(4096, 4096, **_uniform(fan_in))
            self._fc8 = nn.Linear(4096, num_classes, **_uniform(fan_in))

    def forward(self, inputs: Tensor) -> Tensor:
        x = self._conv2(self._conv1(inputs))
        x = F.relu(self._conv3(x))
        x = F.relu(self._conv4(x))
        x = self._conv5(x)
        if self.num_classes > 0:
            x = self._drop1(pycoll.flatten(x, start_axis=1, stop_axis=-1))
            x = self._drop2(F.relu(self._fc6(x)))
            x = self._fc8(F.relu(self._fc7(x)))
        return x


def alexnet(pretrained: bool = False, **kwargs: Any) -> AlexNet:
    """``AlexNet(**kwargs)``; ``pretrained=True`` is refused (pycoll downloads nothing)."""
    refuse_pretrained("alexnet", pretrained)
    return AlexNet(**kwargs)
