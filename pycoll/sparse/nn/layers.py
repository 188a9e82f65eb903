"""paddle.sparse.nn's layers with parameters: the convolutions (Conv2D/3D, SubmConv2D/3D),
MaxPool3D and BatchNorm (over the channels, the values' last dim)."""
from __future__ import annotations

import math
from typing import Any, Optional

from pycoll.nn.initializer import Normal
from pycoll.nn.layer import Layer
from pycoll.nn._norm_functional import batch_norm
from pycoll.nn.norm import _BatchNormBase
from pycoll.sparse.nn.functional import conv as F
from pycoll.sparse.tensor import SparseTensor, sparse_arg, with_values


class _Conv(Layer):
    """A sparse convolution's weight [*kernel, C, O] (paddle's default: normal, std sqrt(2 / fan_in))
    and bias [O]."""

    _dims, _subm, _format = 3, False, "NDHWC"

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1, padding: Any = 0,
                 dilation: Any = 1, groups: int = 1, padding_mode: str = "zeros", key: Optional[str] = None,
                 weight_attr: Any = None, bias_attr: Any = None, data_format: Optional[str] = None):
        super().__init__()
        fn = type(self).__name__
        data_format = self._format if data_format is None else data_format
        if data_format != self._format:
            raise ValueError(f"{fn}: data_format must be '{self._format}', got {data_format!r}")
        if padding_mode != "zeros":
            raise ValueError(f"{fn}: padding_mode must be 'zeros', got {padding_mode!r}")
        if groups != 1:
            raise ValueError(f"{fn}: groups must be 1, got {groups!r}")
        for arg, v in (("in_channels", in_channels), ("out_channels", out_channels)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{fn}: {arg} must be an int >= 1, got {v!r}")
        self._kernel_size = F._ints(kernel_size, self._dims, fn, "kernel_size")
        self._stride, self._padding, self._dilation = stride, padding, dilation
        self._in_channels, self._out_channels, self._key = in_channels, out_channels, key
        std = math.sqrt(2.0 / (math.prod(self._kernel_size) * in_channels))
        self.weight = self.create_parameter([*self._kernel_size, in_channels, out_channels], attr=weight_attr,
                                            default_initializer=Normal(0.0, std))
        self.bias = self.create_parameter([out_channels], attr=bias_attr, is_bias=True)

    def forward(self, x: SparseTensor) -> SparseTensor:
        return F._conv(x, self.weight, self.bias, self._stride, self._padding, self._dilation, 1, self._subm,
                       self._format, self._dims, type(self).__name__)

    def extra_repr(self) -> str:
        return (f"{self._in_channels}, {self._out_channels}, kernel_size={self._kernel_size}, "
                f"stride={self._stride}, padding={self._padding}, data_format={self._format}")


class Conv3D(_Conv):
    """`functional.conv3d` as a layer."""


class SubmConv3D(_Conv):
    """`functional.subm_conv3d` as a layer."""

    _subm = True


class Conv2D(_Conv):
    """`functional.conv2d` as a layer."""

    _dims, _format = 2, "NHWC"


class SubmConv2D(_Conv):
    """`functional.subm_conv2d` as a layer."""

    _dims, _subm, _format = 2, True, "NHWC"


class MaxPool3D(Layer):
    """`functional.max_pool3d` as a layer."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, return_mask: bool = False,
                 ceil_mode: bool = False, data_format: str = "NDHWC", name: Optional[str] = None):
        super().__init__()
        if return_mask:
            raise ValueError("MaxPool3D: return_mask must be False (paddle's sparse pooling returns no mask)")
        self.ksize, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.data_format = ceil_mode, data_format

    def forward(self, x: SparseTensor) -> SparseTensor:
        return F.max_pool3d(x, self.ksize, self.stride, self.padding, self.ceil_mode, self.data_format)

    def extra_repr(self) -> str:
        return f"kernel_size={self.ksize}, stride={self.stride}, padding={self.padding}"


class BatchNorm(_BatchNormBase):
    """Batch norm of a COO x [N, (D,) H, W, C] whose values are [nnz, C]: the statistics are the
    stored entries' per channel (absent entries take no part), as paddle's sparse BatchNorm."""

    _scope, _ndims, _formats = "batch_norm", (), ("NDHWC", "NHWC")

    def __init__(self, num_features: int, momentum: float = 0.9, epsilon: float = 1e-5, weight_attr: Any = None,
                 bias_attr: Any = None, data_format: str = "NDHWC", use_global_stats: Optional[bool] = None,
                 name: Optional[str] = None):
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format, use_global_stats,
                         name)

    def forward(self, x: SparseTensor) -> SparseTensor:
        x = sparse_arg(x, "BatchNorm", fmt="coo")
        if x.dense_dim() != 1:
            raise ValueError(f"BatchNorm: x must have its channels as its one dense dim, got dense_dim {x.dense_dim()}")
        out = batch_norm(x.values(), self._mean, self._variance, self.weight, self.bias, self.training,
                         self._momentum, self._epsilon, "NC", self._use_global_stats)
        return with_values(x, out)
