"""Pooling and padding layers (paddle.nn names, signatures and reprs): MaxPool1D/2D/3D,
AvgPool1D/2D/3D, AdaptiveAvgPool1D/2D/3D, AdaptiveMaxPool1D/2D/3D, MaxUnPool1D/2D/3D, Pad1D/2D/3D,
LPPool1D/2D and FractionalMaxPool2D/3D."""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

from pycoll._param_aliases import param_aliases
from pycoll.nn import _adaptive_pool_functional as APF
from pycoll.nn import _fractional_pool_functional as FPF
from pycoll.nn import _lp_pool_functional as LPF
from pycoll.nn import _pad_functional as PadF
from pycoll.nn import _pool_functional as PF
from pycoll.nn import _unpool_functional as UF
from pycoll.nn.layer import Layer
from pycoll.tensor import Tensor

Size = Union[int, Sequence[int]]


class MaxPool2D(Layer):
    _pool = staticmethod(PF.max_pool2d)

    def __init__(self, kernel_size: Size, stride: Optional[Size] = None, padding: Any = 0,
                 return_mask: bool = False, ceil_mode: bool = False, data_format: str = "NCHW",
                 name: Optional[str] = None):
        super().__init__()
        self.ksize, self.stride, self.padding = kernel_size, stride, padding
        self.return_mask, self.ceil_mode, self.data_format = return_mask, ceil_mode, data_format

    def forward(self, x: Tensor) -> Union[Tensor, Tuple[Tensor, Tensor]]:
        return self._pool(x, self.ksize, self.stride, self.padding, self.return_mask, self.ceil_mode,
                             self.data_format)

    def extra_repr(self) -> str:
        return f"kernel_size={self.ksize}, stride={self.stride}, padding={self.padding}"


class AvgPool2D(Layer):
    _pool = staticmethod(PF.avg_pool2d)

    def __init__(self, kernel_size: Size, stride: Optional[Size] = None, padding: Any = 0,
                 ceil_mode: bool = False, exclusive: bool = True, divisor_override: Optional[float] = None,
                 data_format: str = "NCHW", name: Optional[str] = None):
        super().__init__()
        self.ksize, self.stride, self.padding = kernel_size, stride, padding
        self.ceil_mode, self.exclusive, self.divisor = ceil_mode, exclusive, divisor_override
        self.data_format = data_format

    def forward(self, x: Tensor) -> Tensor:
        return self._pool(x, self.ksize, self.stride, self.padding, self.ceil_mode, self.exclusive,
                             self.divisor, self.data_format)

    def extra_repr(self) -> str:
        return f"kernel_size={self.ksize}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2D(Layer):
    _pool = staticmethod(APF.adaptive_avg_pool2d)

    def __init__(self, output_size: Size, data_format: str = "NCHW", name: Optional[str] = None):
        super().__init__()
        self._output_size, self._data_format = output_size, data_format

    @param_aliases({"input": "x"})
    def forward(self, x: Tensor) -> Tensor:
        return self._pool(x, self._output_size, self._data_format)

    def extra_repr(self) -> str:
        return f"output_size={self._output_size}"


class AdaptiveMaxPool2D(Layer):
    _pool = staticmethod(APF.adaptive_max_pool2d)

    @param_aliases({"return_indices": "return_mask"})
    def __init__(self, output_size: Size, return_mask: bool = False, name: Optional[str] = None):
        super().__init__()
        self._output_size, self._return_mask = output_size, return_mask

    @param_aliases({"input": "x"})
    def forward(self, x: Tensor) -> Union[Tensor, Tuple[Tensor, Tensor]]:
        return self._pool(x, self._output_size, self._return_mask)

    def extra_repr(self) -> str:
        return f"output_size={self._output_size}, return_mask={self._return_mask}"


class MaxPool1D(Layer):
    def __init__(self, kernel_size: Size, stride: Optional[Size] = None, padding: Any = 0,
                 return_mask: bool = False, ceil_mode: bool = False, name: Optional[str] = None):
        super().__init__()
        self.ksize, self.stride, self.padding = kernel_size, stride, padding
        self.return_mask, self.ceil_mode = return_mask, ceil_mode

    def forward(self, x: Tensor) -> Union[Tensor, Tuple[Tensor, Tensor]]:
        return PF.max_pool1d(x, self.ksize, self.stride, self.padding, self.return_mask, self.ceil_mode)

    def extra_repr(self) -> str:
        return f"kernel_size={self.ksize}, stride={self.stride}, padding={self.padding}"


