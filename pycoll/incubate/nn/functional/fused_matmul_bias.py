"""paddle.incubate's GEMM-epilogue functions, composed of pycoll's differentiable matmul and add:
``fused_matmul_bias`` (matmul(x, y) + bias), ``fused_linear`` (x @ weight + bias, weight
[in, out], or [out, in] with transpose_weight) and ``fused_linear_activation`` (the same then
'gelu' or 'relu'; the GELU of cuBLASLt's epilogue, which paddle's kernel uses, is the tanh
approximation)."""
from __future__ import annotations

from typing import Optional

from pycoll._tensor_ops import as_tensor
from pycoll.math_ops import add, matmul
from pycoll.nn.functional import gelu, relu
from pycoll.tensor import Tensor

__all__ = ["fused_matmul_bias", "fused_linear", "fused_linear_activation"]


def fused_matmul_bias(x: Tensor, y: Tensor, bias: Optional[Tensor] = None, transpose_x: bool = False,
                      transpose_y: bool = False, name: Optional[str] = None) -> Tensor:
    """matmul(x, y) (either transposed first) + bias, bias broadcast over the last axis."""
    out = matmul(x, y, transpose_x, transpose_y)
    if bias is None:
        return out
    bias = as_tensor(bias)
    if bias.ndim != 1 or bias.shape[0] != out.shape[-1]:
        raise ValueError(f"fused_matmul_bias: bias must have shape [{out.shape[-1]}] (the product's last axis), "
                         f"got {bias.shape}")
    return add(out, bias)


def fused_linear(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None, transpose_weight: bool = False,
                 name: Optional[str] = None) -> Tensor:
    """x @ weight + bias; weight [in_features, out_features], or [out, in] with transpose_weight."""
    return fused_matmul_bias(x, weight, bias, False, transpose_weight, name)


_ACTIVATIONS = {None: None, "none": None, "gelu": lambda t: gelu(t, approximate=True), "relu": relu}


def fused_linear_activation(x: Tensor, y: Tensor, bias: Tensor, trans_x: bool = False, trans_y: bool = False,
                            activation: Optional[str] = None) -> Tensor:
    """activation(matmul(x, y) + bias), activation None, 'gelu' (tanh form) or 'relu'."""
    if activation not in _ACTIVATIONS:
        raise ValueError(f"fused_linear_activation: activation must be None, 'gelu' or 'relu', got {activation!r}")
    out = fused_matmul_bias(x, y, bias, trans_x, trans_y)
    act = _ACTIVATIONS[activation]
    return out if act is None else act(out)
