"""DenseNet (paddle.vision.models.DenseNet, densenet121/161/169/201/264): dense blocks of
BN-ReLU-conv layers whose outputs are concatenated onto their inputs, joined by 1x1-conv + 2x2
average-pool transitions, with paddle's layer names (conv1_func, db_conv_N.convN_M,
tr_convN_blk, batch_norm, out)."""
from __future__ import annotations

import math
from typing import Any, Union, Sequence

import pycoll
from pycoll import nn
from pycoll.nn import ParamAttr
from pycoll.nn.initializer import Uniform
from pycoll.tensor import Tensor
from pycoll.vision.models._common import refuse_pretrained

# layers -> (stem channels, growth rate, layers per dense block)
_SPECS = {121: (64, 32, [6, 12, 24, 16]), 161: (96, 48, [6, 12, 36, 24]), 169: (64, 32, [6, 12, 32, 32]),
          201: (64, 32, [6, 12, 48, 32]), 264: (64, 32, [6, 12, 64, 48])}


class BNACConvLayer(nn.Layer):
    """Batch norm with activation ``act`` (``_batch_norm``), then a bias-free Conv2D (``_conv``)."""

    def __init__(self, num_channels: int, num_filters: int, filter_size: Union[int, Sequence[int]],
                 stride: Union[int, Sequence[int]] = 1, pad: Union[int, Sequence[int]] = 0, groups: int = 1,
                 act: str = "relu") -> None:
        super().__init__()
        self._batch_norm = nn.BatchNorm(num_channels, act=act)
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride=stride, padding=pad, groups=groups,
                               bias_attr=False)

    def forward(self, input: Tensor) -> Tensor:
        return self._conv(self._batch_norm(input))


class ConvBNLayer(nn.Layer):
    """A bias-free Conv2D (``_conv``), then batch norm with activation ``act`` (``_batch_norm``)."""

    def __init__(self, num_channels: int, num_filters: int, filter_size: Union[int, Sequence[int]],
                 stride: Union[int, Sequence[int]] = 1, pad: Union[int, Sequence[int]] = 0, groups: int = 1,
                 act: str = "relu") -> None:
        super().__init__()
        self._conv = nn.Conv2D(num_channels, num_filters, filter_size, stride=stride, padding=pad, groups=groups,
                               bias_attr=False)
        self._batch_norm = nn.BatchNorm(num_filters, act=act)

    def forward(self, input: Tensor) -> Tensor:
        return self._batch_norm(self._conv(input))


class DenseLayer(nn.Layer):
    """BN-ReLU-1x1 conv to ``bn_size * growth_rate`` channels, BN-ReLU-3x3 conv to ``growth_rate``,
    optional dropout; the result is concatenated after the input's channels."""

    def __init__(self, num_channels: int, growth_rate: int, bn_size: int, dropout: float) -> None:
        super().__init__()
        self.dropout = dropout
        self.bn_ac_func1 = BNACConvLayer(num_channels, bn_size * growth_rate, 1, pad=0, stride=1)
        self.bn_ac_func2 = BNACConvLayer(bn_size * growth_rate, growth_rate, 3, pad=1, stride=1)
        if dropout:
            self.dropout_func = nn.Dropout(p=dropout, mode="downscale_in_infer")

    def forward(self, input: Tensor) -> Tensor:
        conv = self.bn_ac_func2(self.bn_ac_func1(input))
        if self.dropout:
            conv = self.dropout_func(conv)
        return pycoll.concat([input, conv], axis=1)


class DenseBlock(nn.Layer):
    """``num_layers`` DenseLayers, registered as ``{name}_1`` ... ``{name}_{num_layers}``."""

    def __init__(self, num_channels: int, num_layers: int, bn_size: int, growth_rate: int, dropout: float,
                 name: str = "") -> None:
        super().__init__()
        self.dropout = dropout
        self.dense_layer_func = []
        for i in range(num_layers):
            layer = DenseLayer(num_channels + i * growth_rate, growth_rate, bn_size, dropout)
            self.dense_layer_func.append(self.add_sublayer(f"{name}_{i + 1}", layer))

    def forward(self, input: Tensor) -> Tensor:
        for layer in self.dense_layer_func:
            input = layer(input)
        return input


