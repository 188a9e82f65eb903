"""paddle.compat.nn.MultiheadAttention: torch's multi-head attention layer (packed in_proj_weight
[3 * embed_dim, embed_dim] when key and value have embed_dim features, else q/k/v_proj_weight;
batch_first; add_bias_kv; add_zero_attn; key_padding_mask and attn_mask, bool (True: masked out)
or additive float), as paddle 3.3.1 defines it, over pycoll's ops. Without need_weights the
attention runs through compat's scaled_dot_product_attention; with it, weights are computed
explicitly (averaged over the heads with average_attn_weights)."""
from __future__ import annotations

from typing import Any, Optional, Tuple

from pycoll.compat.nn.layers import Linear
from pycoll.compat.nn.functional import scaled_dot_product_attention
from pycoll.creation import ones, zeros
from pycoll.type_info import finfo
from pycoll.nn._activation_functional import softmax
from pycoll.nn._dropout_functional import dropout
from pycoll.nn.functional import linear as _linear
from pycoll.nn.initializer import XavierNormal, XavierUniform
from pycoll.nn.layer import Layer
from pycoll.search_ops import triu, where
from pycoll.shape_ops import concat
from pycoll.tensor import Tensor

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Layer):
    """forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False) -> (attn_output, attn_weights or None); inputs
    [seq, batch, features] ([batch, seq, features] with batch_first) or unbatched [seq, features]."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: Optional[int] = None,
                 vdim: Optional[int] = None, batch_first: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__(dtype=dtype)
        for name, size in (("embed_dim", embed_dim), ("num_heads", num_heads)):
            if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
                raise ValueError(f"paddle.compat.nn.MultiheadAttention: {name} must be a positive int, got {size!r}")
        if embed_dim % num_heads:
            raise ValueError(f"paddle.compat.nn.MultiheadAttention: embed_dim ({embed_dim}) must be divisible by "
                             f"num_heads ({num_heads})")
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        self.add_bias_kv, self.add_zero_attn = add_bias_kv, add_zero_attn

        def weight(shape: list) -> Tensor:
            return self.create_parameter(shape, dtype=dtype, default_initializer=XavierUniform())

        def bias_of(size: int) -> Optional[Tensor]:
            return self.create_parameter([size], dtype=dtype, is_bias=True) if bias else None

        self.in_proj_bias = self.q_proj_bias = self.k_proj_bias = self.v_proj_bias = None
        self.in_proj_weight = self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        if self._qkv_same_embed_dim:
            self.in_proj_weight = weight([3 * embed_dim, embed_dim])
            self.in_proj_bias = bias_of(3 * embed_dim)
        else:
            self.q_proj_weight = weight([embed_dim, embed_dim])
            self.k_proj_weight = weight([embed_dim, self.kdim])
            self.v_proj_weight = weight([embed_dim, self.vdim])
            self.q_proj_bias, self.k_proj_bias, self.v_proj_bias = (bias_of(embed_dim) for _ in range(3))
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        self.bias_k = self.bias_v = None
        if add_bias_kv:
            self.bias_k, self.bias_v = (self.create_parameter([1, 1, embed_dim], dtype=dtype, is_bias=True,
                                                              default_initializer=XavierNormal()) for _ in range(2))
        if device is not None:
            self.to(device)

    def _project(self, query: Tensor, key: Tensor, value: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
        if not self._qkv_same_embed_dim:
            return (_linear(query, self.q_proj_weight.T, self.q_proj_bias),
                    _linear(key, self.k_proj_weight.T, self.k_proj_bias),
                    _linear(value, self.v_proj_weight.T, self.v_proj_bias))
        weights = self.in_proj_weight.chunk(3, axis=0)
        biases = self.in_proj_bias.chunk(3, axis=0) if self.in_proj_bias is not None else (None,) * 3
        return tuple(_linear(x, w.T, b) for x, w, b in zip((query, key, value), weights, biases))

    def _heads(self, q: Tensor, k: Tensor, v: Tensor, batch: int) -> Tuple[Tensor, Tensor, Tensor]:
        """[batch, seq, embed] -> [batch, heads, seq, head_dim], bias_k/v and a zero key/value appended."""
        if self.add_bias_kv:
            k = concat([k, self.bias_k.expand([batch, -1, -1])], axis=1)
            v = concat([v, self.bias_v.expand([batch, -1, -1])], axis=1)
        split = [batch, -1, self.num_heads, self.head_dim]
        q, k, v = (t.reshape(split).transpose([0, 2, 1, 3]) for t in (q, k, v))
        if self.add_zero_attn:
            extra = zeros([batch, self.num_heads, 1, self.head_dim], dtype=k.dtype)
            k, v = concat([k, extra], axis=2), concat([v, extra], axis=2)
        return q, k, v

    @staticmethod
    def _additive(mask: Tensor, dtype: Any) -> Tensor:
        """A bool mask (True: masked out) as 0 / the dtype's lowest value."""
        return where(mask, zeros([], dtype) + finfo(dtype).min, zeros(mask.shape, dtype))

    def _mask(self, attn_mask: Optional[Tensor], key_padding_mask: Optional[Tensor], tgt_len: int, src_len: int,
              dtype: Any, batch: int, is_causal: bool, need_weights: bool) -> Optional[Tensor]:
        """One [batch, heads, tgt_len, keys] mask of dtype (or None) from the masks given."""
        extra = int(self.add_zero_attn) + int(self.add_bias_kv)
        if is_causal and not extra and key_padding_mask is None and not need_weights:
            return None
        if attn_mask is None and not is_causal and key_padding_mask is None:
            return None
        if attn_mask is None:
            attn_mask = (triu(ones([tgt_len, src_len], "bool"), 1) if is_causal
                         else zeros([tgt_len, src_len], dtype))
        if extra:
            attn_mask = concat([attn_mask, zeros(attn_mask.shape[:-1] + [extra], attn_mask.dtype)], axis=-1)
            if key_padding_mask is not None:
                key_padding_mask = concat([key_padding_mask, zeros([batch, extra], key_padding_mask.dtype)], axis=-1)
        if attn_mask.ndim == 2:
            attn_mask = attn_mask.expand([batch * self.num_heads] + attn_mask.shape)
        if attn_mask.ndim == 3:
            attn_mask = attn_mask.reshape([batch, self.num_heads, tgt_len, -1])
        if key_padding_mask is not None:
            padding = key_padding_mask.unsqueeze([1, 2]).tile([1] + attn_mask.shape[1:3] + [1])
            if attn_mask.dtype == padding.dtype == "bool":
                attn_mask = attn_mask | padding
            else:
                attn_mask = self._float_mask(attn_mask, dtype) + self._float_mask(padding, dtype)
        return self._float_mask(attn_mask, dtype)

    def _float_mask(self, mask: Tensor, dtype: Any) -> Tensor:
        if mask.dtype == "bool":
            return self._additive(mask, dtype)
        return mask if mask.dtype == dtype else mask.astype(dtype)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Optional[Tensor] = None,
                need_weights: bool = True, attn_mask: Optional[Tensor] = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> Tuple[Tensor, Optional[Tensor]]:
        for name, t in (("query", query), ("key", key), ("value", value)):
            if not isinstance(t, Tensor) or t.ndim not in (2, 3):
                got = f"shape {t.shape}" if isinstance(t, Tensor) else type(t).__name__
                raise ValueError(f"paddle.compat.nn.MultiheadAttention: {name} must be a 2-D or 3-D Tensor, got {got}")
        batched = query.ndim == 3
        seq_axis_batch = 0 if self.batch_first else 1
        if not batched:
            query, key, value = (t.unsqueeze(seq_axis_batch) for t in (query, key, value))
            if key_padding_mask is not None and key_padding_mask.ndim != 2:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        if not self.batch_first:
            query, key, value = (t.transpose([1, 0, 2]) for t in (query, key, value))
        batch, tgt_len = query.shape[0], query.shape[1]
        src_len = key.shape[1]
        if key_padding_mask is not None and key_padding_mask.shape != [batch, src_len]:
            raise ValueError(f"paddle.compat.nn.MultiheadAttention: key_padding_mask must have shape "
                             f"[batch, source length] = {[batch, src_len]}, got {key_padding_mask.shape}")
        q, k, v = self._heads(*self._project(query, key, value), batch)
        mask = self._mask(attn_mask, key_padding_mask, tgt_len, src_len, q.dtype, batch, is_causal, need_weights)
        p = self.dropout if self.training else 0.0
        weights = None
        if need_weights:
            scores = (q @ k.transpose([0, 1, 3, 2])) / (self.head_dim ** 0.5)
            weights = dropout(softmax(scores if mask is None else scores + mask, axis=-1), p, training=self.training)
            context = weights @ v
        else:
            context = scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p,
                                                   is_causal=is_causal and mask is None)
        out = self.out_proj(context.transpose([0, 2, 1, 3]).reshape([batch, tgt_len, self.embed_dim]))
        if not self.batch_first:
            out = out.transpose([1, 0, 2])
        if weights is not None and average_attn_weights:
            weights = weights.mean(axis=1)
        if not batched:
            out = out.squeeze(seq_axis_batch)
            weights = None if weights is None else weights.squeeze(0)
        return out, weights
