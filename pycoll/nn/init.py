"""paddle.nn.init: torch-style in-place initialisation of a tensor (``xavier_uniform_(w)``...),
each a thin call of the `pycoll.nn.initializer` class of the same recipe. As paddle's, they
return None (the tensor is filled in place)."""
from __future__ import annotations

from typing import Optional

from pycoll.creation import eye
from pycoll.nn.initializer import (Constant, Dirac, KaimingNormal, KaimingUniform, Normal, Orthogonal,
                                   TruncatedNormal, Uniform, XavierNormal, XavierUniform, calculate_gain)
from pycoll.tensor import Tensor

__all__ = ["calculate_gain", "kaiming_uniform_", "kaiming_normal_", "xavier_uniform_", "xavier_normal_",
           "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "dirac_", "eye_", "orthogonal_"]


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> None:
    """U(-bound, bound), bound = gain(nonlinearity, a) * sqrt(3 / fan) (fan by `mode`)."""
    KaimingUniform(negative_slope=a, nonlinearity=nonlinearity, mode=mode)(tensor)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> None:
    """N(0, gain(nonlinearity, a) / sqrt(fan)) (fan by `mode`)."""
    KaimingNormal(negative_slope=a, nonlinearity=nonlinearity, mode=mode)(tensor)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, fan_in: Optional[float] = None,
                    fan_out: Optional[float] = None) -> None:
    XavierUniform(fan_in=fan_in, fan_out=fan_out, gain=gain)(tensor)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, fan_in: Optional[float] = None,
                   fan_out: Optional[float] = None) -> None:
    XavierNormal(fan_in=fan_in, fan_out=fan_out, gain=gain)(tensor)


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> None:
    Uniform(low=a, high=b)(tensor)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> None:
    Normal(mean=mean, std=std)(tensor)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0) -> None:
    """N(mean, std) restricted to the absolute bounds [a, b]."""
    TruncatedNormal(mean=mean, std=std, a=a, b=b)(tensor)


def constant_(tensor: Tensor, val: float) -> None:
    Constant(value=val)(tensor)


def ones_(tensor: Tensor) -> None:
    Constant(value=1.0)(tensor)


def zeros_(tensor: Tensor) -> None:
    Constant(value=0.0)(tensor)


def dirac_(tensor: Tensor, groups: int = 1) -> None:
    Dirac(groups=groups)(tensor)


def eye_(tensor: Tensor) -> None:
    """The identity matrix (ones on the diagonal of a 2-D tensor, zeros elsewhere)."""
    if len(tensor.shape) != 2:
        raise ValueError(f"eye_: the tensor must be 2-D, got shape {tensor.shape}")
    tensor.set_value(eye(tensor.shape[0], tensor.shape[1], dtype=tensor.dtype))


def orthogonal_(tensor: Tensor, gain: float = 1) -> None:
    Orthogonal(gain=gain)(tensor)
