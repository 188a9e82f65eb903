"""paddle.nn.functional.flash_attention (the module; pycoll.nn.functional registers it under that
name): flash_attention, flash_attn_qkvpacked, flash_attn_unpadded, flash_attn_varlen_qkvpacked,
flash_attn_varlen_func (flash-attention 3's varlen entry, also named flash_attention_v3_varlen) and
flashmask_attention, over _masked_attention.masked_attention; sdp_kernel (and paddle.nn.attention's
SDPBackend / sdpa_kernel), get_triangle_upper_mask and calc_reduced_attention_scores.

pycoll has no fused kernel: every function computes the dense [seq_q, seq_k] scores and masks
them, on any device and dtype (paddle's kernels take float16/bfloat16 on a GPU; its CPU build runs
flash_attention and flash_attn_qkvpacked through the same composed math). Variable-length
batches become one block-diagonal mask over the packed rows.
"""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Optional, Sequence, Tuple

import numpy as np

from pycoll._tensor_ops import as_tensor
from pycoll.creation import full_like
from pycoll.device import array_module, to_module
from pycoll.nn._flashmask_attention import _softmax_lse, flashmask_attention
from pycoll.nn._masked_attention import swap_seq_heads, causal_keep, check_seed_arguments, masked_attention
from pycoll.nn._sdpa_backends import SDPBackend, sdpa_kernel
from pycoll.search_ops import triu
from pycoll.shape_ops import reshape, transpose
from pycoll.tensor import Tensor, wrap

__all__ = ["calc_reduced_attention_scores", "flash_attention", "flash_attention_v3_varlen", "flash_attn_qkvpacked",
           "flash_attn_unpadded", "flash_attn_varlen_func", "flash_attn_varlen_qkvpacked", "flashmask_attention",
           "get_triangle_upper_mask", "sdp_kernel", "SDPBackend", "sdpa_kernel"]


@contextlib.contextmanager
def sdp_kernel(enable_math: bool = False, enable_flash: bool = True,
               enable_mem_efficient: bool = True) -> Iterator[None]:
    """paddle's choice of scaled_dot_product_attention backends for a block: pycoll has one
    implementation (the math one), which serves whatever is enabled; at least one must be."""
    if not (enable_math or enable_flash or enable_mem_efficient):
        raise ValueError("sdp_kernel: at least one backend must be enabled")
    yield None


def get_triangle_upper_mask(x: Tensor) -> Tensor:
    """An additive causal mask like ``x``: -1e4 above the diagonal, 0 on and below it, without
    gradient (paddle builds it for its XPU attention)."""
    mask = triu(full_like(as_tensor(x), -1e4), diagonal=1)
    mask.stop_gradient = True
    return mask


def flash_attention(query: Tensor, key: Tensor, value: Tensor, dropout: float = 0.0, causal: bool = False,
                    return_softmax: bool = False, *, fixed_seed_offset: Optional[Tensor] = None,
                    rng_name: str = "", training: bool = True, name: Optional[str] = None,
                    softmax_scale: Optional[float] = None) -> Tuple[Tensor, Optional[Tensor]]:
    """(out, softmax or None): attention over [batch, seq_len, num_heads, head_dim] tensors,
    softmax(softmax_scale q k^T) v with softmax_scale defaulting to 1 / sqrt(head_dim); the
    softmax (after dropout, [batch, heads, seq_q, seq_k]) only with return_softmax."""
    fn = "flash_attention"
    check_seed_arguments(fn, fixed_seed_offset, dropout, training)
    query, key, value = as_tensor(query), as_tensor(key), as_tensor(value)
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        raise ValueError(f"{fn}: query, key and value must be 4-D [batch, seq_len, num_heads, head_dim], got "
                         f"{query.shape}, {key.shape}, {value.shape}")
    q, k, v = swap_seq_heads(query), swap_seq_heads(key), swap_seq_heads(value)
    keep = causal_keep(q.shape[2], k.shape[2], array_module(q._array)) if causal else None
    out, weights = masked_attention(q, k, v, keep, dropout, training, softmax_scale, fn)
    return swap_seq_heads(out), (weights if return_softmax else None)


def _unpack(qkv: Tensor, head_axis: int, fn: str) -> Tuple[Tensor, Tensor, Tensor]:
    """qkv [..., heads_q / heads_k + 2, heads_k, dim] -> query [..., heads_q, dim], key, value."""
    qkv = as_tensor(qkv)
    if qkv.ndim != head_axis + 3 or qkv.shape[head_axis] < 3:
        raise ValueError(f"{fn}: qkv must be {head_axis + 3}-D with num_heads/num_heads_k + 2 (>= 3) along axis "
                         f"{head_axis}, got shape {qkv.shape}")
    lead = qkv.shape[:head_axis]
    groups, hk, d = qkv.shape[head_axis:]
    at = (slice(None),) * head_axis
    query = reshape(qkv[at + (slice(0, groups - 2),)], [*lead, (groups - 2) * hk, d])
    return query, qkv[at + (groups - 2,)], qkv[at + (groups - 1,)]


