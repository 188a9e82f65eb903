"""Conv1DTranspose, Conv2DTranspose and Conv3DTranspose (paddle.nn names, signatures, parameter layout and
initialisation)."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Union

from pycoll.nn import _conv_transpose_functional as CTF
from pycoll.nn.conv import geometry_repr, set_geometry
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
        set_geometry(self, in_channels, out_channels, groups, kernel_size, stride, dilation, padding, data_format)
        self.output_padding = output_padding
        self.weight = self.create_parameter([in_channels, out_channels // groups, *self._kernel_size], attr=weight_attr)
        self.bias = self.create_parameter([out_channels], attr=bias_attr, is_bias=True)

    def forward(self, x: Tensor, output_size: Optional[IntOrList] = None) -> Tensor:
        output_padding = self.output_padding if output_size is None else 0
        conv = (CTF.conv1d_transpose, CTF.conv2d_transpose, CTF.conv3d_transpose)[self._nd - 1]
        return conv(x, self.weight, self.bias, stride=self._stride, padding=self._padding,
                    output_padding=output_padding, dilation=self._dilation, groups=self._groups,
                    output_size=output_size, data_format=self._data_format)

    def extra_repr(self) -> str:
        return geometry_repr(self, [("output_padding", self.output_padding, 0)])


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


class Conv3DTranspose(_ConvTransposeNd):
    """Transposed 3-D convolution over x [N, C, D, H, W] ('NCDHW') or [N, D, H, W, C] ('NDHWC')."""

    _nd = 3

    def __init__(self, in_channels: int, out_channels: int, kernel_size: IntOrList, stride: IntOrList = 1,
                 padding: Any = 0, output_padding: Any = 0, dilation: IntOrList = 1, groups: int = 1,
                 weight_attr: Any = None, bias_attr: Any = None, data_format: str = "NCDHW"):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, dilation, groups,
                         weight_attr, bias_attr, data_format)
