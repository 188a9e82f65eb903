"""paddle.incubate's fused normalisations: ``fused_rms_norm`` and ``fused_layer_norm`` normalise
``x + bias + residual_alpha * residual`` over the axes from ``begin_norm_axis`` on, composed of
pycoll's differentiable ``rms_norm`` / ``layer_norm`` (paddle fuses them into one kernel).

Return conventions are paddle 3.3.1's: ``fused_rms_norm`` gives ``(out, residual_out)`` and
``fused_layer_norm`` ``(out, residual_out, mean, inv_std)`` (paddle calls the last one
``variance``; its kernel writes 1 / sqrt(var + epsilon) there, per row, float32). ``out`` has x's
dtype, whatever the weights' (paddle's kernels compute in float32 and write x's dtype: a bfloat16
x with float32 weights gives a bfloat16 out). As in paddle's
kernels, ``bias`` is added only together with a ``residual``; without a residual
``residual_out`` is an empty tensor (paddle leaves it unwritten).

``fast_ln``, ``fast_rms_norm`` and ``fused_rms_norm_ext`` (GPU-only kernels in paddle) normalise
over the last axis and return the output with its per-row float32 statistics."""
from __future__ import annotations

from math import prod
from typing import Any, Optional, Tuple

from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module
from pycoll.incubate.nn.functional._checks import begin_axis, refuse_quant
from pycoll.math_ops import add, cast, scale
from pycoll.nn.functional import layer_norm, rms_norm
from pycoll.shape_ops import reshape
from pycoll.tensor import Tensor, wrap

__all__ = ["fused_rms_norm", "fused_layer_norm", "fast_ln", "fast_rms_norm", "fused_rms_norm_ext"]


def _vector(fn: str, name: str, t: Any, n: int) -> Optional[Tensor]:
    """A weight or bias of n values as a 1-D tensor (None stays None)."""
    if t is None:
        return None
    t = as_tensor(t)
    if t.size != n:
        raise ValueError(f"{fn}: {name} must hold {n} values (the normalised size), got shape {t.shape}")
    return t if t.ndim == 1 else reshape(t, [n])


def _fused_input(fn: str, x: Tensor, begin: int, bias: Any, residual: Any,
                 residual_alpha: float) -> Tuple[Tensor, Tensor, int]:
    """(x + bias + residual_alpha * residual flattened to [rows, n], residual_out, n)."""
    n = prod(x.shape[begin:])
    flat = reshape(x, [-1, n])
    if residual is None:
        return flat, wrap(array_module(x._array).empty((0,), dtype=x._array.dtype)), n
    residual = as_tensor(residual)
    if residual.shape != x.shape:
        raise ValueError(f"{fn}: residual must have x's shape {x.shape}, got {residual.shape}")
    r = reshape(residual, [-1, n])
    h = add(flat, r if residual_alpha == 1.0 else scale(r, residual_alpha))
    if bias is not None:
        h = add(h, _vector(fn, "bias", bias, n))
    return h, reshape(h, x.shape), n


def fused_rms_norm(x: Tensor, norm_weight: Tensor, norm_bias: Optional[Tensor], epsilon: float,
                   begin_norm_axis: int = 1, bias: Optional[Tensor] = None, residual: Optional[Tensor] = None,
                   quant_scale: float = -1, quant_round_type: float = 0, quant_max_bound: float = 0,
                   quant_min_bound: float = 0) -> Tuple[Tensor, Tensor]:
    """RMSNorm of h = x + bias + residual over the axes from begin_norm_axis on:
    out = h / sqrt(mean(h ** 2) + epsilon) * norm_weight + norm_bias. Returns
    (out, residual_out), residual_out = h with a residual, else an empty tensor."""
    x = as_tensor(x)
    fn = "fused_rms_norm"
    begin = begin_axis(fn, begin_norm_axis, x.ndim)
    refuse_quant(fn, quant_scale)
    h, residual_out, n = _fused_input(fn, x, begin, bias, residual, 1.0)
    out, _ = rms_norm(h, [n], _vector(fn, "norm_weight", norm_weight, n), epsilon)
    if norm_bias is not None:
        out = add(out, _vector(fn, "norm_bias", norm_bias, n))
    return _as_dtype_of(reshape(out, x.shape), x), residual_out


