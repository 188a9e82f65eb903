"""paddle.nn.functional.flashmask_attention: attention under FlashMask's column-wise sparse mask.

`startend_row_indices` [batch, heads (1, heads_q or heads_k), seq_k, {1, 2, 4}] says, for each key
column j, which query rows may not see it (paddle's documented dense form, rows i):

    causal, 1 column  (LTS):           rows i >= LTS masked, and rows i < j (causal)
    causal, 2 columns (LTS, LTE):      rows LTS <= i < LTE masked, and rows i < j
    bidirectional, 2 (LTS, UTE):       rows i >= LTS masked, and rows i < UTE
    bidirectional, 4 (LTS, LTE, UTS, UTE): rows LTS <= i < LTE and UTS <= i < UTE masked

The dense mask is built from that and the attention is _flash_attention.masked_attention (a
query row that sees no key gives 0, as paddle's kernel). `window_size` builds paddle's sliding
window indices; `block_mask` [batch, heads, ceil(seq_q/128), ceil(seq_k/128)] (1 keep, 0 drop)
also hides whole 128 x 128 blocks.
"""
from __future__ import annotations

from typing import Any, List, Optional, Union

from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module
from pycoll.nn._masked_attention import swap_seq_heads, causal_keep, check_seed_arguments, masked_attention
from pycoll.tensor import Tensor, wrap

__all__ = ["flashmask_attention"]

_BLOCK = 128


def _window_indices(window_size: Any, causal: bool, sq: int, batch: int, xp: Any) -> Any:
    """paddle's startend_row_indices for a sliding window of (left, right) keys."""
    left, right = (window_size, window_size) if isinstance(window_size, int) else tuple(window_size)
    lts = xp.clip(xp.arange(left + 1, sq + left + 1), None, sq)
    cols = [lts] if causal else [lts, xp.clip(xp.arange(-right, sq - right), 0, sq)]
    one = xp.stack(cols, axis=-1).astype(xp.int32)[None, None]
    return xp.broadcast_to(one, (batch, 1, sq, len(cols)))


def flashmask_keep(startend_row_indices: Any, causal: bool, sq: int) -> Any:
    """The bool mask [batch, heads, sq, seq_k] of the query rows allowed to see each key."""
    xp = array_module(startend_row_indices)
    idx = startend_row_indices.astype(xp.int64)
    rows = xp.arange(sq)[:, None]
    col = [idx[..., c][:, :, None, :] for c in range(idx.shape[-1])]  # each [b, h, 1, sk]
    n = len(col)
    if causal:
        masked = (rows >= col[0]) if n == 1 else ((rows >= col[0]) & (rows < col[1]))
        masked = masked | ~causal_keep(sq, idx.shape[2], xp)
    elif n == 2:
        masked = (rows >= col[0]) | (rows < col[1])
    else:
        masked = ((rows >= col[0]) & (rows < col[1])) | ((rows >= col[2]) & (rows < col[3]))
    return ~masked


def _check_indices(fn: str, idx: Tensor, query: Tensor, key: Tensor, causal: bool) -> None:
    if idx.dtype.name != "int32":
        raise TypeError(f"{fn}: startend_row_indices must be int32, got dtype {idx.dtype}")
    heads = (1, query.shape[2], key.shape[2])
    if idx.ndim != 4 or idx.shape[0] != key.shape[0] or idx.shape[2] != key.shape[1] or idx.shape[1] not in heads:
        raise ValueError(f"{fn}: startend_row_indices must be [batch={key.shape[0]}, 1 or num_heads "
                         f"({query.shape[2]}) or key heads ({key.shape[2]}), seq_k={key.shape[1]}, 1|2|4], got "
                         f"{idx.shape}")
    allowed = (1, 2) if causal else (2, 4)
    if idx.shape[-1] not in allowed:
        raise ValueError(f"{fn}: with causal={causal} the last axis of startend_row_indices must be "
                         f"{' or '.join(map(str, allowed))}, got {idx.shape[-1]}")


