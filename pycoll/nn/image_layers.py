"""Layers over image-shaped inputs (paddle.nn names): Unfold, Fold, ChannelShuffle, ZeroPad2D,
LocalResponseNorm and Softmax2D, each keeping its arguments and calling its functional form."""
from __future__ import annotations

from typing import Any, Optional

from pycoll._param_aliases import param_aliases
from pycoll._tensor_ops import as_tensor
from pycoll.nn._activation_functional import softmax
from pycoll.nn._layout_functional import channel_shuffle, fold, unfold, zeropad2d
from pycoll.nn._response_norm_functional import local_response_norm
from pycoll.nn.layer import Layer
from pycoll.nn.pooling import pad_repr
from pycoll.tensor import Tensor

__all__ = ["Unfold", "Fold", "ChannelShuffle", "ZeroPad2D", "LocalResponseNorm", "Softmax2D"]


class Unfold(Layer):
    """im2col: [N, C, H, W] to [N, C * kh * kw, L] (see `functional.unfold`)."""

    def __init__(self, kernel_sizes: Any, dilations: Any = 1, paddings: Any = 0, strides: Any = 1,
                 name: Optional[str] = None):
        super().__init__()
        self.kernel_sizes, self.dilations, self.paddings, self.strides = kernel_sizes, dilations, paddings, strides
        self._name = name

    def extra_repr(self) -> str:
        return _sliding_repr(self)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return unfold(input, self.kernel_sizes, self.strides, self.paddings, self.dilations)


class Fold(Layer):
    """col2im: [N, C * kh * kw, L] to [N, C, *output_sizes] (see `functional.fold`)."""

    @param_aliases({"output_size": "output_sizes", "kernel_size": "kernel_sizes", "stride": "strides",
                    "padding": "paddings", "dilation": "dilations"})
    def __init__(self, output_sizes: Any, kernel_sizes: Any, dilations: Any = 1, paddings: Any = 0,
                 strides: Any = 1, name: Optional[str] = None):
        super().__init__()
        self.output_sizes, self.kernel_sizes = output_sizes, kernel_sizes
        self.dilations, self.paddings, self.strides = dilations, paddings, strides
        self._name = name

    def extra_repr(self) -> str:
        return _sliding_repr(self)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return fold(input, self.output_sizes, self.kernel_sizes, self.strides, self.paddings, self.dilations)


class ChannelShuffle(Layer):
    """Shuffle the channels across `groups` (see `functional.channel_shuffle`)."""

    def __init__(self, groups: int, data_format: str = "NCHW", name: Optional[str] = None):
        super().__init__()
        if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
            raise ValueError(f"ChannelShuffle: groups must be a positive int, got {groups!r}")
        if data_format not in ("NCHW", "NHWC"):
            raise ValueError(f"ChannelShuffle: data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
        self._groups, self._data_format = groups, data_format
        self._name = name

    def extra_repr(self) -> str:
        return _named(f"groups={self._groups}", self._data_format, self._name)

    def forward(self, x: Tensor) -> Tensor:
        return channel_shuffle(x, self._groups, self._data_format)


class ZeroPad2D(Layer):
    """Pad H and W with zeros: padding [left, right, top, bottom] or one int for all four."""

    def __init__(self, padding: Any, data_format: str = "NCHW", name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self._pad = [padding] * 4 if isinstance(padding, int) else padding
        self._data_format = data_format

    @param_aliases({"input": "x"})
    def forward(self, x: Tensor) -> Tensor:
        return zeropad2d(x, self._pad, self._data_format)

    def extra_repr(self) -> str:  # paddle's ZeroPad2D is a Pad2D in mode constant
        return pad_repr(self._pad, "constant", 0.0, self._data_format, None)


class LocalResponseNorm(Layer):
    """Normalise across neighbouring channels (see `functional.local_response_norm`)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0,
                 data_format: str = "NCHW", name: Optional[str] = None):
        super().__init__()
        self.size, self.alpha, self.beta, self.k, self.data_format = size, alpha, beta, k, data_format
        self._name = name

    def extra_repr(self) -> str:
        return _named(f"size={self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}", self.data_format,
                      self._name)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k, self.data_format)


class Softmax2D(Layer):
    """Softmax over the channels of [C, H, W] or [N, C, H, W] (axis -3)."""

    def __init__(self, name: Optional[str] = None):
        super().__init__()
        self._named(name)

    def forward(self, x: Tensor) -> Tensor:
        x = as_tensor(x)
        if x.ndim not in (3, 4):
            raise ValueError(f"Softmax2D: x must be [C, H, W] or [N, C, H, W], got shape {x.shape}")
        return softmax(x, axis=-3)


def _named(text: str, data_format: str, name: Optional[str]) -> str:
    """paddle's repr tail: the data format where it is not NCHW, the name where one was given."""
    return text + ("" if data_format == "NCHW" else f", data_format={data_format}") + (f", name={name}" if name else "")


def _sliding_repr(layer: Any) -> str:
    """Fold's and Unfold's repr, as paddle's: their window arguments by paddle's singular names."""
    return _named(f"kernel_size={layer.kernel_sizes}, dilation={layer.dilations}, padding={layer.paddings}, "
                  f"stride={layer.strides}", "NCHW", layer._name)
