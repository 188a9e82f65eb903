"""paddle.incubate's fused transformer blocks, composed of pycoll's differentiable linear,
layer_norm, softmax and dropout (paddle fuses each into one GPU kernel; the formulas are its
documented ones):

- ``fused_bias_dropout_residual_layer_norm``: layer_norm(residual + dropout(x + bias));
- ``fused_feedforward``: [ln1] -> linear1 -> activation -> dropout1 -> linear2 -> dropout2
  (+ residual) -> [ln2], ln1 with pre_layer_norm, ln2 without;
- ``fused_multi_head_attention``: [pre-ln] -> qkv projection -> softmax(q k^T / sqrt(d) + mask)
  (attention dropout) v -> out projection -> dropout (+ residual) -> [ln], with an optional
  key/value cache of earlier steps.

``ring_id`` (paddle's tensor-parallel all-reduce inside the kernel) must stay -1: pycoll's
tensor side does no communication; use ``pycoll.distributed``'s model-parallel layers for that."""
from __future__ import annotations

from typing import Any, Optional, Tuple, Union

from pycoll._tensor_ops import as_tensor
from pycoll.incubate.nn.functional._checks import check_dropout
from pycoll.math_ops import add, matmul, scale
from pycoll.nn._attention_functional import attention_mask_as_float
from pycoll.nn.functional import dropout, gelu, layer_norm, linear, relu, softmax
from pycoll.shape_ops import concat, reshape, stack, transpose
from pycoll.tensor import Tensor

__all__ = ["fused_bias_dropout_residual_layer_norm", "fused_feedforward", "fused_multi_head_attention"]

_ACTIVATIONS = {"relu": relu, "gelu": gelu}


def _no_ring(fn: str, ring_id: Any) -> None:
    if ring_id != -1:
        raise NotImplementedError(f"{fn}: ring_id={ring_id!r} (paddle's in-kernel tensor-parallel all-reduce) is not "
                                  f"implemented; pass ring_id=-1 and use pycoll.distributed's model-parallel layers")


def _norm(h: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], epsilon: float) -> Tensor:
    return layer_norm(h, [h.shape[-1]], weight, bias, epsilon)


def fused_bias_dropout_residual_layer_norm(x: Tensor, residual: Tensor, bias: Optional[Tensor] = None,
                                           ln_scale: Optional[Tensor] = None, ln_bias: Optional[Tensor] = None,
                                           dropout_rate: float = 0.5, ln_epsilon: float = 1e-05,
                                           training: bool = True, mode: str = "upscale_in_train",
                                           name: Optional[str] = None) -> Tensor:
    """layer_norm(residual + dropout(x + bias)) over the last axis, scaled by ln_scale and shifted
    by ln_bias."""
    fn = "fused_bias_dropout_residual_layer_norm"
    check_dropout(fn, "dropout_rate", dropout_rate, mode)
    x, residual = as_tensor(x), as_tensor(residual)
    if residual.shape != x.shape:
        raise ValueError(f"{fn}: residual must have x's shape {x.shape}, got {residual.shape}")
    h = x if bias is None else add(x, bias)
    return _norm(add(residual, dropout(h, dropout_rate, training=training, mode=mode)), ln_scale, ln_bias, ln_epsilon)


def fused_feedforward(x: Tensor, linear1_weight: Tensor, linear2_weight: Tensor,
                      linear1_bias: Optional[Tensor] = None, linear2_bias: Optional[Tensor] = None,
                      ln1_scale: Optional[Tensor] = None, ln1_bias: Optional[Tensor] = None,
                      ln2_scale: Optional[Tensor] = None, ln2_bias: Optional[Tensor] = None,
                      dropout1_rate: float = 0.5, dropout2_rate: float = 0.5, activation: str = "relu",
                      ln1_epsilon: float = 1e-05, ln2_epsilon: float = 1e-05, pre_layer_norm: bool = False,
                      training: bool = True, mode: str = "upscale_in_train", ring_id: int = -1,
                      add_residual: bool = True, name: Optional[str] = None) -> Tensor:
    """The transformer feed-forward block (paddle's formula):
    out = linear2(dropout1(act(linear1(ln1(x) if pre_layer_norm else x)))), then
    x + dropout2(out) (add_residual) or dropout2(out), then ln2 unless pre_layer_norm."""
    fn = "fused_feedforward"
    check_dropout(fn, "dropout1_rate", dropout1_rate, mode)
    check_dropout(fn, "dropout2_rate", dropout2_rate, mode)
    if activation not in _ACTIVATIONS:
        raise ValueError(f"{fn}: activation must be 'relu' or 'gelu', got {activation!r}")
    _no_ring(fn, ring_id)
    x = as_tensor(x)
    h = _norm(x, ln1_scale, ln1_bias, ln1_epsilon) if pre_layer_norm else x
    h = dropout(_ACTIVATIONS[activation](linear(h, linear1_weight, linear1_bias)), dropout1_rate,
                training=training, mode=mode)
    out = dropout(linear(h, linear2_weight, linear2_bias), dropout2_rate, training=training, mode=mode)
    if add_residual:
        out = add(x, out)
    return out if pre_layer_norm else _norm(out, ln2_scale, ln2_bias, ln2_epsilon)