def flash_attn_qkvpacked(qkv: Tensor, dropout: float = 0.0, causal: bool = False, return_softmax: bool = False,
                         *, fixed_seed_offset: Optional[Tensor] = None, rng_name: str = "", training: bool = True,
                         name: Optional[str] = None) -> Tuple[Tensor, Optional[Tensor]]:
    """flash_attention of a packed qkv [batch, seq_len, num_heads/num_heads_k + 2, num_heads_k,
    head_dim]: the leading groups are the query heads, then key, then value."""
    query, key, value = _unpack(qkv, 2, "flash_attn_qkvpacked")
    return flash_attention(query, key, value, dropout, causal, return_softmax, fixed_seed_offset=fixed_seed_offset,
                           training=training)


def _segments(cu_seqlens: Any, rows: int, padded_to: Optional[int], what: str, fn: str) -> Tuple[Any, Any]:
    """(segment id, position in it) of each of `rows` rows; -1 for rows in no sequence. Sequence i
    starts at cu_seqlens[i] (packed) or at i * padded_to (padded layout) and is
    cu_seqlens[i + 1] - cu_seqlens[i] long."""
    cu = to_module(as_tensor(cu_seqlens)._array, np).astype(np.int64).ravel()
    if cu.size < 2 or cu[0] != 0 or np.any(np.diff(cu) < 0):
        raise ValueError(f"{fn}: {what} must be 0 then non-decreasing cumulative lengths, got {cu.tolist()}")
    lengths = np.diff(cu)
    starts = cu[:-1] if padded_to is None else np.arange(lengths.size) * padded_to
    if padded_to is not None and lengths.max() > padded_to:
        raise ValueError(f"{fn}: {what} holds a sequence of {int(lengths.max())} rows, longer than its padded "
                         f"length {padded_to}")
    if int((starts + lengths).max()) > rows:
        raise ValueError(f"{fn}: {what} covers {int((starts + lengths).max())} rows, the tensor has {rows}")
    seg, pos = np.full(rows, -1), np.zeros(rows, np.int64)
    for i, (s, n) in enumerate(zip(starts, lengths)):
        seg[s:s + n], pos[s:s + n] = i, np.arange(n)
    return seg, pos


def _varlen_inputs(query: Tensor, key: Tensor, value: Tensor, cu_seqlens_q: Tensor, cu_seqlens_k: Tensor,
                   max_seqlen_q: int, max_seqlen_k: int, padded: bool, fn: str) -> Tuple[Tensor, Tensor, Tensor, Any]:
    """Rows [total, heads, dim] as [1, heads, total, dim] query, key and value, and the bool
    [total_q, total_k] mask of the keys each query row sees: those of its own sequence (rows in no
    sequence see none)."""
    query, key, value = as_tensor(query), as_tensor(key), as_tensor(value)
    if query.ndim != 3 or key.ndim != 3 or value.ndim != 3:
        raise ValueError(f"{fn}: query, key and value must be 3-D [total_seq_len, num_heads, head_dim], got "
                         f"{query.shape}, {key.shape}, {value.shape}")
    seg_q, pos_q = _segments(cu_seqlens_q, query.shape[0], max_seqlen_q if padded else None, "cu_seqlens_q", fn)
    seg_k, pos_k = _segments(cu_seqlens_k, key.shape[0], max_seqlen_k if padded else None, "cu_seqlens_k", fn)
    if seg_q.max(initial=-1) != seg_k.max(initial=-1):
        raise ValueError(f"{fn}: cu_seqlens_q and cu_seqlens_k must describe the same number of sequences")
    keep = (seg_q[:, None] == seg_k[None, :]) & (seg_q[:, None] >= 0)
    q, k, v = (transpose(reshape(t, [1, *t.shape]), [0, 2, 1, 3]) for t in (query, key, value))
    return q, k, v, (keep, pos_q, pos_k)


