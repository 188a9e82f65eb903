"""paddle.nn.functional.sparse_attention: attention whose [seq, seq] layout is a CSR pattern.

Query row i of (batch b, head h) sees the keys sparse_csr_columns[b, h, offset[i]:offset[i + 1]]
(offset = sparse_csr_offset[b, h]), less those where key_padding_mask [batch, seq_k] or
attn_mask [seq_q, seq_k] is 0. The pattern becomes a dense mask for
_flash_attention.masked_attention (scale 1 / sqrt(head_dim), no dropout); a row that keeps no
key gives 0. A column listed twice in a row counts once.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module, to_module
from pycoll.nn._masked_attention import masked_attention
from pycoll.tensor import Tensor

__all__ = ["sparse_attention"]


def _csr_keep(fn: str, offset: Tensor, columns: Tensor, shape: tuple, lk: int) -> np.ndarray:
    b, h, lq = shape
    off = to_module(offset._array, np).astype(np.int64)
    cols = to_module(columns._array, np).astype(np.int64)
    if off.shape != (b, h, lq + 1) or cols.ndim != 3 or cols.shape[:2] != (b, h):
        raise ValueError(f"{fn}: sparse_csr_offset must be [{b}, {h}, {lq + 1}] and sparse_csr_columns "
                         f"[{b}, {h}, nnz], got {list(off.shape)} and {list(cols.shape)}")
    if np.any(off[..., 0] != 0) or np.any(np.diff(off, axis=-1) < 0) or np.any(off[..., -1] > cols.shape[-1]):
        raise ValueError(f"{fn}: each row of sparse_csr_offset must start at 0 and not decrease up to at most "
                         f"nnz={cols.shape[-1]}")
    if cols.size and (cols.min() < 0 or cols.max() >= lk):
        raise ValueError(f"{fn}: sparse_csr_columns must lie in [0, {lk}), got [{cols.min()}, {cols.max()}]")
    keep = np.zeros((b, h, lq, lk), bool)
    for i in range(b):
        for j in range(h):
            rows = np.repeat(np.arange(lq), np.diff(off[i, j]))
            keep[i, j, rows, cols[i, j, :rows.size]] = True
    return keep


def sparse_attention(query: Tensor, key: Tensor, value: Tensor, sparse_csr_offset: Tensor,
                     sparse_csr_columns: Tensor, key_padding_mask: Optional[Tensor] = None,
                     attn_mask: Optional[Tensor] = None, name: Optional[str] = None) -> Tensor:
    """softmax(q k^T / sqrt(d)) v over [batch, num_heads, seq_len, head_dim] tensors, restricted to
    the CSR pattern and the masks; returns [batch, num_heads, seq_len, head_dim]."""
    fn = "sparse_attention"
    query, key, value = as_tensor(query), as_tensor(key), as_tensor(value)
    offset, columns = as_tensor(sparse_csr_offset), as_tensor(sparse_csr_columns)
    for what, t in (("sparse_csr_offset", offset), ("sparse_csr_columns", columns)):
        if t.dtype.kind not in "iu":
            raise TypeError(f"{fn}: {what} must be int32, got dtype {t.dtype}")
    if query.ndim != 4:
        raise ValueError(f"{fn}: query must be 4-D [batch, num_heads, seq_len, head_dim], got {query.shape}")
    lk = key.shape[2] if key.ndim == 4 else 0
    keep = _csr_keep(fn, offset, columns, tuple(query.shape[:3]), lk)
    if key_padding_mask is not None:
        kpm = to_module(as_tensor(key_padding_mask)._array, np)
        if kpm.shape != (query.shape[0], lk):
            raise ValueError(f"{fn}: key_padding_mask must be [{query.shape[0]}, {lk}], got {list(kpm.shape)}")
        keep &= (kpm != 0)[:, None, None, :]
    if attn_mask is not None:
        am = to_module(as_tensor(attn_mask)._array, np)
        if am.shape != (query.shape[2], lk):
            raise ValueError(f"{fn}: attn_mask must be [{query.shape[2]}, {lk}], got {list(am.shape)}")
        keep &= am != 0
    out, _ = masked_attention(query, key, value, to_module(keep, array_module(query._array)), 0.0, True, None, fn)
    return out
