"""paddle.nn.functional's in-place activations: relu_, elu_, leaky_relu_, hardtanh_, softmax_,
tanh_ and thresholded_relu_. Each is its out-of-place op run through `pycoll.inplace_ops.in_place`,
so paddle's autograd rules hold: a graph tensor takes the result as new memory (a backward that
kept its old values stays right), a leaf that takes a gradient is refused while the graph is
recorded, and a view writes its new values through to the tensor it views."""
from __future__ import annotations

from typing import Optional

from pycoll.dtypes import DTypeLike
from pycoll.inplace_ops import in_place
from pycoll.math_ops import relu, tanh
from pycoll.nn._activation_functional import elu, hardtanh, leaky_relu, softmax, thresholded_relu
from pycoll.tensor import Tensor

__all__ = ["relu_", "elu_", "leaky_relu_", "hardtanh_", "softmax_", "tanh_", "thresholded_relu_"]


def _tensor(fn: str, x: Tensor) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}: x must be a Tensor (an in-place op changes it), got {type(x).__name__}")
    return x


def relu_(x: Tensor, name: Optional[str] = None) -> Tensor:
    """x = max(x, 0), in place; returns x."""
    return in_place(_tensor("relu_", x), "relu_", lambda: relu(x))


def elu_(x: Tensor, alpha: float = 1.0, name: Optional[str] = None) -> Tensor:
    """x = elu(x, alpha), in place; alpha must be >= 0 (paddle's in-place rule)."""
    if alpha < 0:
        raise ValueError(f"elu_: alpha must be >= 0 for the in-place form, got {alpha}")
    return in_place(_tensor("elu_", x), "elu_", lambda: elu(x, alpha))


def leaky_relu_(x: Tensor, negative_slope: float = 0.01, name: Optional[str] = None) -> Tensor:
    """x = leaky_relu(x, negative_slope), in place."""
    return in_place(_tensor("leaky_relu_", x), "leaky_relu_", lambda: leaky_relu(x, negative_slope))


def hardtanh_(x: Tensor, min: float = -1.0, max: float = 1.0, name: Optional[str] = None) -> Tensor:  # noqa: A002
    """x = clip(x, min, max), in place."""
    return in_place(_tensor("hardtanh_", x), "hardtanh_", lambda: hardtanh(x, min, max))


def softmax_(x: Tensor, axis: int = -1, dtype: DTypeLike = None, name: Optional[str] = None) -> Tensor:
    """x = softmax(x, axis), in place (x cast to `dtype` first when given: x takes that dtype)."""
    return in_place(_tensor("softmax_", x), "softmax_", lambda: softmax(x, axis, dtype))


def tanh_(x: Tensor, name: Optional[str] = None) -> Tensor:
    """x = tanh(x), in place (paddle.tanh_ and paddle.nn.functional.tanh_)."""
    return in_place(_tensor("tanh_", x), "tanh_", lambda: tanh(x))


def thresholded_relu_(x: Tensor, threshold: float = 1.0, value: float = 0.0, name: Optional[str] = None) -> Tensor:
    """x = thresholded_relu(x, threshold, value), in place."""
    return in_place(_tensor("thresholded_relu_", x), "thresholded_relu_",
                    lambda: thresholded_relu(x, threshold, value))