def _block_keep(fn: str, block_mask: Any, idx_heads: int, sq: int, sk: int, batch: int) -> Any:
    bm = as_tensor(block_mask)
    want = [batch, idx_heads, -(-sq // _BLOCK), -(-sk // _BLOCK)]
    if bm.dtype.name != "int32" or bm.shape != want:
        raise ValueError(f"{fn}: block_mask must be int32 of shape {want} (blocks of {_BLOCK}), got "
                         f"{bm.dtype} {bm.shape}")
    xp = array_module(bm._array)
    rows, cols = xp.arange(sq) // _BLOCK, xp.arange(sk) // _BLOCK
    return bm._array[:, :, rows][:, :, :, cols] != 0


def _softmax_lse(q: Tensor, k: Tensor, keep: Any, scale: float) -> Tensor:
    """log-sum-exp of each query row's kept scores, float32 [batch, heads, seq_q]; +inf for a row
    that sees no key (the flash kernels' convention)."""
    xp = array_module(q._array)
    kk = k._array
    if kk.shape[1] != q.shape[1]:
        kk = xp.repeat(kk, q.shape[1] // kk.shape[1], axis=1)
    scores = xp.matmul(q._array.astype(xp.float32) * scale, xp.swapaxes(kk.astype(xp.float32), -1, -2))
    scores = xp.where(keep, scores, -xp.inf)
    top = scores.max(axis=-1, keepdims=True)
    safe = xp.where(xp.isfinite(top), top, 0)
    total = xp.exp(scores - safe).sum(axis=-1)
    lse = xp.log(xp.where(total > 0, total, 1)) + safe[..., 0]
    return wrap(xp.where(total > 0, lse, xp.inf).astype(xp.float32))


def flashmask_attention(query: Tensor, key: Tensor, value: Tensor, startend_row_indices: Optional[Tensor] = None,
                        *, dropout: float = 0.0, causal: bool = False, window_size: Union[int, tuple, None] = None,
                        return_softmax_lse: bool = False, return_seed_offset: bool = False,
                        fixed_seed_offset: Optional[Tensor] = None, rng_name: str = "", training: bool = True,
                        name: Optional[str] = None, softmax_scale: Optional[float] = None,
                        block_mask: Optional[Tensor] = None) -> Union[Tensor, List[Tensor]]:
    """Attention of [batch, seq, heads, head_dim] tensors under the FlashMask given by
    startend_row_indices (see the module), or under window_size, or plain (causal or not) when
    neither is given. Returns the output, or [output, softmax_lse] with return_softmax_lse."""
    fn = "flashmask_attention"
    if return_seed_offset:
        raise ValueError(f"{fn}: return_seed_offset is not supported: pycoll's dropout has no Philox seed/offset "
                         f"pair to return")
    check_seed_arguments(fn, fixed_seed_offset, dropout, training)
    query, key, value = as_tensor(query), as_tensor(key), as_tensor(value)
    if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
        raise ValueError(f"{fn}: query, key and value must be 4-D [batch, seq_len, num_heads, head_dim], got "
                         f"{query.shape}, {key.shape}, {value.shape}")
    xp = array_module(query._array)
    batch, sq, hq, d = query.shape
    if window_size is not None:
        if startend_row_indices is not None:
            raise ValueError(f"{fn}: window_size and startend_row_indices cannot be given together")
        startend_row_indices = wrap(_window_indices(window_size, causal, sq, batch, xp))
    if block_mask is not None and startend_row_indices is None:
        raise ValueError(f"{fn}: block_mask needs startend_row_indices")
    if startend_row_indices is None:
        keep = causal_keep(sq, key.shape[1], xp) if causal else None
    else:
        idx = as_tensor(startend_row_indices)
        _check_indices(fn, idx, query, key, causal)
        keep = flashmask_keep(idx._array, causal, sq)
        if block_mask is not None:
            keep = keep & _block_keep(fn, block_mask, idx.shape[1], sq, key.shape[1], batch)
        if keep.shape[1] not in (1, hq):  # one mask per key head: each serves its group of query heads
            keep = xp.repeat(keep, hq // keep.shape[1], axis=1)
    q, k, v = swap_seq_heads(query), swap_seq_heads(key), swap_seq_heads(value)
    out, _ = masked_attention(q, k, v, keep, dropout, training, softmax_scale, fn)
    out = swap_seq_heads(out)
    if not return_softmax_lse:
        return out
    full = xp.ones((1, 1, sq, key.shape[1]), bool) if keep is None else keep
    return [out, _softmax_lse(q, k, full, d ** -0.5 if softmax_scale is None else float(softmax_scale))]