class TransitionLayer(nn.Layer):
    """BN-ReLU-1x1 conv to ``num_output_features`` channels, then a 2x2 stride-2 average pool."""

    def __init__(self, num_channels: int, num_output_features: int) -> None:
        super().__init__()
        self.conv_ac_func = BNACConvLayer(num_channels, num_output_features, 1, pad=0, stride=1)
        self.pool2d_avg = nn.AvgPool2D(kernel_size=2, stride=2, padding=0)

    def forward(self, input: Tensor) -> Tensor:
        return self.pool2d_avg(self.conv_ac_func(input))


class DenseNet(nn.Layer):
    """DenseNet of ``layers`` 121, 161, 169, 201 or 264, with bottleneck width ``bn_size`` x the
    growth rate and ``dropout`` after each dense layer. ``with_pool=False`` leaves out the final
    average pool (paddle 3.3.1 then fails in forward; pycoll returns the features, through the
    head when ``num_classes > 0``), ``num_classes <= 0`` the linear head ``out``."""

    def __init__(self, layers: int = 121, bn_size: int = 4, dropout: float = 0.0, num_classes: int = 1000,
                 with_pool: bool = True) -> None:
        super().__init__()
        if layers not in _SPECS:
            raise ValueError(f"DenseNet: layers must be one of {sorted(_SPECS)}, got {layers!r}")
        self.num_classes = num_classes
        self.with_pool = with_pool
        num_features, growth_rate, block_config = _SPECS[layers]
        self.conv1_func = ConvBNLayer(3, num_features, 7, stride=2, pad=3, act="relu")
        self.pool2d_max = nn.MaxPool2D(kernel_size=3, stride=2, padding=1)
        self.block_config = block_config
        self.dense_block_func_list = []
        self.transition_func_list = []
        for i, num_layers in enumerate(block_config):
            block = DenseBlock(num_features, num_layers, bn_size, growth_rate, dropout, name=f"conv{i + 2}")
            self.dense_block_func_list.append(self.add_sublayer(f"db_conv_{i + 2}", block))
            num_features += num_layers * growth_rate
            if i != len(block_config) - 1:
                transition = TransitionLayer(num_features, num_features // 2)
                self.transition_func_list.append(self.add_sublayer(f"tr_conv{i + 2}_blk", transition))
                num_features //= 2
        self.batch_norm = nn.BatchNorm(num_features, act="relu")
        if with_pool:
            self.pool2d_avg = nn.AdaptiveAvgPool2D(1)
        if num_classes > 0:
            stdv = 1.0 / math.sqrt(num_features)
            self.out = nn.Linear(num_features, num_classes, weight_attr=ParamAttr(initializer=Uniform(-stdv, stdv)))

    def forward(self, input: Tensor) -> Tensor:
        y = self.pool2d_max(self.conv1_func(input))
        for i, block in enumerate(self.dense_block_func_list):
            y = block(y)
            if i < len(self.transition_func_list):
                y = self.transition_func_list[i](y)
        y = self.batch_norm(y)
        if self.with_pool:
            y = self.pool2d_avg(y)
        if self.num_classes > 0:
            y = self.out(pycoll.flatten(y, start_axis=1, stop_axis=-1))
        return y


def _densenet(arch: str, layers: int, pretrained: bool, **kwargs: Any) -> DenseNet:
    refuse_pretrained(arch, pretrained)
    return DenseNet(layers=layers, **kwargs)


def densenet121(pretrained: bool = False, **kwargs: Any) -> DenseNet:
    """``DenseNet(layers=121, **kwargs)``; ``pretrained=True`` is refused (pycoll downloads nothing)."""
    return _densenet("densenet121", 121, pretrained, **kwargs)


def densenet161(pretrained: bool = False, **kwargs: Any) -> DenseNet:
    """``DenseNet(layers=161, **kwargs)``; ``pretrained=True`` is refused."""
    return _densenet("densenet161", 161, pretrained, **kwargs)


def densenet169(pretrained: bool = False, **kwargs: Any) -> DenseNet:
    """``DenseNet(layers=169, **kwargs)``; ``pretrained=True`` is refused."""
    return _densenet("densenet169", 169, pretrained, **kwargs)


def densenet201(pretrained: bool = False, **kwargs: Any) -> DenseNet:
    """``DenseNet(layers=201, **kwargs)``; ``pretrained=True`` is refused."""
    return _densenet("densenet201", 201, pretrained, **kwargs)


def densenet264(pretrained: bool = False, **kwargs: Any) -> DenseNet:
    """``DenseNet(layers=264, **kwargs)``; ``pretrained=True`` is refused."""
    return _densenet("densenet264", 264, pretrained, **kwargs)