def _qkv(fn: str, h: Tensor, qkv_weight: Tensor, qkv_bias: Optional[Tensor], num_heads: int,
         transpose_qkv_wb: bool) -> Tuple[Tensor, Tensor, Tensor]:
    """q, k, v as [batch, heads, seq, head_dim] from the packed projection: qkv_weight
    [3, heads, head_dim, embed] (bias [3, heads, head_dim]), or with transpose_qkv_wb
    [embed, 3 * embed] (bias [3 * embed]) and num_heads given."""
    w = as_tensor(qkv_weight)
    embed = h.shape[-1]
    if transpose_qkv_wb:
        if isinstance(num_heads, bool) or not isinstance(num_heads, int) or num_heads <= 0:
            raise ValueError(f"{fn}: with transpose_qkv_wb, num_heads must be a positive int, got {num_heads!r}")
        if w.ndim != 2 or w.shape[0] != embed or w.shape[1] % (3 * num_heads):
            raise ValueError(f"{fn}: with transpose_qkv_wb, qkv_weight must be [{embed}, 3 * num_heads * head_dim], "
                             f"got {w.shape}")
        heads, head_dim = num_heads, w.shape[1] // (3 * num_heads)
        packed = linear(h, w, None if qkv_bias is None else reshape(qkv_bias, [-1]))
    else:
        if w.ndim != 4 or w.shape[0] != 3 or w.shape[3] != embed:
            raise ValueError(f"{fn}: qkv_weight must be [3, num_heads, head_dim, {embed}], got {w.shape}")
        heads, head_dim = w.shape[1], w.shape[2]
        packed = matmul(h, reshape(w, [3 * heads * head_dim, embed]), transpose_y=True)
        if qkv_bias is not None:
            packed = add(packed, reshape(qkv_bias, [3 * heads * head_dim]))
    batch, seq = h.shape[0], h.shape[1]
    qkv = transpose(reshape(packed, [batch, seq, 3, heads, head_dim]), [2, 0, 3, 1, 4])
    return qkv[0], qkv[1], qkv[2]


def fused_multi_head_attention(x: Tensor, qkv_weight: Tensor, linear_weight: Tensor, pre_layer_norm: bool = False,
                               pre_ln_scale: Optional[Tensor] = None, pre_ln_bias: Optional[Tensor] = None,
                               ln_scale: Optional[Tensor] = None, ln_bias: Optional[Tensor] = None,
                               pre_ln_epsilon: float = 1e-05, qkv_bias: Optional[Tensor] = None,
                               linear_bias: Optional[Tensor] = None, cache_kv: Optional[Tensor] = None,
                               attn_mask: Optional[Tensor] = None, dropout_rate: float = 0.5,
                               attn_dropout_rate: float = 0.5, ln_epsilon: float = 1e-05, training: bool = True,
                               mode: str = "upscale_in_train", ring_id: int = -1, add_residual: bool = True,
                               num_heads: int = -1, transpose_qkv_wb: bool = False,
                               name: Optional[str] = None) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """Self-attention over x [batch, seq, embed] (paddle's formula, see the module's docstring).
    attn_mask is added to the scores (a bool/int mask hides its False/0 places). With cache_kv
    ([2, batch, heads, past, head_dim]) the new keys and values are appended to it and
    (out, the grown cache) is returned; otherwise out."""
    fn = "fused_multi_head_attention"
    check_dropout(fn, "dropout_rate", dropout_rate, mode)
    check_dropout(fn, "attn_dropout_rate", attn_dropout_rate, mode)
    _no_ring(fn, ring_id)
    x = as_tensor(x)
    if x.ndim != 3:
        raise ValueError(f"{fn}: x must be [batch_size, seq_len, embed_dim], got shape {x.shape}")
    h = _norm(x, pre_ln_scale, pre_ln_bias, pre_ln_epsilon) if pre_layer_norm else x
    q, k, v = _qkv(fn, h, qkv_weight, qkv_bias, num_heads, transpose_qkv_wb)
    cache_out = None
    if cache_kv is not None:
        cache = as_tensor(cache_kv)
        if cache.ndim != 5 or cache.shape[0] != 2 or cache.shape[1:3] != k.shape[:2] or cache.shape[4] != k.shape[3]:
            raise ValueError(f"{fn}: cache_kv must be [2, {k.shape[0]}, {k.shape[1]}, past_len, {k.shape[3]}], "
                             f"got {cache.shape}")
        k, v = concat([cache[0], k], axis=2), concat([cache[1], v], axis=2)
        cache_out = stack([k, v])
    scores = matmul(scale(q, q.shape[-1] ** -0.5), k, transpose_y=True)
    mask = attention_mask_as_float(attn_mask, scores.dtype)
    if mask is not None:
        scores = add(scores, mask)
    weights = dropout(softmax(scores), attn_dropout_rate, training=training, mode=mode)
    heads = transpose(matmul(weights, v), [0, 2, 1, 3])
    out = linear(reshape(heads, [x.shape[0], x.shape[1], -1]), linear_weight, linear_bias)
    out = dropout(out, dropout_rate, training=training, mode=mode)
    if add_residual:
        out = add(x, out)
    if not pre_layer_norm:
        out = _norm(out, ln_scale, ln_bias, ln_epsilon)
    return out if cache_out is None else (out, cache_out)