def fused_layer_norm(x: Tensor, norm_weight: Optional[Tensor], norm_bias: Optional[Tensor], epsilon: float,
                     residual_alpha: float = 1.0, begin_norm_axis: int = 1, bias: Optional[Tensor] = None,
                     residual: Optional[Tensor] = None, quant_scale: float = -1, quant_round_type: float = 0,
                     quant_max_bound: float = 0, quant_min_bound: float = 0
                     ) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """LayerNorm of h = x + bias + residual_alpha * residual over the axes from begin_norm_axis
    on, scaled by norm_weight and shifted by norm_bias; with both of them None, out is h itself
    (paddle's rule). Returns (out, residual_out, mean, inv_std): residual_out = h with a
    residual (else empty), mean and 1 / sqrt(var + epsilon) of each row of h, float32 and
    outside the graph."""
    x = as_tensor(x)
    fn = "fused_layer_norm"
    begin = begin_axis(fn, begin_norm_axis, x.ndim)
    refuse_quant(fn, quant_scale)
    if isinstance(residual_alpha, bool) or not isinstance(residual_alpha, (int, float)):
        raise TypeError(f"{fn}: residual_alpha must be a number, got {residual_alpha!r}")
    h, residual_out, n = _fused_input(fn, x, begin, bias, residual, float(residual_alpha))
    mean, inv_std = _row_stats(h, epsilon)
    weight, shift = _vector(fn, "norm_weight", norm_weight, n), _vector(fn, "norm_bias", norm_bias, n)
    out = h if weight is None and shift is None else layer_norm(h, [n], weight, shift, epsilon)
    return _as_dtype_of(reshape(out, x.shape), x), residual_out, mean, inv_std


def _as_dtype_of(out: Tensor, x: Tensor) -> Tensor:
    return out if out.dtype == x.dtype else cast(out, x.dtype)


def _row_stats(h: Tensor, epsilon: float) -> Tuple[Tensor, Tensor]:
    """The float32 mean and 1 / sqrt(var + epsilon) of each row of a 2-D h, outside the graph."""
    xp = array_module(h._array)
    rows = h._array.astype(xp.float32, copy=False)
    mean = rows.mean(axis=1)
    centered = rows - mean[:, None]
    inv_std = 1.0 / xp.sqrt((centered * centered).mean(axis=1) + xp.float32(epsilon))
    return wrap(mean), wrap(inv_std.astype(xp.float32, copy=False))


def fast_ln(x: Tensor, scale: Tensor, bias: Tensor, epsilon: float = 1e-5) -> Tuple[Tensor, Tensor, Tensor]:
    """LayerNorm over x's last axis with scale and bias; returns (y, mean, invvar), the per-row
    float32 statistics of x (the rows are x's leading axes flattened)."""
    x = as_tensor(x)
    n = x.shape[-1] if x.ndim else 0
    flat = reshape(x, [-1, n])
    y = layer_norm(flat, [n], _vector("fast_ln", "scale", scale, n), _vector("fast_ln", "bias", bias, n), epsilon)
    mean, inv_std = _row_stats(flat, epsilon)
    return reshape(y, x.shape), mean, inv_std


def fast_rms_norm(x: Tensor, scale: Tensor, epsilon: float = 1e-5) -> Tuple[Tensor, Tensor]:
    """RMSNorm over x's last axis with scale; returns (y, invvar), invvar the per-row float32
    1 / sqrt(mean(x ** 2) + epsilon)."""
    return _last_axis_rms("fast_rms_norm", x, scale, epsilon)


def fused_rms_norm_ext(x: Tensor, scale: Tensor, epsilon: float = 1e-5, name: Optional[str] = None
                       ) -> Tuple[Tensor, Tensor]:
    """The same as fast_rms_norm: (y, invvar) of RMSNorm over x's last axis."""
    return _last_axis_rms("fused_rms_norm_ext", x, scale, epsilon)


def _last_axis_rms(fn: str, x: Any, scale: Any, epsilon: float) -> Tuple[Tensor, Tensor]:
    x = as_tensor(x)
    n = x.shape[-1] if x.ndim else 0
    return rms_norm(x, [n], _vector(fn, "scale", scale, n), epsilon)