class AvgPool1D(Layer):
    def __init__(self, kernel_size: Size, stride: Optional[Size] = None, padding: Any = 0,
                 exclusive: bool = True, ceil_mode: bool = False, name: Optional[str] = None):
        super().__init__()
        self.ksize, self.stride, self.padding = kernel_size, stride, padding
        self.exclusive, self.ceil_mode = exclusive, ceil_mode

    def forward(self, x: Tensor) -> Tensor:
        return PF.avg_pool1d(x, self.ksize, self.stride, self.padding, self.exclusive, self.ceil_mode)

    def extra_repr(self) -> str:
        return f"kernel_size={self.ksize}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1D(Layer):
    def __init__(self, output_size: int, name: Optional[str] = None):
        super().__init__()
        self._output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        return APF.adaptive_avg_pool1d(x, self._output_size)

    def extra_repr(self) -> str:
        return f"output_size={self._output_size}"


class AdaptiveMaxPool1D(Layer):
    @param_aliases({"return_indices": "return_mask"})
    def __init__(self, output_size: Size, return_mask: bool = False, name: Optional[str] = None):
        super().__init__()
        self._output_size, self._return_mask = output_size, return_mask

    def forward(self, x: Tensor) -> Union[Tensor, Tuple[Tensor, Tensor]]:
        return APF.adaptive_max_pool1d(x, self._output_size, self._return_mask)

    def extra_repr(self) -> str:
        return f"output_size={self._output_size}, return_mask={self._return_mask}"


class _PadNd(Layer):
    """F.pad over the spatial axes; an int padding pads every side by it."""

    _nd = 1

    def __init__(self, padding: Union[int, Sequence[int], Tensor], mode: str = "constant", value: float = 0.0,
                 data_format: str = "NCL", name: Optional[str] = None):
        super().__init__()
        if isinstance(padding, Tensor):
            padding = padding.numpy().tolist()
        self.padding = [padding] * (2 * self._nd) if isinstance(padding, int) else padding
        self._mode, self.value, self._data_format, self._name = mode, value, data_format, name

    @param_aliases({"input": "x"})
    def forward(self, x: Tensor) -> Tensor:
        return PadF.pad(x, self.padding, self._mode, self.value, self._data_format)

    def extra_repr(self) -> str:
        return pad_repr(self.padding, self._mode, self.value, self._data_format, self._name)


def pad_repr(padding: Any, mode: str, value: float, data_format: str, name: Optional[str]) -> str:
    """A padding layer's repr, as paddle's Pad1D/2D/3D (and the layers built on them)."""
    name_str = f", name={name}" if name else ""
    return f"padding={padding}, mode={mode}, value={value}, data_format={data_format}{name_str}"


class Pad1D(_PadNd):
    """Pads the last axis of x [N, C, L] ('NCL', or 'NLC'): padding [left, right]."""


class Pad2D(_PadNd):
    """Pads H and W of x [N, C, H, W] ('NCHW', or 'NHWC'): padding [left, right, top, bottom]."""

    _nd = 2

    def __init__(self, padding: Union[int, Sequence[int], Tensor], mode: str = "constant", value: float = 0.0,
                 data_format: str = "NCHW", name: Optional[str] = None):
        super().__init__(padding, mode, value, data_format, name)


class Pad3D(_PadNd):
    """Pads D, H and W of x [N, C, D, H, W] ('NCDHW', or 'NDHWC'): padding [left, right, top,
    bottom, front, back]."""

    _nd = 3

    def __init__(self, padding: Union[int, Sequence[int], Tensor], mode: str = "constant", value: float = 0.0,
                 data_format: str = "NCDHW", name: Optional[str] = None):
        super().__init__(padding, mode, value, data_format, name)


class MaxPool3D(MaxPool2D):
    _pool = staticmethod(PF.max_pool3d)

    def __init__(self, kernel_size: Size, stride: Optional[Size] = None, padding: Any = 0,
                 return_mask: bool = False, ceil_mode: bool = False, data_format: str = "NCDHW",
                 name: Optional[str] = None):
        super().__init__(kernel_size, stride, padding, return_mask, ceil_mode, data_format, name)


class AvgPool3D(AvgPool2D):
    _pool = staticmethod(PF.avg_pool3d)

    def __init__(self, kernel_size: Size, stride: Optional[Size] = None, padding: Any = 0,
                 ceil_mode: bool = False, exclusive: bool = True, divisor_override: Optional[float] = None,
                 data_format: str = "NCDHW", name: Optional[str] = None):
        super().__init__(kernel_size, stride, padding, ceil_mode, exclusive, divisor_override, data_format, name)


class AdaptiveAvgPool3D(AdaptiveAvgPool2D):
    _pool = staticmethod(APF.adaptive_avg_pool3d)

    def __init__(self, output_size: Size, data_format: str = "NCDHW", name: Optional[str] = None):
        super().__init__(output_size, data_format, name)


class AdaptiveMaxPool3D(AdaptiveMaxPool2D):
    _pool = staticmethod(APF.adaptive_max_pool3d)


