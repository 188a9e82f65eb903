"""paddle.incubate's ``fused_multi_transformer`` (a GPU inference kernel in paddle), written out
as its documented layer stack with pycoll's ops. For each layer i:

    residual = x;  h = norm(x) if pre_layer_norm else x
    q, k, v = split(h @ qkv_weights[i] + qkv_biases[i])           # [batch, heads, seq, head_dim]
    h = softmax(q k^T / sqrt(head_dim) + attn_mask) v  (dropout)  -> linear_weights[i] + bias
    x = residual + dropout(h)            then norm(x) unless pre_layer_norm
    residual = x;  h = ffn_norm(x) if pre_layer_norm else x
    h = ffn2(dropout(act(ffn1(h) + ffn1_bias))) + ffn2_bias       # act as fused_bias_act's
    x = residual + dropout(h)            then ffn_norm(x) unless pre_layer_norm

norm is layer_norm (ln_scales / ln_biases) or, with norm_type 'rmsnorm', RMSNorm. With
cache_kvs (one [2, batch, heads, max_seq, head_dim] tensor per layer) each layer writes its keys
and values into its cache in place: at positions 0..seq-1 when time_step is None (the prompt),
else, for a single new token, at position time_step, attending over positions 0..time_step; the
output is then (out, cache_kvs). The generation extras of paddle's kernel (rotary_embs,
pre_caches, beam_offset, seq_lens, gqa_group_size, residual_alpha != 1, ring_id) are refused."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, Union

from pycoll._tensor_ops import as_tensor
from pycoll.incubate.nn.functional._checks import check_dropout
from pycoll.incubate.nn.functional.fused_bias_act import fused_bias_act
from pycoll.math_ops import add, matmul, scale
from pycoll.nn.functional import dropout, layer_norm, linear, rms_norm, softmax
from pycoll.shape_ops import reshape, transpose
from pycoll.tensor import Tensor, wrap

__all__ = ["fused_multi_transformer"]

_FN = "fused_multi_transformer"


def _refuse(name: str, value: Any, default: Any) -> None:
    if not (value is default or value == default):
        raise NotImplementedError(f"{_FN}: {name}={value!r} (a generation extra of paddle's GPU kernel) is not "
                                  f"implemented; leave it at {default!r}")


def _norm(h: Tensor, weight: Tensor, bias: Optional[Tensor], epsilon: float, norm_type: str) -> Tensor:
    if norm_type == "layernorm":
        return layer_norm(h, [h.shape[-1]], weight, bias, epsilon)
    out = rms_norm(h, [h.shape[-1]], weight, epsilon)[0]
    return out if bias is None else add(out, bias)


def _at(seq: Optional[Sequence[Any]], i: int) -> Any:
    return None if seq is None else seq[i]


def _project_qkv(h: Tensor, weight: Any, bias: Any, trans_qkvw: bool) -> Tuple[Tensor, Tensor, Tensor]:
    """q, k, v as [batch, heads, seq, head_dim]; weight [3, heads, head_dim, embed] (trans_qkvw)
    or [embed, 3, heads, head_dim]."""
    w = as_tensor(weight)
    embed = h.shape[-1]
    if w.ndim != 4 or (trans_qkvw and (w.shape[0] != 3 or w.shape[3] != embed)) \
            or (not trans_qkvw and (w.shape[0] != embed or w.shape[1] != 3)):
        want = "[3, num_heads, head_dim, embed_dim]" if trans_qkvw else "[embed_dim, 3, num_heads, head_dim]"
        raise ValueError(f"{_FN}: qkv weights must be {want} with embed_dim {embed}, got {w.shape}")
    heads, head_dim = (w.shape[1], w.shape[2]) if trans_qkvw else (w.shape[2], w.shape[3])
    if trans_qkvw:
        packed = matmul(h, reshape(w, [3 * heads * head_dim, embed]), transpose_y=True)
    else:
        packed = matmul(h, reshape(w, [embed, 3 * heads * head_dim]))
    if bias is not None:
        packed = add(packed, reshape(bias, [-1]))
    qkv = transpose(reshape(packed, [h.shape[0], h.shape[1], 3, heads, head_dim]), [2, 0, 3, 1, 4])
    return qkv[0], qkv[1], qkv[2]


def _use_cache(cache: Any, k: Tensor, v: Tensor, step: Optional[int]) -> Tuple[Tensor, Tensor]:
    """Write k and v into the cache in place; the keys and values to attend over."""
    c = as_tensor(cache)
    seq = k.shape[2]
    start = 0 if step is None else step
    if c.ndim != 5 or c.shape[0] != 2 or c.shape[1:3] != k.shape[:2] or c.shape[4] != k.shape[3] \
            or start + seq > c.shape[3]:
        raise ValueError(f"{_FN}: each cache_kvs entry must be [2, {k.shape[0]}, {k.shape[1]}, max_seq >= "
                         f"{start + seq}, {k.shape[3]}], got {c.shape}")
    a = c._array
    a[0, :, :, start:start + seq] = k._array
    a[1, :, :, start:start + seq] = v._array
    if step is None:
        return k, v
    return wrap(a[0, :, :, :step + 1]), wrap(a[1, :, :, :step + 1])


def fused_multi_transformer(x: Tensor, ln_scales: Sequence[Tensor], ln_biases: Optional[Sequence[Tensor]],
                            qkv_weights: Sequence[Tensor], qkv_biases: Optional[Sequence[Tensor]],
                            linear_weights: Sequence[Tensor], linear_biases: Optional[Sequence[Tensor]],
                            ffn_ln_scales: Sequence[Tensor], ffn_ln_biases: Optional[Sequence[Tensor]],
                            ffn1_weights: Sequence[Tensor], ffn1_biases: Optional[Sequence[Tensor]],
                            ffn2_weights: Sequence[Tensor], ffn2_biases: Optional[Sequence[Tensor]],
                            pre_layer_norm: bool = True, epsilon: float = 1e-05, residual_alpha: float = 1.0,
                            cache_kvs: Optional[Sequence[Tensor]] = None, beam_offset: Any = None,
                            pre_caches: Any = None, seq_lens: Any = None, rotary_embs: Any = None,
                            time_step: Any = None, attn_mask: Optional[Tensor] = None, dropout_rate: float = 0.0,
                            rotary_emb_dims: int = 0, activation: str = "gelu", training: bool = False,
                            mode: str = "upscale_in_train", trans_qkvw: bool = True, ring_id: int = -1,
                            norm_type: str = "layernorm", use_neox_rotary_style: bool = False,
                            gqa_group_size: int = -1, name: Optional[str] = None
                            ) -> Union[Tensor, Tuple[Tensor, List[Tensor]]]:
    """The layer stack of the module's docstring over x [batch, seq, embed_dim]."""
    check_dropout(_FN, "dropout_rate", dropout_rate, mode)
    for arg, value, default in (("residual_alpha", residual_alpha, 1.0), ("beam_offset", beam_offset, None),
                                ("pre_caches", pre_caches, None), ("seq_lens", seq_lens, None),
                                ("rotary_embs", rotary_embs, None), ("rotary_emb_dims", rotary_emb_dims, 0),
                                ("ring_id", ring_id, -1), ("gqa_group_size", gqa_group_size, -1)):
        _refuse(arg, value, default)
    if norm_type not in ("layernorm", "rmsnorm"):
        raise ValueError(f"{_FN}: norm_type must be 'layernorm' or 'rmsnorm', got {norm_type!r}")
    x = as_tensor(x)
    if x.ndim != 3:
        raise ValueError(f"{_FN}: x must be [batch_size, seq_len, embed_dim], got shape {x.shape}")
    layers = len(qkv_weights)
    if cache_kvs is not None and len(cache_kvs) != layers:
        raise ValueError(f"{_FN}: cache_kvs must hold one tensor per layer ({layers}), got {len(cache_kvs)}")
    step = None if time_step is None else int(as_tensor(time_step)._array.reshape(-1)[0])
    if step is not None and (cache_kvs is None or x.shape[1] != 1):
        raise ValueError(f"{_FN}: time_step (decoding one token) needs cache_kvs and a seq_len of 1, got "
                         f"x of shape {x.shape} and cache_kvs {'None' if cache_kvs is None else 'given'}")
    mask = None if attn_mask is None else as_tensor(attn_mask)

    def drop(t: Tensor) -> Tensor:
        return dropout(t, dropout_rate, training=training, mode=mode)
    for i in range(layers):
        h = _norm(x, ln_scales[i], _at(ln_biases, i), epsilon, norm_type) if pre_layer_norm else x
        q, k, v = _project_qkv(h, qkv_weights[i], _at(qkv_biases, i), trans_qkvw)
        if cache_kvs is not None:
            k, v = _use_cache(cache_kvs[i], k, v, step)
        scores = matmul(scale(q, q.shape[-1] ** -0.5), k, transpose_y=True)
        if mask is not None:
            scores = add(scores, mask)
        heads = transpose(matmul(drop(softmax(scores)), v), [0, 2, 1, 3])
        h = linear(reshape(heads, [x.shape[0], x.shape[1], -1]), linear_weights[i], _at(linear_biases, i))
        x = add(x, drop(h))
        if not pre_layer_norm:
            x = _norm(x, ln_scales[i], _at(ln_biases, i), epsilon, norm_type)
        h = _norm(x, ffn_ln_scales[i], _at(ffn_ln_biases, i), epsilon, norm_type) if pre_layer_norm else x
        h = drop(fused_bias_act(matmul(h, ffn1_weights[i]), _at(ffn1_biases, i), act_method=activation))
        x = add(x, drop(linear(h, ffn2_weights[i], _at(ffn2_biases, i))))
        if not pre_layer_norm:
            x = _norm(x, ffn_ln_scales[i], _at(ffn_ln_biases, i), epsilon, norm_type)
    return x if cache_kvs is None else (x, list(cache_kvs))
