"""paddle.incubate's ``fused_bias_act``: act(x + bias), then (out + shift) * smooth when shift and
smooth are given, composed of pycoll's differentiable ops. ``act_method`` is one of paddle's
kernel's: 'gelu' (the exact, erf form), 'relu', and the gated 'swiglu' / 'geglu', which split
the last axis in halves a, b and give act(a) * b. The int32-input dequantisation and int8
output paths (dequant_scales, quant_scale > 0) are GPU inference paths pycoll does not implement."""
from __future__ import annotations

from typing import Optional

from pycoll._tensor_ops import as_tensor
from pycoll.incubate.nn.functional._checks import refuse_quant
from pycoll.math_ops import add, multiply
from pycoll.nn.functional import gelu, relu, silu
from pycoll.shape_ops import chunk, reshape
from pycoll.tensor import Tensor

__all__ = ["fused_bias_act"]

_ACTS = {"gelu": gelu, "relu": relu, "swiglu": silu, "geglu": gelu}
_GATED = ("swiglu", "geglu")
_COMPUTE_DTYPES = ("default", "fp16", "bf16", "fp32")


def fused_bias_act(x: Tensor, bias: Optional[Tensor] = None, dequant_scales: Optional[Tensor] = None,
                   shift: Optional[Tensor] = None, smooth: Optional[Tensor] = None, act_method: str = "gelu",
                   compute_dtype: str = "default", quant_scale: float = -1, quant_round_type: int = 0,
                   quant_max_bound: float = 0, quant_min_bound: float = 0) -> Tensor:
    """act(x + bias) over x's last axis (gated methods halve it), shifted and smoothed after."""
    fn = "fused_bias_act"
    if act_method not in _ACTS:
        raise ValueError(f"{fn}: act_method must be one of {sorted(_ACTS)}, got {act_method!r}")
    if compute_dtype not in _COMPUTE_DTYPES:
        raise ValueError(f"{fn}: compute_dtype must be one of {list(_COMPUTE_DTYPES)}, got {compute_dtype!r}")
    refuse_quant(fn, quant_scale)
    if dequant_scales is not None:
        raise NotImplementedError(f"{fn}: dequant_scales (an int32 x dequantised on load) is not implemented in "
                                  f"pycoll; pass a floating-point x and dequant_scales=None")
    if (shift is None) != (smooth is None):
        raise ValueError(f"{fn}: shift and smooth must be given together, got only "
                         f"{'smooth' if shift is None else 'shift'}")
    x = as_tensor(x)
    if x.dtype.kind not in "fc":
        raise TypeError(f"{fn}: x must hold floating-point numbers, got dtype {x.dtype}")
    cols = x.shape[-1] if x.ndim else 0
    if act_method in _GATED and cols % 2:
        raise ValueError(f"{fn}: act_method {act_method!r} halves x's last axis, which must be even, got shape {x.shape}")
    if bias is not None:
        bias = as_tensor(bias)
        if bias.size != cols:
            raise ValueError(f"{fn}: bias must hold {cols} values (x's last axis), got shape {bias.shape}")
        x = add(x, reshape(bias, [cols]))
    if act_method in _GATED:
        a, b = chunk(x, 2, axis=-1)
        out = multiply(_ACTS[act_method](a), b)
    else:
        out = _ACTS[act_method](x)
    if shift is not None:
        out = multiply(add(out, shift), smooth)
    return out