class _MaxUnPoolNd(Layer):
    """F.max_unpoolNd(x, indices) with this layer's kernel_size, stride, padding and output_size."""

    _unpool = staticmethod(UF.max_unpool2d)

    def __init__(self, kernel_size: Size, stride: Optional[Size], padding: Size, data_format: str,
                 output_size: Optional[Sequence[int]], name: Optional[str]):
        super().__init__()
        self.ksize, self.stride, self.padding = kernel_size, stride, padding
        self.data_format, self.output_size = data_format, output_size

    @param_aliases({"input": "x"})
    def forward(self, x: Tensor, indices: Tensor, output_size: Optional[Sequence[int]] = None) -> Tensor:
        """``output_size`` given to the call (paddle's, for odd sizes) takes the layer's place."""
        size = self.output_size if output_size is None else output_size
        return self._unpool(x, indices, self.ksize, self.stride, self.padding, self.data_format, size)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}"


class MaxUnPool1D(_MaxUnPoolNd):
    _unpool = staticmethod(UF.max_unpool1d)

    def __init__(self, kernel_size: Size, stride: Optional[Size] = None, padding: Size = 0, data_format: str = "NCL",
                 output_size: Optional[Sequence[int]] = None, name: Optional[str] = None):
        super().__init__(kernel_size, stride, padding, data_format, output_size, name)


class MaxUnPool2D(_MaxUnPoolNd):
    def __init__(self, kernel_size: Size, stride: Optional[Size] = None, padding: Size = 0,
                 data_format: str = "NCHW", output_size: Optional[Sequence[int]] = None, name: Optional[str] = None):
        super().__init__(kernel_size, stride, padding, data_format, output_size, name)


class MaxUnPool3D(_MaxUnPoolNd):
    _unpool = staticmethod(UF.max_unpool3d)

    def __init__(self, kernel_size: Size, stride: Optional[Size] = None, padding: Size = 0,
                 data_format: str = "NCDHW", output_size: Optional[Sequence[int]] = None, name: Optional[str] = None):
        super().__init__(kernel_size, stride, padding, data_format, output_size, name)


class _LPPoolNd(Layer):
    """paddle's LPPool layers; as paddle's, a bool in `padding`'s place (the torch order) is
    ceil_mode."""

    def __init__(self, norm_type: float, kernel_size: Size, stride: Optional[Size], padding: Any, ceil_mode: bool,
                 data_format: str, name: Optional[str]):
        super().__init__()
        if isinstance(padding, bool):
            padding, ceil_mode = 0, padding
        self.norm_type = float(norm_type)
        self.kernel_size = self.ksize = kernel_size
        self.stride, self.padding, self.ceil_mode, self.data_format = stride, padding, ceil_mode, data_format

    @param_aliases({"input": "x"})
    def forward(self, x: Tensor) -> Tensor:
        return self._pool(x, self.norm_type, self.ksize, self.stride, self.padding, self.ceil_mode,
                          self.data_format)

    def extra_repr(self) -> str:
        return (f"norm_type={self.norm_type}, kernel_size={self.ksize}, stride={self.stride}, "
                f"padding={self.padding}")


class LPPool1D(_LPPoolNd):
    _pool = staticmethod(LPF.lp_pool1d)

    def __init__(self, norm_type: float, kernel_size: Size, stride: Optional[Size] = None, padding: Any = 0,
                 ceil_mode: bool = False, data_format: str = "NCL", name: Optional[str] = None):
        super().__init__(norm_type, kernel_size, stride, padding, ceil_mode, data_format, name)


class LPPool2D(_LPPoolNd):
    _pool = staticmethod(LPF.lp_pool2d)

    def __init__(self, norm_type: float, kernel_size: Size, stride: Optional[Size] = None, padding: Any = 0,
                 ceil_mode: bool = False, data_format: str = "NCHW", name: Optional[str] = None):
        super().__init__(norm_type, kernel_size, stride, padding, ceil_mode, data_format, name)
        self.stride = kernel_size if stride is None else stride  # paddle's LPPool2D keeps the default so


class FractionalMaxPool2D(Layer):
    """`fractional_max_pool2d` with this layer's sizes; random_u=None draws a new u every call."""
    _pool = staticmethod(FPF.fractional_max_pool2d)

    def __init__(self, output_size: Size, kernel_size: Optional[Size] = None, random_u: Optional[float] = None,
                 return_mask: bool = False, name: Optional[str] = None):
        super().__init__()
        self._output_size, self._kernel_size = output_size, kernel_size
        self._random_u, self._return_mask = random_u, return_mask

    def forward(self, x: Tensor) -> Union[Tensor, Tuple[Tensor, Tensor]]:
        return self._pool(x, self._output_size, self._kernel_size, self._random_u, self._return_mask)

    def extra_repr(self) -> str:
        return f"output_size={self._output_size}, return_mask={self._return_mask}"


class FractionalMaxPool3D(FractionalMaxPool2D):
    """`fractional_max_pool3d` with this layer's sizes."""
    _pool = staticmethod(FPF.fractional_max_pool3d)
