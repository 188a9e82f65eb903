"""GoogLeNet (paddle.vision.models.GoogLeNet / googlenet): inception modules of bias-free convs and
two auxiliary heads, with paddle's layer names (_conv, _ince3a ... _ince5b, _fc_out, _conv_o1,
_fc_o1, _out1, ...). forward returns (out, out1, out2) like paddle's."""
from __future__ import annotations

from typing import Any, Tuple, Union, Sequence

import pycoll
from pycoll import nn
from pycoll.nn import ParamAttr
from pycoll.nn import functional as F
from pycoll.nn.initializer import Uniform
from pycoll.tensor import Tensor
from pycoll.vision.models._common import refuse_pretrained

# _ince3a ... _ince5b: input channels, then 1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5, pool projection
_INCEPTIONS = {"_ince3a": (192, 64, 96, 128, 16, 32, 32), "_ince3b": (256, 128, 128, 192, 32, 96, 64),
               "_ince4a": (480, 192, 96, 208, 16, 48, 64), "_ince4b": (512, 160, 112, 224, 24, 64, 64),
               "_ince4c": (512, 128, 128, 256, 24, 64, 64), "_ince4d": (512, 112, 144, 288, 32, 64, 64),
               "_ince4e": (528, 256, 160, 320, 32, 128, 128), "_ince5a": (832, 256, 160, 320, 32, 128, 128),
               "_ince5b": (832, 384, 192, 384, 48, 128, 128)}


def xavier(channels: int, filter_size: int) -> ParamAttr:
    """U(-s, s) with s = sqrt(3 / (filter_size^2 * channels)): paddle's GoogLeNet linear weights."""
    stdv = (3.0 / (filter_size ** 2 * channels)) ** 0.5
    return ParamAttr(initializer=Uniform(-stdv, stdv))


class ConvLayer(nn.Layer):
    """A bias-free Conv2D (``_conv``) with 'same' padding for odd ``filter_size``; no norm, no activation."""

    def __init__(self, num_channels: int, num_filters: int, filter_size: int,
                 stride: Union[int, Sequence[int]] = 1, groups: int = 1) -> None:
        super().__init__()
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride=stride,
                               padding=(filter_size - 1) // 2, groups=groups, bias_attr=False)

    def forward(self, inputs: Tensor) -> Tensor:
        return self._conv(inputs)


class Inception(nn.Layer):
    """1x1, 1x1 -> 3x3, 1x1 -> 5x5 and 3x3 max pool -> 1x1 branches, concatenated, then ReLU.
    ``output_channels`` is unused, as in paddle (the output has filter1 + filter3 + filter5 + proj
    channels)."""

    def __init__(self, input_channels: int, output_channels: int, filter1: int, filter3R: int, filter3: int,
                 filter5R: int, filter5: int, proj: int) -> None:
        super().__init__()
        self._conv1 = ConvLayer(input_channels, filter1, 1)
        self._conv3r = ConvLayer(input_channels, filter3R, 1)
        self._conv3 = ConvLayer(filter3R, filter3, 3)
        self._conv5r = ConvLayer(input_channels, filter5R, 1)
        self._conv5 = ConvLayer(filter5R, filter5, 5)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=1, padding=1)
        self._convprj = ConvLayer(input_channels, proj, 1)

    def forward(self, inputs: Tensor) -> Tensor:
        branches = [self._conv1(inputs), self._conv3(self._conv3r(inputs)), self._conv5(self._conv5r(inputs)),
                    self._convprj(self._pool(inputs))]
        return F.relu(pycoll.concat(branches, axis=1))


class GoogLeNet(nn.Layer):
    """GoogLeNet; forward returns (out, out1, out2): the main head on _ince5b and the auxiliary
    heads on _ince4a and _ince4d. With ``num_classes > 0`` the auxiliary heads flatten 128 x 3 x 3
    features, so the input must be about 224 x 224 (paddle's constraint). ``with_pool=False``
    leaves out the three pools, ``num_classes <= 0`` the heads (the outputs are then features)."""

    def __init__(self, num_classes: int = 1000, with_pool: bool = True) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.with_pool = with_pool
        self._conv = ConvLayer(3, 64, 7, 2)
        self._pool = nn.MaxPool2D(kernel_size=3, stride=2)
        self._conv_1 = ConvLayer(64, 64, 1)
        self._conv_2 = ConvLayer(64, 192, 3)
        for name, (in_channels, *filters) in _INCEPTIONS.items():
            setattr(self, name, Inception(in_channels, in_channels, *filters))
        if with_pool:
            self._pool_5 = nn.AdaptiveAvgPool2D(1)
            self._pool_o1 = nn.AvgPool2D(kernel_size=5, stride=3)
            self._pool_o2 = nn.AvgPool2D(kernel_size=5, stride=3)
        if num_classes > 0:
            self._drop = nn.Dropout(p=0.4, mode="downscale_in_infer")
            self._fc_out = nn.Linear(1024, num_classes, weight_attr=xavier(1024, 1))
            self._conv_o1 = ConvLayer(512, 128, 1)
            self._fc_o1 = nn.Linear(1152, 1024, weight_attr=xavier(2048, 1))
            self._drop_o1 = nn.Dropout(p=0.7, mode="downscale_in_infer")
            self._out1 = nn.Linear(1024, num_classes, weight_attr=xavier(1024, 1))
            self._conv_o2 = ConvLayer(528, 128, 1)
            self._fc_o2 = nn.Linear(1152, 1024, weight_attr=xavier(2048, 1))
            self._drop_o2 = nn.Dropout(p=0.7, mode="downscale_in_infer")
            self._out2 = nn.Linear(1024, num_classes, weight_attr=xavier(1024, 1))

    def forward(self, inputs: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
        x = self._pool(self._conv(inputs))
        x = self._pool(self._conv_2(self._conv_1(x)))
        x = self._pool(self._ince3b(self._ince3a(x)))
        ince4a = self._ince4a(x)
        ince4d = self._ince4d(self._ince4c(self._ince4b(ince4a)))
        x = self._pool(self._ince4e(ince4d))
        out, out1, out2 = self._ince5b(self._ince5a(x)), ince4a, ince4d
        if self.with_pool:
            out, out1, out2 = self._pool_5(out), self._pool_o1(out1), self._pool_o2(out2)
        if self.num_classes > 0:
            out = self._fc_out(pycoll.squeeze(self._drop(out), axis=[2, 3]))
            out1 = self._fc_o1(pycoll.flatten(self._conv_o1(out1), start_axis=1, stop_axis=-1))
            out1 = self._out1(self._drop_o1(F.relu(out1)))
            out2 = self._fc_o2(pycoll.flatten(self._conv_o2(out2), start_axis=1, stop_axis=-1))
            out2 = self._out2(self._drop_o2(out2))  # no ReLU on this head, as in paddle
        return out, out1, out2


def googlenet(pretrained: bool = False, **kwargs: Any) -> GoogLeNet:
    """``GoogLeNet(**kwargs)``; ``pretrained=True`` is refused (pycoll downloads nothing)."""
    refuse_pretrained("googlenet", pretrained)
    return GoogLeNet(**kwargs)
