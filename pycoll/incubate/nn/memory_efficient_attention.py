"""paddle.incubate.nn.memory_efficient_attention (xformers' CUTLASS kernel in paddle), written
out with pycoll's differentiable ops: softmax(scale * q k^T + bias) v, with dropout p while
training. query [batch, q_len, heads, head_dim], key and value [batch, kv_len, heads, ...]
(xformers' BMHK layout); scale defaults to 1 / sqrt(head_dim); attn_bias is None, a tensor
broadcast to [batch, heads, q_len, kv_len], or one of ``pycoll.incubate.nn.attn_bias``'s."""
from __future__ import annotations

import math
from typing import Any, Optional

from pycoll._tensor_ops import as_tensor
from pycoll.incubate.nn.attn_bias import AttentionBias
from pycoll.math_ops import add, cast, matmul, scale as scale_op
from pycoll.nn.functional import dropout, softmax
from pycoll.shape_ops import transpose
from pycoll.tensor import Tensor

__all__ = ["memory_efficient_attention"]

_FN = "memory_efficient_attention"


def memory_efficient_attention(query: Tensor, key: Tensor, value: Tensor, attn_bias: Any = None, p: float = 0.0,
                               scale: Optional[float] = None, training: bool = True) -> Tensor:
    """Attention in the BMHK layout; returns [batch, q_len, heads, value's head_dim]."""
    q, k, v = as_tensor(query), as_tensor(key), as_tensor(value)
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4 or k.shape[:3] != v.shape[:3] or q.shape[0] != k.shape[0] \
            or q.shape[2] != k.shape[2] or q.shape[3] != k.shape[3]:
        raise ValueError(f"{_FN}: query, key, value must be [batch, seq, heads, head_dim] with matching batch and "
                         f"heads, key and value one length, query and key one head_dim; got {q.shape}, {k.shape}, "
                         f"{v.shape}")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValueError(f"{_FN}: p must be a number in [0, 1], got {p!r}")
    s = 1.0 / math.sqrt(q.shape[3]) if scale is None or scale < 0 else float(scale)
    qh, kh, vh = (transpose(t, [0, 2, 1, 3]) for t in (q, k, v))
    scores = scale_op(matmul(qh, kh, transpose_y=True), s)
    if isinstance(attn_bias, AttentionBias):
        scores = add(scores, cast(attn_bias.materialize(list(scores.shape), "float32"), scores.dtype))
    elif attn_bias is not None:
        scores = add(scores, attn_bias)
    weights = dropout(softmax(scores), float(p), training=training)
    return transpose(matmul(weights, vh), [0, 2, 1, 3])
