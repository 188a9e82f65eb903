"""What the model zoo's files share: the Conv2D + norm + activation block (paddle.vision.ops'
ConvNormActivation), the channel rounding MobileNet uses, and the refusal of pretrained weights."""
from __future__ import annotations

from typing import Callable, Optional, Union, Sequence

from pycoll import nn


def refuse_pretrained(arch: str, pretrained: bool) -> None:
    """pycoll downloads nothing: ``pretrained=True`` is refused with the way to load weights by hand."""
    if pretrained:
        raise ValueError(
            f"{arch}: pretrained=True needs weights downloaded from the internet, which pycoll never does; "
            f"build the model with pretrained=False and load a paddle .pdparams file you have yourself: "
            f"model.set_state_dict(pycoll.load(path))")


def make_divisible(value: float, divisor: int = 8, min_value: Optional[int] = None) -> int:
    """``value`` rounded to the nearest multiple of ``divisor`` (at least ``min_value``), never more than
    10% below it: the channel counts of paddle's MobileNets at a given scale."""
    if min_value is None:
        min_value = divisor
    rounded = max(min_value, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


class ConvNormActivation(nn.Sequential):
    """Conv2D, then ``norm_layer(out_channels)`` and ``activation_layer()`` where not None (paddle's
    sublayer names 0, 1, 2). padding defaults to ``(kernel_size - 1) // 2 * dilation``; the conv has a
    bias only when there is no norm layer, unless ``bias`` says otherwise."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Union[int, Sequence[int]] = 3,
                 stride: Union[int, Sequence[int]] = 1, padding=None, groups: int = 1,
                 norm_layer: Optional[Callable[..., nn.Layer]] = nn.BatchNorm2D,
                 activation_layer: Optional[Callable[..., nn.Layer]] = nn.ReLU, dilation: int = 1,
                 bias: Optional[bool] = None) -> None:
        if padding is None:
            padding = (kernel_size - 1) // 2 * dilation
        if bias is None:
            bias = norm_layer is None
        layers = [nn.Conv2D(in_channels, out_channels, kernel_size, stride, padding, dilation=dilation,
                            groups=groups, bias_attr=None if bias else False)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer())
        super().__init__(*layers)