def _varlen(query: Tensor, key: Tensor, value: Tensor, cu_seqlens_q: Tensor, cu_seqlens_k: Tensor,
            max_seqlen_q: int, max_seqlen_k: int, scale: Optional[float], dropout: float, causal: bool,
            return_softmax: bool, fixed_seed_offset: Optional[Tensor], training: bool, padded: bool,
            fn: str) -> Tuple[Tensor, Optional[Tensor]]:
    """Variable-length attention over rows [total, heads, dim]: each query row sees the key rows of
    its own sequence (causally: up to its own position); rows in no sequence give 0."""
    check_seed_arguments(fn, fixed_seed_offset, dropout, training)
    q, k, v, (keep, pos_q, pos_k) = _varlen_inputs(query, key, value, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                                   max_seqlen_k, padded, fn)
    if causal:
        keep &= pos_k[None, :] <= pos_q[:, None]
    out, weights = masked_attention(q, k, v, to_module(keep, array_module(q._array)), dropout, training, scale, fn)
    out = reshape(transpose(out, [0, 2, 1, 3]), [q.shape[2], q.shape[1], v.shape[3]])
    return out, (weights if return_softmax else None)


def flash_attn_unpadded(query: Tensor, key: Tensor, value: Tensor, cu_seqlens_q: Tensor, cu_seqlens_k: Tensor,
                        max_seqlen_q: int, max_seqlen_k: int, scale: float, dropout: float = 0.0,
                        causal: bool = False, return_softmax: bool = False,
                        fixed_seed_offset: Optional[Tensor] = None, rng_name: str = "", training: bool = True,
                        name: Optional[str] = None) -> Tuple[Tensor, Optional[Tensor]]:
    """(out [total_q, heads, dim], softmax or None): the sequences packed one after another,
    sequence i on rows cu_seqlens[i]:cu_seqlens[i + 1] of query (and of key/value by cu_seqlens_k).
    The softmax, with return_softmax, is [1, heads, total_q, total_k] (zero across sequences)."""
    return _varlen(query, key, value, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale, dropout,
                   causal, return_softmax, fixed_seed_offset, training, False, "flash_attn_unpadded")


def flash_attn_varlen_qkvpacked(qkv: Tensor, cu_seqlens_q: Tensor, cu_seqlens_k: Tensor, max_seqlen_q: int,
                                max_seqlen_k: int, scale: float, dropout: float = 0.0, causal: bool = False,
                                return_softmax: bool = False, fixed_seed_offset: Optional[Tensor] = None,
                                rng_name: str = "", varlen_padded: bool = True, training: bool = True,
                                name: Optional[str] = None) -> Tuple[Tensor, Optional[Tensor]]:
    """flash_attn_unpadded of a packed qkv [total_seq_len, num_heads/num_heads_k + 2, num_heads_k,
    head_dim]. With varlen_padded (paddle's default) every sequence owns max_seqlen rows, sequence i
    starting at row i * max_seqlen_q and filling its first cu_seqlens[i + 1] - cu_seqlens[i]; the
    padding rows are not computed and come out 0. Without it the sequences are packed as in
    flash_attn_unpadded."""
    query, key, value = _unpack(qkv, 1, "flash_attn_varlen_qkvpacked")
    return _varlen(query, key, value, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k, scale, dropout,
                   causal, return_softmax, fixed_seed_offset, training, bool(varlen_padded),
                   "flash_attn_varlen_qkvpacked")


def flash_attn_varlen_func(query: Tensor, key: Tensor, value: Tensor, cu_seqlens_q: Tensor, cu_seqlens_k: Tensor,
                           max_seqlen_q: int, max_seqlen_k: int, seqused_q: Optional[Tensor] = None,
                           seqused_k: Optional[Tensor] = None, softmax_scale: Optional[float] = None,
                           causal: bool = False, qv: Optional[Tensor] = None, q_descale: Optional[Tensor] = None,
                           k_descale: Optional[Tensor] = None, v_descale: Optional[Tensor] = None,
                           window_size: Sequence[int] = (-1, -1), softcap: float = 0.0, num_splits: int = 1,
                           pack_gqa: Optional[bool] = None, sm_margin: int = 0) -> Tuple[Tensor, Tensor]:
    """(out [total_q, heads, dim], softmax_lse [heads, total_q] float32): flash-attention 3's
    variable-length attention, the packed layout of flash_attn_unpadded (sequence i on rows
    cu_seqlens[i]:cu_seqlens[i + 1]); softmax_scale defaults to head_dim ** -0.5. softmax_lse is
    the log-sum-exp of each query row's scaled scores (+inf for a row in no sequence).
    ``num_splits``, ``pack_gqa`` and ``sm_margin`` only schedule paddle's kernel. Refused: ``qv``
    (paddle asserts it is None), the fp8 descales, ``seqused_*``, a local ``window_size`` and
    ``softcap``, which pycoll does not implement."""
    fn = "flash_attn_varlen_func"
    if qv is not None:
        raise ValueError(f"{fn}: qv must be None (paddle's flash_attn_varlen_func does not support it)")
    for name, got in (("seqused_q", seqused_q), ("seqused_k", seqused_k), ("q_descale", q_descale),
                      ("k_descale", k_descale), ("v_descale", v_descale)):
        if got is not None:
            raise ValueError(f"{fn}: {name} is not supported by pycoll (no fp8 / partial-sequence kernel); got a "
                             f"value, need None")
    if tuple(window_size) != (-1, -1):
        raise ValueError(f"{fn}: window_size={tuple(window_size)!r} is not supported; need (-1, -1) (no window)")
    if softcap != 0.0:
        raise ValueError(f"{fn}: softcap={softcap!r} is not supported; need 0.0")
    q, k, v, (keep, pos_q, pos_k) = _varlen_inputs(query, key, value, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                                                   max_seqlen_k, False, fn)
    if causal:
        keep &= pos_k[None, :] <= pos_q[:, None]
    scale = q.shape[3] ** -0.5 if softmax_scale is None else float(softmax_scale)
    keep = to_module(keep, array_module(q._array))
    out, _ = masked_attention(q, k, v, keep, 0.0, False, scale, fn)
    lse = _softmax_lse(q, k, keep, scale)
    return reshape(transpose(out, [0, 2, 1, 3]), [q.shape[2], q.shape[1], v.shape[3]]), reshape(lse, lse.shape[1:])


