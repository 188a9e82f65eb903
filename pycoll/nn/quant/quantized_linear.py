"""Weight-only and LLM.int8 quantization (paddle.nn.quant's functions), computed with pycoll's ops.

paddle's kernels for these are GPU ones (its CPU build quantizes float16 weights only and has no
dequantize / linear kernels). pycoll computes them on the host (or the array's device) with the
documented algorithm: int8, symmetric, per output channel (or per group of ``group_size`` input
rows), scale = abs-max / 127, q = round(w / scale). The quantized weight is stored in the plain
transposed layout [out_features, in_features] for every algo (paddle's GPU ``weight_only_int8``
interleaves it for its CUTLASS kernels; ``llm.int8`` is the plain layout there too), and the
functions here read that layout. ``weight_only_int4`` (packed nibbles), ``w4a8`` and ``w4afp8`` are
refused with NotImplementedError. ``arch`` is accepted and checked but selects nothing.
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

from pycoll.elementwise_ops import maximum
from pycoll.math_ops import abs, cast, clip, matmul
from pycoll.reduce_ops import amax
from pycoll.reshape_ops import repeat_interleave
from pycoll.tensor import Tensor, to_tensor
from pycoll.unary_ops import floor, sign

_ALGOS = ("weight_only_int8", "llm.int8")
_REFUSED = ("weight_only_int4", "w4a8", "w4afp8")


def round_half_away(x: Tensor) -> Tensor:
    """x rounded to integers, halves away from zero (paddle's quantization kernels' rounding;
    ``pycoll.round`` rounds halves to even)."""
    return sign(x) * floor(abs(x) + 0.5)


def _check(fn: str, algo: str, group_size: Any, arch: Any = None) -> None:
    if algo in _REFUSED:
        raise NotImplementedError(f"{fn}: algo {algo!r} is paddle's but not implemented in pycoll, which "
                                  f"computes {list(_ALGOS)}")
    if algo not in _ALGOS:
        raise ValueError(f"{fn}: algo must be one of {list(_ALGOS)} (paddle's {list(_REFUSED)} are not "
                         f"implemented in pycoll), got {algo!r}")
    if group_size not in (-1, 64, 128) or isinstance(group_size, bool):
        raise ValueError(f"{fn}: group_size must be -1, 64 or 128, got {group_size!r}")
    if arch is not None and (isinstance(arch, bool) or not isinstance(arch, int)):
        raise TypeError(f"{fn}: arch must be an int or None, got {arch!r}")


def _per_row_scale(scale: Tensor, rows: int, group_size: int) -> Tensor:
    """The scale of each of ``rows`` input rows: [n] per channel, [rows // group_size, n] grouped."""
    return scale.reshape([1, -1]) if group_size == -1 else repeat_interleave(scale, group_size, 0)


def weight_quantize(x: Tensor, algo: str = "weight_only_int8", arch: Optional[int] = None,
                    group_size: int = -1) -> Tuple[Tensor, Tensor]:
    """Quantize a weight ``x`` [in_features, out_features] to int8: returns (the int8 weight,
    transposed to [out_features, in_features], its scale). The scale is per output channel [n]
    (group_size -1) or per group of input rows [in_features // group_size, n]; its dtype is
    float32 for ``llm.int8`` and x's for the weight-only algos (paddle's)."""
    _check("weight_quantize", algo, group_size, arch)
    if not isinstance(x, Tensor) or x.ndim != 2:
        raise ValueError(f"weight_quantize: x must be a 2-D Tensor [in_features, out_features], "
                         f"got {getattr(x, 'shape', type(x).__name__)}")
    k, n = x.shape
    w = cast(x, "float32")
    if group_size == -1:
        absmax = amax(abs(w), axis=0)
    else:
        if k % group_size:
            raise ValueError(f"weight_quantize: x's first dimension ({k}) must be a multiple of group_size "
                             f"({group_size})")
        absmax = amax(abs(w).reshape([k // group_size, group_size, n]), axis=1)
    scale = maximum(absmax, to_tensor(1e-8, dtype="float32")) / 127.0  # an all-zero channel stays 0
    q = clip(round_half_away(w / _per_row_scale(scale, k, group_size)), -127, 127)
    return cast(q, "int8").t(), cast(scale, "float32" if algo == "llm.int8" else x.dtype)


def weight_dequantize(x: Tensor, scale: Tensor, algo: str = "weight_only_int8", out_dtype: Any = "float16",
                      group_size: int = -1) -> Tensor:
    """The float weight [in_features, out_features] back from weight_quantize's output, in
    scale's dtype (``out_dtype`` is deprecated and unused, as paddle's)."""
    _check("weight_dequantize", algo, group_size)
    if not isinstance(x, Tensor) or x.ndim != 2:
        raise ValueError(f"weight_dequantize: x must be the 2-D int8 Tensor weight_quantize returned, "
                         f"got {getattr(x, 'shape', type(x).__name__)}")
    w = cast(x, "float32").t()
    return cast(w * _per_row_scale(cast(scale, "float32"), w.shape[0], group_size), scale.dtype)


def _check_int8_weight(fn: str, x: Tensor, weight: Tensor) -> None:
    """``weight`` must be weight_quantize's int8 [out_features, in_features] for inputs ``x`` [..., in_features]."""
    if not isinstance(weight, Tensor) or weight.ndim != 2 or str(weight.dtype) != "int8":
        raise ValueError(f"{fn}: weight must be the int8 [out_features, in_features] Tensor weight_quantize "
                         f"returned, got {getattr(weight, 'dtype', type(weight).__name__)} of shape "
                         f"{getattr(weight, 'shape', None)}")
    if not isinstance(x, Tensor) or x.ndim < 1 or x.shape[-1] != weight.shape[1]:
        raise ValueError(f"{fn}: x's last dimension must be the weight's in_features ({weight.shape[1]}: weight "
                         f"[out_features, in_features] is {weight.shape}), got x of shape {getattr(x, 'shape', None)}")


def weight_only_linear(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
                       weight_scale: Optional[Tensor] = None, weight_dtype: str = "int8",
                       arch: Optional[int] = None, group_size: int = -1) -> Tensor:
    """``x @ dequantize(weight) + bias`` for an int8 ``weight`` from weight_quantize, in x's dtype."""
    if weight_dtype != "int8":
        raise NotImplementedError(f"weight_only_linear: weight_dtype {weight_dtype!r}: pycoll implements 'int8' "
                                  f"only (paddle's 'int4' packs two weights a byte)")
    _check("weight_only_linear", "weight_only_int8", group_size, arch)
    if weight_scale is None:
        raise ValueError("weight_only_linear: weight_scale is required (the scale weight_quantize returned)")
    _check_int8_weight("weight_only_linear", x, weight)
    w = weight_dequantize(weight, cast(weight_scale, "float32"), group_size=group_size)
    out = matmul(cast(x, "float32"), w)
    if bias is not None:
        out = out + cast(bias, "float32")
    return cast(out, x.dtype)


def llm_int8_linear(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
                    weight_scale: Optional[Tensor] = None, threshold: float = 6.0) -> Tensor:
    """LLM.int8: the input features holding an outlier (|x| >= threshold anywhere) are multiplied in
    float with the dequantized weight; the others are quantized per row (abs-max / 127) and
    multiplied in integers with the int8 weight, then rescaled. Result in x's dtype."""
    if weight_scale is None:
        raise ValueError("llm_int8_linear: weight_scale is required (the scale weight_quantize returned)")
    _check_int8_weight("llm_int8_linear", x, weight)
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or threshold <= 0:
        raise ValueError(f"llm_int8_linear: threshold must be a positive number, got {threshold!r}")
    xf = cast(x, "float32")
    ws = cast(weight_scale, "float32")
    wq = cast(weight, "int32").t()  # [in, out]
    flat = xf.reshape([-1, xf.shape[-1]])
    outlier = cast(amax(abs(flat), axis=0) >= threshold, "float32")  # [in]: 1 on an outlier feature
    regular = flat * (1.0 - outlier)
    row_scale = maximum(amax(abs(regular), axis=1, keepdim=True), to_tensor(1e-8, dtype="float32")) / 127.0
    xq = cast(clip(round_half_away(regular / row_scale), -127, 127), "int32")
    out = cast(matmul(xq, wq), "float32") * row_scale * ws.reshape([1, -1])
    out = out + matmul(flat * outlier, cast(wq, "float32") * ws.reshape([1, -1]))
    out = out.reshape(list(xf.shape[:-1]) + [wq.shape[1]])
    if bias is not None:
        out = out + cast(bias, "float32")
    return cast(out, x.dtype)
