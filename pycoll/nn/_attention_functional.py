"""Dot-product attention: paddle.nn.functional.scaled_dot_product_attention, and the pieces
`nn.MultiHeadAttention` shares with it (`attention_mask_as_float`, `attend`).

Attention is composed of differentiable ops (matmul, softmax, dropout), so the gradients reach
query, key, value and a floating-point mask (a learnt bias passed as the mask gets its gradient).
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

from pycoll._promotion import accumulates_in_float32
from pycoll._tensor_ops import as_tensor, check_broadcast
from pycoll.device import array_module
from pycoll.math_ops import cast, matmul, scale as scale_op
from pycoll.nn._activation_functional import softmax
from pycoll.nn._dropout_functional import dropout
from pycoll.shape_ops import expand, reshape, transpose
from pycoll.tensor import Tensor, wrap

__all__ = ["scaled_dot_product_attention"]


def attention_mask_as_float(attn_mask: Optional[Any], dtype: Any) -> Optional[Tensor]:
    """paddle's `_convert_attention_mask` (what MultiHeadAttention and the Transformer layers add
    to the attention scores): a bool or integer mask becomes (mask - 1) * 1e9, i.e. 0 where
    attention is allowed (True / 1) and -1e9 where it is not; a floating mask is added as it is
    (cast to the scores' dtype)."""
    if attn_mask is None:
        return None
    mask = as_tensor(attn_mask)
    if mask.dtype == dtype:
        return mask
    if mask.dtype.kind in "biu":
        a = mask._array
        return wrap(((a.astype(dtype) - 1.0) * 1e9).astype(dtype, copy=False))
    return cast(mask, dtype)


def attend(q: Tensor, k: Tensor, v: Tensor, mask: Optional[Tensor], dropout_p: float, training: bool,
           scale: float) -> Tuple[Tensor, Tensor]:
    """(softmax(scale * q k^T + mask) v, the attention weights) over [batch, heads, length, dim]
    tensors; the weights pass through dropout (mode 'upscale_in_train') while training."""
    product = matmul(scale_op(q, scale), k, transpose_y=True)
    if mask is not None:
        check_broadcast("attention", "the scores q k^T", tuple(product.shape), "attn_mask", tuple(mask.shape))
        product = product + mask
    weights = softmax(product)
    if dropout_p:
        weights = dropout(weights, dropout_p, training=training, mode="upscale_in_train")
    return matmul(weights, v), weights


def _causal_mask(lq: int, lk: int, like: Any) -> Any:
    """An additive [lq, lk] mask hiding key j from query i where j > i (paddle's triu(1))."""
    xp = array_module(like)
    rows, cols = xp.arange(lq)[:, None], xp.arange(lk)[None, :]
    return xp.where(cols > rows, -float("inf"), 0.0).astype(like.dtype)


@accumulates_in_float32
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Optional[Tensor] = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, training: bool = True,
                                 backend: Optional[str] = None, scale: Optional[float] = None,
                                 enable_gqa: bool = True, name: Optional[str] = None) -> Tensor:
    """Attention over paddle's layout [batch, seq_len, num_heads, head_dim] (or without the batch
    axis): softmax(scale * q k^T + attn_mask) v, scale defaulting to 1 / sqrt(head_dim).

    attn_mask broadcasts to [batch, num_heads, seq_len_q, seq_len_k]: a bool mask keeps the True
    positions (False ones get -inf), a floating one is added to the scores. `is_causal` hides the
    keys after each query (top-left aligned, paddle's triu(1)); given with attn_mask both apply
    (as paddle's flash-attention kernel does; its CPU path drops the mask). With enable_gqa, key
    and value may have fewer heads than query (a divisor): each serves num_heads_q / num_heads_k
    consecutive query heads. Dropout (on the weights) only while `training`. `backend` is
    accepted for paddle compatibility: one implementation serves every device."""
    fn = "scaled_dot_product_attention"
    query, key, value = as_tensor(query), as_tensor(key), as_tensor(value)
    if not 3 <= query.ndim <= 4 or key.ndim != query.ndim or value.ndim != query.ndim:
        raise ValueError(f"{fn}: query, key and value must all be 4-D [batch, seq_len, num_heads, head_dim] "
                         f"(or 3-D without the batch), got shapes {query.shape}, {key.shape}, {value.shape}")
    if isinstance(dropout_p, bool) or not isinstance(dropout_p, (int, float)) or not 0.0 <= dropout_p <= 1.0:
        raise ValueError(f"{fn}: dropout_p must be a number in [0, 1], got {dropout_p!r}")
    batched = query.ndim == 4
    if not batched:
        query, key, value = (reshape(t, [1, *t.shape]) for t in (query, key, value))
    b, lq, hq, d = query.shape
    bk, lk, hk, dk = key.shape
    bv, lv, hv, _ = value.shape
    if bk != b or bv != b or lv != lk or dk != d:
        raise ValueError(f"{fn}: key must be [{b}, seq_len_k, num_heads_k, {d}] and value [{b}, seq_len_k, "
                         f"num_heads_k, head_dim_v]; got query {query.shape}, key {key.shape}, value {value.shape}")
    if hk != hv or (hq != hk if not enable_gqa else (hk == 0 or hq % hk)):
        need = "equal" if not enable_gqa else "key's and value's equal and dividing query's"
        raise ValueError(f"{fn}: the numbers of heads must be {need}, got query {hq}, key {hk}, value {hv}")
    q, k, v = (transpose(t, [0, 2, 1, 3]) for t in (query, key, value))
    if hq != hk:  # grouped-query attention: repeat each key/value head for its group of query heads
        k, v = (_repeat_heads(t, hq // hk) for t in (k, v))
    mask = None
    if attn_mask is not None:
        mask = as_tensor(attn_mask)
        if mask.dtype.kind not in "bfc" and mask.dtype.name != "bfloat16":
            raise TypeError(f"scaled_dot_product_attention: attn_mask must be bool (True keeps a key) or of a "
                            f"floating dtype (added to the scores), got {mask.dtype}")
        if mask.dtype.kind == "b":
            xp = array_module(mask._array)
            mask = wrap(xp.where(mask._array, 0.0, -float("inf")).astype(query.dtype))
    if is_causal:
        causal = wrap(_causal_mask(lq, lk, query._array))
        mask = causal if mask is None else mask + causal
    out, _ = attend(q, k, v, mask, float(dropout_p), training, d ** -0.5 if scale is None else scale)
    out = transpose(out, [0, 2, 1, 3])
    return out if batched else reshape(out, out.shape[1:])


def _repeat_heads(t: Tensor, times: int) -> Tensor:
    """[b, h, l, d] -> [b, h * times, l, d], head i repeated `times` times in a row."""
    b, h, n, d = t.shape
    return reshape(expand(reshape(t, [b, h, 1, n, d]), [b, h, times, n, d]), [b, h * times, n, d])
