"""paddle.compat.nn.functional: torch-style signatures over pycoll's functional ops: ``softmax``
(pycoll.softmax itself, paddle's torch-style one), ``linear`` with torch's [out_features,
in_features] weight, ``pad`` (pairs from the last axis backwards), ``unfold`` (singular argument
names) and ``scaled_dot_product_attention`` on [batch, heads, seq, head_dim] tensors."""
from __future__ import annotations

from typing import Any, Optional

from pycoll.aliases import softmax
from pycoll.math_ops import matmul
from pycoll.nn._attention_functional import scaled_dot_product_attention as _sdpa
from pycoll.nn._layout_functional import unfold as _unfold
from pycoll.nn._pad_functional import pad as _pad
from pycoll.shape_ops import squeeze, unsqueeze
from pycoll.tensor import Tensor

__all__ = ["pad", "softmax", "linear", "scaled_dot_product_attention", "unfold"]

_PAD_MODES = ("reflect", "replicate", "constant", "circular")


def _tensor(value: Any, name: str, fn: str) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"paddle.compat.nn.functional.{fn}: {name} must be a Tensor, got {type(value).__name__}")
    return value


def _as_list(value: Any) -> Any:
    """A Tensor argument as the Python list paddle's compat functions turn it into."""
    return value.tolist() if isinstance(value, Tensor) else value


def linear(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:  # noqa: A002 - paddle's name
    """input @ weight^T + bias, weight [out_features, in_features] (torch's layout)."""
    out = matmul(_tensor(input, "input", "linear"), _tensor(weight, "weight", "linear"), transpose_y=True)
    return out if bias is None else out + bias


def pad(input: Tensor, pad: Any, mode: str = "constant", value: float = 0.0) -> Tensor:  # noqa: A002
    """torch's pad: ``pad`` holds (before, after) pairs for the last axis, then the one before it...
    mode 'constant' pads any axes; 'reflect', 'replicate' and 'circular' pad up to the last three
    axes of a 2-D to 5-D input, never its first one (paddle's rule, at most 6 ints)."""
    _tensor(input, "input", "pad")
    if mode not in _PAD_MODES:
        raise ValueError(f"paddle.compat.nn.functional.pad: mode should be one of constant, reflect, replicate, "
                         f"circular, but got {mode!r}")
    pad = _as_list(pad)
    if not isinstance(pad, (list, tuple)) or not all(isinstance(p, int) and not isinstance(p, bool) for p in pad):
        raise TypeError(f"paddle.compat.nn.functional.pad: pad must be a list/tuple of ints, got {pad!r}")
    if not pad:
        return input.clone()
    nd = input.ndim
    if mode == "constant" and len(pad) != 2 * (nd - 2):
        return _pad(input, list(pad), "constant", float(value), pad_from_left_axis=False)
    if not 1 <= nd <= 5:
        raise ValueError(f"paddle.compat.nn.functional.pad: input must be 1-D to 5-D, got {nd}-D")
    if mode != "constant" and nd < 2:
        raise ValueError(f"paddle.compat.nn.functional.pad: mode {mode!r} needs a 2-D to 5-D input, got {nd}-D")
    most = 2 * nd - (0 if mode == "constant" else 2)
    if len(pad) > 6 or len(pad) > most:
        raise ValueError(f"paddle.compat.nn.functional.pad: len(pad) must be at most {min(6, most)} for a {nd}-D "
                         f"input in mode {mode!r}, got {len(pad)}")
    added = list(range(5 - nd))
    out = _pad(unsqueeze(input, added) if added else input, list(pad) + [0] * (6 - len(pad)), mode, float(value),
               "NCDHW")
    return squeeze(out, added) if added else out


def unfold(input: Tensor, kernel_size: Any, dilation: Any = 1, padding: Any = 0, stride: Any = 1) -> Tensor:  # noqa: A002
    """im2col: [N, C, H, W] -> [N, C * kh * kw, L] (pycoll's unfold under torch's argument names)."""
    return _unfold(_tensor(input, "input", "unfold"), _as_list(kernel_size), _as_list(stride), _as_list(padding),
                   _as_list(dilation))


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Optional[Tensor] = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: Optional[float] = None,
                                 enable_gqa: bool = False) -> Tensor:
    """torch's layout, [batch, heads, seq, head_dim], over pycoll's scaled_dot_product_attention
    (which takes [batch, seq, heads, head_dim]); dropout applies, as paddle's compat does."""
    if is_causal and attn_mask is not None:
        raise RuntimeError("Explicit attn_mask should not be set when is_causal=True")
    q, k, v = (_tensor(t, name, "scaled_dot_product_attention").swapaxes(-3, -2)
               for t, name in ((query, "query"), (key, "key"), (value, "value")))
    out = _sdpa(q, k, v, attn_mask, dropout_p, is_causal, True, None, scale, enable_gqa)
    return out.swapaxes(-3, -2)
