"""Conv1D, Conv2D and Conv3D (paddle.nn names, signatures, parameter names and initialisation)."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Tuple, Union

from pycoll._param_aliases import param_aliases
from pycoll.nn import _conv_functional as CF
from pycoll.nn._pad_functional import pad
from pycoll.nn._sliding import FORMATS, int_list, parse_padding
from pycoll.nn.initializer import Normal
from pycoll.nn.layer import Layer
from pycoll.dtypes import DTypeLike
from pycoll.tensor import Tensor

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def set_geometry(layer: Layer, in_channels: int, out_channels: int, groups: int, kernel_size: Any, stride: Any,
                 dilation: Any, padding: Any, data_format: str) -> None:
    """Check a (transposed) convolution layer's channels, groups, data_format and padding (refused
    at construction, as paddle does) and keep them, with its kernel size, stride and dilation as
    lists of ``layer._nd`` ints."""
    fn, nd = type(layer).__name__, layer._nd
    for what, v in (("in_channels", in_channels), ("out_channels", out_channels), ("groups", groups)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"{fn}: {what} must be an int >= 1, got {v!r}")
    if in_channels % groups or out_channels % groups:
        raise ValueError(f"{fn}: in_channels ({in_channels}) and out_channels ({out_channels}) must be "
                         f"divisible by groups ({groups})")
    if data_format not in FORMATS[nd]:
        raise ValueError(f"{fn}: data_format must be one of {list(FORMATS[nd])}, got {data_format!r}")
    parse_padding(padding, nd, data_format == FORMATS[nd][1], fn)
    layer._in_channels, layer._out_channels, layer._groups = in_channels, out_channels, groups
    layer._kernel_size = int_list(kernel_size, nd, "kernel_size", fn)
    layer._stride = int_list(stride, nd, "stride", fn)
    layer._dilation = int_list(dilation, nd, "dilation", fn)
    layer._padding, layer._data_format = padding, data_format


def geometry_repr(layer: Layer, after_padding: Sequence[Tuple[str, Any, Any]] = ()) -> str:
    """A convolution layer's ``extra_repr``: what differs from the defaults, ``after_padding``
    ((name, value, default) triples) placed after the padding."""
    nd = layer._nd
    items = [("stride", layer._stride, [1] * nd), ("padding", layer._padding, 0), *after_padding,
             ("dilation", layer._dilation, [1] * nd), ("groups", layer._groups, 1)]
    text = f"{layer._in_channels}, {layer._out_channels}, kernel_size={layer._kernel_size}"
    text += "".join(f", {name}={value}" for name, value, default in items if value != default)
    return text + f", data_format={layer._data_format}"


class _ConvNd(Layer):
    """weight [out_channels, in_channels / groups, *kernel] drawn from paddle's default
    N(0, sqrt(2 / (in_channels * prod(kernel)))), bias zeros. A padding_mode other than 'zeros'
    pads x with F.pad first (then padding must be an int, as paddle requires)."""

    _nd = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Union[int, Sequence[int]],
                 stride: Union[int, Sequence[int]] = 1, padding: Any = 0, dilation: Union[int, Sequence[int]] = 1,
                 groups: int = 1, *, bias: bool = True, padding_mode: str = "zeros", device: Any = None,
                 dtype: DTypeLike = None, weight_attr: Any = None, bias_attr: Any = None,
                 data_format: Optional[str] = None):
        super().__init__(f"conv{self._nd}d", dtype)
        fn = type(self).__name__
        if weight_attr is False:
            raise ValueError(f"{fn}: weight_attr must not be False (a convolution needs its weight)")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{fn}: padding_mode must be one of {list(_PADDING_MODES)}, got {padding_mode!r}")
        if padding_mode != "zeros" and (isinstance(padding, bool) or not isinstance(padding, int)):
            raise TypeError(f"{fn}: padding must be an int when padding_mode is {padding_mode!r}, "
                            f"got {padding!r}")
        set_geometry(self, in_channels, out_channels, groups, kernel_size, stride, dilation, padding,
                     data_format or FORMATS[self._nd][0])
        self._padding_mode = padding_mode
        std = math.sqrt(2.0 / (in_channels * math.prod(self._kernel_size)))
        self.weight = self.create_parameter([out_channels, in_channels // groups, *self._kernel_size],
                                            attr=weight_attr, dtype=self._dtype, default_initializer=Normal(0.0, std))
        self.bias = self.create_parameter([out_channels], attr=False if bias is False else bias_attr,
                                          dtype=self._dtype, is_bias=True)
        if device is not None:
            self.to(device)

    @param_aliases({"input": "x"})
    def forward(self, x: Tensor) -> Tensor:
        padding = self._padding
        if self._padding_mode != "zeros":
            x = pad(x, [self._padding] * (2 * self._nd), mode=self._padding_mode, data_format=self._data_format)
            padding = 0
        conv = (CF.conv1d, CF.conv2d, CF.conv3d)[self._nd - 1]
        return conv(x, self.weight, self.bias, self._stride, padding, self._dilation, self._groups,
                    self._data_format)

    def extra_repr(self) -> str:
        return geometry_repr(self, [("padding_mode", self._padding_mode, "zeros")])


class Conv1D(_ConvNd):
    """1-D convolution over x [N, C, L] ('NCL') or [N, L, C] ('NLC')."""

    _nd = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Union[int, Sequence[int]],
                 stride: Union[int, Sequence[int]] = 1, padding: Any = 0, dilation: Union[int, Sequence[int]] = 1,
                 groups: int = 1, *, bias: bool = True, padding_mode: str = "zeros", device: Any = None,
                 dtype: DTypeLike = None, weight_attr: Any = None, bias_attr: Any = None, data_format: str = "NCL"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias=bias,
                         padding_mode=padding_mode, device=device, dtype=dtype, weight_attr=weight_attr,
                         bias_attr=bias_attr, data_format=data_format)


class Conv2D(_ConvNd):
    """2-D convolution over x [N, C, H, W] ('NCHW') or [N, H, W, C] ('NHWC')."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Union[int, Sequence[int]],
                 stride: Union[int, Sequence[int]] = 1, padding: Any = 0, dilation: Union[int, Sequence[int]] = 1,
                 groups: int = 1, *, bias: bool = True, padding_mode: str = "zeros", device: Any = None,
                 dtype: DTypeLike = None, weight_attr: Any = None, bias_attr: Any = None, data_format: str = "NCHW"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias=bias,
                         padding_mode=padding_mode, device=device, dtype=dtype, weight_attr=weight_attr,
                         bias_attr=bias_attr, data_format=data_format)


class Conv3D(_ConvNd):
    """3-D convolution over x [N, C, D, H, W] ('NCDHW') or [N, D, H, W, C] ('NDHWC')."""

    _nd = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Union[int, Sequence[int]],
                 stride: Union[int, Sequence[int]] = 1, padding: Any = 0, dilation: Union[int, Sequence[int]] = 1,
                 groups: int = 1, *, bias: bool = True, padding_mode: str = "zeros", device: Any = None,
                 dtype: DTypeLike = None, weight_attr: Any = None, bias_attr: Any = None,
                 data_format: str = "NCDHW"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias=bias,
                         padding_mode=padding_mode, device=device, dtype=dtype, weight_attr=weight_attr,
                         bias_attr=bias_attr, data_format=data_format)
