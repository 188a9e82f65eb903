"""Conv1DTranspose and Conv2DTranspose (paddle.nn names, signatures, parameter layout and
initialisation)."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from pycoll.nn import _conv_transpose_functional as CTF
from pycoll.nn._sliding import FORMATS, int_list, parse_padding
from pycoll.nn.layer import Layer
from pycoll.tensor import Tensor

IntOrList = Union[int, Sequence[int]]


class _ConvTransposeNd(Layer):
    """weight [in_channels, out_channels / groups, *kernel], XavierUniform as paddle's default for
    transposed convolutions (fans from that layout); bias [out_channels], zeros."""

    _nd = 2

    def __init__(self, in_channels: int, out_channels: int, kernel_size: IntOrList, stride: IntOrList,
                 padding: Any, output_padding: Any, dilation: IntOrList, groups: int, weight_attr: Any,
                 bias_attr: Any, data_format: str):
        super().__init__(f"conv{self._nd}d_transpose")
        fn = type(self).__name__
        for what, v in (("in_channels", in_channels), ("out_channels", out_channels), ("groups", groups)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{fn}: {what} must be an int >= 1, got {v!r}")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"{fn}: in_channels ({in_channels}) and out_channels ({out_channels}) must be "
                             f"divisible by groups ({groups})")
        if data_format not in FORMATS[self._nd]:
            raise ValueError(f"{fn}: data_format must be one of {list(FORMATS[self._nd])}, got {data_format!r}")
        parse_padding(padding, self._nd, data_format == FORMATS[self._nd][1], fn)
        self._in_channels, self._out_channels, self._groups = in_channels, out_channels, groups
        self._kernel_size = int_list(kernel_size, self._nd, "kernel_size", fn)
        self._stride = int_list(stride, self._nd, "stride", fn)
        self._dilation = int_list(dilation, self._nd, "dilation", fn)
        self._padding, self._data_format = padding, data_format
        self.output_padding = output_padding
        self.weight = self.create_parameter([in_channels, out_channels // groups, *self._kernel_size], attr=weight_attr)
        self.bias = self.create_parameter([out_channels], attr=bias_attr, is_bias=True)

    def forward(self, x: Tensor, output_size: Optional[IntOrList] = None) -> Tensor:
        output_padding = self.output_padding if output_size is None else 0
        if self._nd == 1:
            return CTF.conv1d_transpose(x, self.weight, self.bias, self._stride, self._padding, output_padding,
                                        self._groups, self._dilation, output_size, self._data_format)
        return CTF.conv2d_transpose(x, self.weight, self.bias, self._stride, self._padding, output_padding,
                                    self._dilation, self._groups, output_size, self._data_format)

    def extra_repr(self) -> str:
        text = f"{self._in_channels}, {self._out_channels}, kernel_size={self._kernel_size}"
        if self._stride != [1] * self._nd:
            text += f", stride={self._stride}"
        if self._padding != 0:
            text += f", padding={self._padding}"
        if self.output_padding != 0:
            text += f", output_padding={self.output_padding}"
        if self._dilation != [1] * self._nd:
            text += f", dilation={self._dilation}"
        if self._groups != 1:
            text += f", groups={self._groups}"
        return text + f", data_format={self._data_format}"


class Conv1DTranspose(_ConvTransposeNd):
    """Transposed 1-D convolution over x [N, C, L] ('NCL') or [N, L, C] ('NLC')."""

    _nd = 1

    def __init__(self, in_channels: int, out_channels: int, kernel_size: IntOrList, stride: IntOrList = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: IntOrList = 1,
                 weight_attr: Any = None, bias_attr: Any = None, data_format: str = "NCL"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, dilation, groups,
                         weight_attr, bias_attr, data_format)


class Conv2DTranspose(_ConvTransposeNd):
    """Transposed 2-D convolution over x [N, C, H, W] ('NCHW') or [N, H, W, C] ('NHWC')."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: IntOrList, stride: IntOrList = 1,
                 padding: Any = 0, output_padding: Any = 0, dilation: IntOrList = 1, groups: int = 1,
                 weight_attr: Any = None, bias_attr: Any = None, data_format: str = "NCHW"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, dilation, groups,
                         weight_attr, bias_attr, data_format)
