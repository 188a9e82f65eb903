"""The attention the flash-attention family, flashmask and sparse_attention share: dense scores
under a bool mask of the keys each query sees, over `_attention_functional.attend` (pycoll's one
attention: softmax(scale q k^T + mask) v, dropout on the weights).

A query row that may see no key gives 0 output, weights and gradient (paddle's flash kernels' 0
for a fully masked row) instead of NaN. Causal masks are top-left aligned (query i sees keys
j <= i), as paddle's math path. Key/value may have fewer heads than the query (a divisor; query
head i uses key head i // (heads_q / heads_k), flash's grouped-query layout).
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

from pycoll.device import array_module
from pycoll.nn._attention_functional import _repeat_heads, attend
from pycoll.shape_ops import transpose
from pycoll.tensor import Tensor, wrap


def masked_attention(q: Tensor, k: Tensor, v: Tensor, keep: Optional[Any], dropout: float, training: bool,
                     scale: Optional[float], fn: str) -> Tuple[Tensor, Tensor]:
    """(out, weights) of attention over [batch, heads, seq, dim] tensors where `keep` (a bool
    array broadcasting to [batch, heads_q, seq_q, seq_k], or None) says which keys each query
    sees. Rows that see no key give zero output and weights (and no gradient)."""
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError(f"{fn}: query, key and value must be 4-D, got shapes {q.shape}, {k.shape}, {v.shape}")
    b, hq, lq, d = q.shape
    if k.shape[0] != b or v.shape[0] != b or k.shape[1] != v.shape[1] or k.shape[2] != v.shape[2] or k.shape[3] != d:
        raise ValueError(f"{fn}: query {q.shape}, key {k.shape} and value {v.shape} (each as [batch, num_heads, "
                         f"seq_len, head_dim]) must agree in batch, key/value heads and length, and head_dim")
    hk = k.shape[1]
    if hk == 0 or hq % hk:
        raise ValueError(f"{fn}: key/value heads ({hk}) must divide the query heads ({hq})")
    if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0.0 <= dropout <= 1.0:
        raise ValueError(f"{fn}: dropout must be a number in [0, 1], got {dropout!r}")
    if hq != hk:
        k, v = (_repeat_heads(t, hq // hk) for t in (k, v))
    mask, live = None, None
    if keep is not None:
        xp = array_module(q._array)
        keep = xp.broadcast_to(xp.asarray(keep, dtype=bool), (b, hq, lq, k.shape[2]))
        live = keep.any(axis=-1, keepdims=True)
        mask = wrap(xp.where(keep | ~live, 0.0, -float("inf")).astype(q.dtype))
        if bool(live.all()):
            live = None
    out, weights = attend(q, k, v, mask, float(dropout), training, d ** -0.5 if scale is None else float(scale))
    if live is not None:
        zero_dead = wrap(live.astype(q.dtype))
        out, weights = out * zero_dead, weights * zero_dead
    return out, weights


def causal_keep(lq: int, lk: int, xp: Any) -> Any:
    return xp.arange(lk)[None, :] <= xp.arange(lq)[:, None]


def check_seed_arguments(fn: str, fixed_seed_offset: Any, dropout: float, training: bool) -> None:
    """paddle's fixed_seed_offset pins the dropout mask of its Philox generator, which pycoll does
    not have: refused where it would matter (dropout while training)."""
    if fixed_seed_offset is not None and dropout and training:
        raise ValueError(f"{fn}: fixed_seed_offset is not supported with dropout > 0 while training "
                         f"(pycoll draws dropout from its own generator: seed it with pycoll.seed)")


def swap_seq_heads(t: Tensor) -> Tensor:
    """[batch, seq, heads, dim] <-> [batch, heads, seq, dim]."""
    return transpose(t, [0, 2, 1, 3])
