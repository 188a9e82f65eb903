"""paddle.compat.nn's torch-style layers over pycoll's: ``Softmax``, ``Linear`` (torch's [out, in]
weight and initialization), ``Unfold`` (singular argument names) and ``AvgPool1D/2D/3D`` (also
``AvgPool1d/2d/3d``; ``count_include_pad`` where paddle's take ``exclusive``, default True)."""
from __future__ import annotations

import math
from typing import Any, Optional

from pycoll.aliases import softmax
from pycoll.compat.nn import functional
from pycoll.nn import init
from pycoll.nn.image_layers import Unfold as _Unfold
from pycoll.nn.layer import Layer
from pycoll.nn._pool_functional import avg_pool1d, avg_pool2d, avg_pool3d
from pycoll.tensor import Tensor

__all__ = ["Unfold", "Linear", "Softmax", "AvgPool1D", "AvgPool2D", "AvgPool3D", "AvgPool1d", "AvgPool2d", "AvgPool3d"]


class Softmax(Layer):
    """softmax along ``dim`` (paddle's rule without one: dim 0 of a 0-, 1- or 3-D input, else 1)."""

    def __init__(self, dim: Optional[int] = None) -> None:
        super().__init__()
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int)):
            raise TypeError(f"Softmax: dim must be an int or None, got {dim!r}")
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - paddle's name
        return softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Linear(Layer):
    """input @ weight^T + bias with weight [out_features, in_features], initialized as torch's:
    weight kaiming-uniform (a = sqrt(5)), bias uniform in +-1/sqrt(in_features)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(dtype=dtype)
        for name, size in (("in_features", in_features), ("out_features", out_features)):
            if isinstance(size, bool) or not isinstance(size, int) or size < 0:
                raise ValueError(f"paddle.compat.nn.Linear: {name} must be an int >= 0, got {size!r}")
        self.in_features = in_features
        self.out_features = out_features
        self.weight = self.create_parameter([out_features, in_features], dtype=dtype)
        self.bias = self.create_parameter([out_features], dtype=dtype, is_bias=True) if bias else None
        self.reset_parameters()
        if device is not None:
            self.to(device)

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - paddle's name
        return functional.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Unfold(_Unfold):
    """pycoll.nn.Unfold with torch's argument names: (kernel_size, dilation=1, padding=0, stride=1)."""

    def __init__(self, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> None:
        super().__init__(kernel_size, dilation, padding, stride)


class _AvgPool(Layer):
    """What AvgPool1D/2D/3D share: torch's arguments; the pooling function and whether it takes
    divisor_override are the subclass's."""

    def __init__(self, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool, count_include_pad: bool,
                 divisor_override: Optional[float]) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


def _single(value: Any) -> tuple:
    return tuple(value) if isinstance(value, (list, tuple)) else (value,)


class AvgPool1D(_AvgPool):
    """Average pooling over [N, C, L]; count_include_pad (default True) counts the padding cells."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True) -> None:
        super().__init__(_single(kernel_size), _single(kernel_size if stride is None else stride), _single(padding),
                         ceil_mode, count_include_pad, None)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - paddle's name
        return avg_pool1d(input, self.kernel_size, self.stride, self.padding, not self.count_include_pad,
                          self.ceil_mode)


class AvgPool2D(_AvgPool):
    """Average pooling over [N, C, H, W]; divisor_override, if given, divides every window's sum."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: Optional[float] = None) -> None:
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - paddle's name
        return avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          not self.count_include_pad, self.divisor_override)


class AvgPool3D(_AvgPool):
    """Average pooling over [N, C, D, H, W]; divisor_override as AvgPool2D's."""

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 count_include_pad: bool = True, divisor_override: Optional[float] = None) -> None:
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - paddle's name
        return avg_pool3d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          not self.count_include_pad, self.divisor_override)


AvgPool1d = AvgPool1D
AvgPool2d = AvgPool2D
AvgPool3d = AvgPool3D
