"""paddle.incubate's ``fused_partial_rope``: rotary position embedding of the last
``pe_head_dim`` channels of each head (MLA's rope part), the leading channels passed through.

The rope channels are stored interleaved (pairs (t0, t1), (t2, t3)...); paddle's kernel first
gathers them into halves (t0, t2, ... | t1, t3, ...) and then applies the rotate-half form:
out = t * cos + concat(-t[half:], t[:half]) * sin, with cos/sin read at each token's position.
Composed of pycoll's differentiable ops, so the gradient reaches x (and cos/sin)."""
from __future__ import annotations

from pycoll._tensor_ops import as_tensor
from pycoll.math_ops import add, cast, multiply, scale
from pycoll.shape_ops import concat, reshape, transpose
from pycoll.tensor import Tensor

__all__ = ["fused_partial_rope"]

_FN = "fused_partial_rope"


def fused_partial_rope(x: Tensor, cos: Tensor, sin: Tensor) -> Tensor:
    """``x`` [batch, seq_len, num_heads, head_dim] with rope applied to its last pe_head_dim
    channels, where ``cos`` and ``sin`` are [1, seq_len (or more: the first seq_len rows are
    used), 1, pe_head_dim], pe_head_dim even and at most head_dim. Same shape and dtype as x."""
    x, cos, sin = as_tensor(x), as_tensor(cos), as_tensor(sin)
    if x.ndim != 4:
        raise ValueError(f"{_FN}: x must be 4-D [batch_size, seq_len, num_heads, head_dim], got shape {x.shape}")
    b, s, h, d = x.shape
    if cos.shape != sin.shape:
        raise ValueError(f"{_FN}: cos and sin must have the same shape, got {cos.shape} and {sin.shape}")
    if cos.ndim != 4 or cos.shape[0] != 1 or cos.shape[2] != 1 or cos.shape[1] < s:
        raise ValueError(f"{_FN}: cos and sin must be [1, seq_len, 1, pe_head_dim] with seq_len >= x's {s}, got "
                         f"shape {cos.shape}")
    pe = cos.shape[3]
    if pe % 2 or not 0 < pe <= d:
        raise ValueError(f"{_FN}: pe_head_dim (cos.shape[-1]) must be even and in (0, head_dim={d}], got {pe}")
    x_pe = reshape(transpose(reshape(x[..., d - pe:], [b, s, h, pe // 2, 2]), [0, 1, 2, 4, 3]), [b, s, h, pe])
    cos, sin = cos[:, :s], sin[:, :s]
    half = pe // 2
    rotated = concat([scale(x_pe[..., half:], -1.0), x_pe[..., :half]], axis=-1)
    out = add(multiply(x_pe, cos), multiply(rotated, sin))
    if pe < d:
        out = concat([x[..., :d - pe], out], axis=-1)
    return out if out.dtype == x.dtype else cast(out, x.dtype)
