"""paddle.incubate's ``variable_length_memory_efficient_attention`` (a CUTLASS kernel in paddle),
written out as attention over padded [batch, heads, seq, head_dim] tensors with pycoll's
differentiable ops: for batch b only the first kv_seq_lens[b] keys are attended to, and the
rows past seq_lens[b] of the output are zeros. out = softmax(scale * q k^T + mask) v, scale
1 / sqrt(head_dim) by default; with causal, query i sees keys j <= i + pre_cache_length."""
from __future__ import annotations

import math
from typing import Any, Optional

from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module
from pycoll.math_ops import add, matmul, multiply, scale as scale_op
from pycoll.nn.functional import softmax
from pycoll.tensor import Tensor, wrap

__all__ = ["variable_length_memory_efficient_attention"]

_FN = "variable_length_memory_efficient_attention"


def _lengths(name: str, lens: Any, batch: int, limit: int) -> Any:
    a = as_tensor(lens)._array
    if a.dtype.kind not in "iu" or a.size != batch:
        raise ValueError(f"{_FN}: {name} must hold {batch} integers (one per batch entry), got {a.dtype} "
                         f"{list(a.shape)}")
    a = a.reshape(batch)
    if a.size and (int(a.min()) < 0 or int(a.max()) > limit):
        raise ValueError(f"{_FN}: {name} must lie in [0, {limit}], got {a.tolist()}")
    return a


def variable_length_memory_efficient_attention(query: Tensor, key: Tensor, value: Tensor, seq_lens: Tensor,
                                               kv_seq_lens: Tensor, mask: Optional[Tensor] = None,
                                               scale: Optional[float] = None, causal: bool = False,
                                               pre_cache_length: int = 0) -> Tensor:
    """Attention of padded variable-length sequences (see the module's docstring); query, key
    and value are [batch, heads, seq, head_dim] (key and value with their own seq), mask is
    added to the scores ([batch, 1, q_seq, kv_seq] or broadcastable)."""
    q, k, v = as_tensor(query), as_tensor(key), as_tensor(value)
    if q.ndim != 4 or k.ndim != 4 or v.shape != k.shape or q.shape[:2] != k.shape[:2] or q.shape[3] != k.shape[3]:
        raise ValueError(f"{_FN}: query, key, value must be [batch, heads, seq, head_dim] with matching batch, heads "
                         f"and head_dim (key and value alike), got {q.shape}, {k.shape}, {v.shape}")
    batch, lq, lk = q.shape[0], q.shape[2], k.shape[2]
    xp = array_module(q._array)
    q_lens = xp.asarray(_lengths("seq_lens", seq_lens, batch, lq))
    kv_lens = xp.asarray(_lengths("kv_seq_lens", kv_seq_lens, batch, lk))
    rows, cols = xp.arange(lq)[:, None], xp.arange(lk)[None, :]
    hidden = cols[None] >= kv_lens[:, None, None]
    if causal:
        hidden = hidden | (cols > rows + pre_cache_length)[None]
    empty = xp.all(hidden, axis=-1, keepdims=True)  # a query row with no key to see: zeros, not NaN
    additive = xp.where(hidden & ~empty, -xp.inf, 0.0).astype(q._array.dtype)[:, None]
    keep = ((rows[None] < q_lens[:, None, None]) & ~empty)[:, None]
    s = 1.0 / math.sqrt(q.shape[3]) if scale is None else float(scale)
    scores = add(scale_op(matmul(q, k, transpose_y=True), s), wrap(additive))
    if mask is not None:
        scores = add(scores, mask)
    weights = softmax(scores)
    out = matmul(weights, v)
    return multiply(out, wrap(keep.astype(q._array.dtype)))
