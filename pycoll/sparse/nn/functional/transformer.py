"""paddle.sparse.nn.functional.attention: softmax(Q K^T / sqrt(d)) V with the scores computed
and normalised only at a CSR layout's positions (paddle's kernel is CUDA-only; this is its
computation from the sparse ops, so it runs wherever they do)."""
from __future__ import annotations

import math
from typing import Any, Optional

from pycoll import math_ops
from pycoll.device import array_module, to_module
from pycoll.shape_ops import reshape, transpose
from pycoll.sparse.convert import csr_rows
from pycoll.sparse.matmul import masked_matmul, matmul
from pycoll.sparse.nn.functional.activation import softmax
from pycoll.sparse.tensor import SparseTensor, sparse_arg, with_values
from pycoll.tensor import Tensor, wrap


def _mask_array(mask: Optional[Tensor], shape: list, arg: str, xp: Any) -> Any:
    if mask is None:
        return None
    if not isinstance(mask, Tensor) or isinstance(mask, SparseTensor) or list(mask.shape) != shape:
        raise ValueError(f"attention: {arg} must be a dense Tensor of shape {shape}, got "
                         f"{list(mask.shape) if isinstance(mask, Tensor) else type(mask).__name__}")
    return to_module(mask._array, xp)


def attention(query: Tensor, key: Tensor, value: Tensor, sparse_mask: SparseTensor,
              key_padding_mask: Optional[Tensor] = None, attn_mask: Optional[Tensor] = None,
              name: Optional[str] = None) -> Tensor:
    """Attention of query/key/value [batch, heads, seq, head_dim] over the positions of the CSR
    ``sparse_mask`` [batch * heads, seq, seq]; a 0 in ``key_padding_mask`` [batch, seq] or in
    ``attn_mask`` [seq, seq] takes that position out (its score -inf), as paddle's kernel does."""
    for arg, t in (("query", query), ("key", key), ("value", value)):
        if not isinstance(t, Tensor) or isinstance(t, SparseTensor) or t.ndim != 4:
            raise ValueError(f"attention: {arg} must be a dense 4-D Tensor [batch, heads, seq, head_dim]")
    b, h, s, d = (int(n) for n in query.shape)
    if list(key.shape) != [b, h, s, d] or list(value.shape)[:3] != [b, h, s]:
        raise ValueError(f"attention: key and value must match query's shape {[b, h, s, d]}, got "
                         f"{list(key.shape)} and {list(value.shape)}")
    sparse_arg(sparse_mask, "attention", "sparse_mask", fmt="csr")
    if list(sparse_mask.shape) != [b * h, s, s]:
        raise ValueError(f"attention: sparse_mask must have shape {[b * h, s, s]}, got {list(sparse_mask.shape)}")
    q = reshape(query, [b * h, s, d])
    k = reshape(key, [b * h, s, d])
    scores = masked_matmul(q, transpose(k, [0, 2, 1]), sparse_mask)
    values = math_ops.multiply(scores.values(), 1.0 / math.sqrt(d))
    xp = array_module(sparse_mask._cols)
    rows = csr_rows(sparse_mask)  # batch * heads * seq + row
    cols = sparse_mask._cols.astype(xp.int64)
    kp = _mask_array(key_padding_mask, [b, s], "key_padding_mask", xp)
    am = _mask_array(attn_mask, [s, s], "attn_mask", xp)
    if kp is not None or am is not None:
        out_of_play = xp.zeros(cols.shape[0], dtype=bool)
        if kp is not None:
            out_of_play |= kp[rows // (h * s), cols] == 0
        if am is not None:
            out_of_play |= am[rows % s, cols] == 0
        shift = xp.where(out_of_play, -xp.inf, 0).astype(values.dtype)
        values = math_ops.add(values, wrap(shift))
    probs = softmax(with_values(scores, values))
    out = matmul(probs, reshape(value, [b * h, s, -1]))
    return reshape(out, [b, h, s, -1])