def flash_attention_v3_varlen(query: Tensor, key: Tensor, value: Tensor, cu_seqlens_q: Tensor,
                              cu_seqlens_k: Tensor, max_seqlen_q: int, max_seqlen_k: int,
                              seqused_q: Optional[Tensor] = None, seqused_k: Optional[Tensor] = None,
                              softmax_scale: Optional[float] = None, causal: bool = False,
                              qv: Optional[Tensor] = None, q_descale: Optional[Tensor] = None,
                              k_descale: Optional[Tensor] = None, v_descale: Optional[Tensor] = None,
                              window_size: Sequence[int] = (-1, -1), softcap: float = 0.0, num_splits: int = 1,
                              pack_gqa: Optional[bool] = None, sm_margin: int = 0) -> Tuple[Tensor, Tensor]:
    """paddle's other name for flash_attn_varlen_func (same arguments, same result)."""
    return flash_attn_varlen_func(query, key, value, cu_seqlens_q, cu_seqlens_k, max_seqlen_q, max_seqlen_k,
                                  seqused_q, seqused_k, softmax_scale, causal, qv, q_descale, k_descale, v_descale,
                                  window_size, softcap, num_splits, pack_gqa, sm_margin)


def calc_reduced_attention_scores(query: Tensor, key: Tensor, softmax_lse: Tensor) -> Tensor:
    """sum over the query rows of softmax(q k^T / sqrt(head_dim)): float32 [batch, heads, 1, seq_k],
    each row's softmax taken as exp(score - softmax_lse) with the lse a flash kernel returned
    ([batch, heads, seq_q], or longer: the kernel's rounded rows past seq_q are ignored). For
    inference only, as paddle's: query and key must not require gradients."""
    fn = "calc_reduced_attention_scores"
    query, key, softmax_lse = as_tensor(query), as_tensor(key), as_tensor(softmax_lse)
    if not (query.stop_gradient and key.stop_gradient):
        raise ValueError(f"{fn} is for inference only: query and key need stop_gradient=True, got "
                         f"{query.stop_gradient} and {key.stop_gradient}")
    if query.ndim != 4 or key.ndim != 4 or query.shape[3] != key.shape[3] or query.shape[0] != key.shape[0]:
        raise ValueError(f"{fn}: query and key must be 4-D [batch, seq_len, num_heads, head_dim] with the same batch "
                         f"and head_dim, got {query.shape} and {key.shape}")
    batch, seq_q, heads, dim = query.shape
    if softmax_lse.ndim != 3 or list(softmax_lse.shape[:2]) != [batch, heads] or softmax_lse.shape[2] < seq_q:
        raise ValueError(f"{fn}: softmax_lse must be [batch, num_heads, >= seq_q] = [{batch}, {heads}, >= {seq_q}], "
                         f"got {softmax_lse.shape}")
    q, k = swap_seq_heads(query)._array, swap_seq_heads(key)._array
    xp = array_module(q)
    if k.shape[1] != heads:
        k = xp.repeat(k, heads // k.shape[1], axis=1)
    scores = xp.matmul(q.astype(xp.float32) * dim ** -0.5, xp.swapaxes(k.astype(xp.float32), -1, -2))
    lse = softmax_lse._array[..., :seq_q, None].astype(xp.float32)
    return wrap(xp.exp(scores - lse).sum(axis=-2, keepdims=True))
