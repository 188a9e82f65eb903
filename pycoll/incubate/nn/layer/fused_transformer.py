"""paddle.incubate's fused transformer layers over ``pycoll.incubate.nn.functional``: parameter
names, shapes and initial values are paddle 3.3.1's (weights XavierUniform, biases 0, layer-norm
scales 1), so a paddle state_dict loads. ``nranks`` > 1 (paddle's in-kernel tensor parallelism)
is refused: use ``pycoll.distributed``'s model-parallel layers."""
from __future__ import annotations

from typing import Any, Optional

from pycoll._tensor_ops import as_tensor
from pycoll.incubate.nn.functional import (fused_bias_dropout_residual_layer_norm, fused_feedforward,
                                           fused_multi_head_attention)
from pycoll.nn._attention_functional import attention_mask_as_float
from pycoll.nn.attention import positive_int, probability
from pycoll.nn.initializer import Constant
from pycoll.nn.layer import Layer
from pycoll.nn.transformer import _attr_list
from pycoll.tensor import Tensor


def _single_rank(fn: str, nranks: Any, ring_id: Any) -> None:
    if nranks != 1 or ring_id != -1:
        raise NotImplementedError(f"{fn}: nranks={nranks!r}, ring_id={ring_id!r} (paddle's in-kernel tensor "
                                  f"parallelism) is not implemented; use nranks=1, ring_id=-1 and pycoll.distributed's "
                                  f"model-parallel layers")


def _layer_norm_pair(layer: Layer, size: int, scale_attr: Any, bias_attr: Any) -> tuple:
    return (layer.create_parameter([size], attr=scale_attr, default_initializer=Constant(1.0)),
            layer.create_parameter([size], attr=bias_attr, is_bias=True))


class FusedBiasDropoutResidualLayerNorm(Layer):
    """layer_norm(residual + dropout(x + linear_bias)) with ln_scale / ln_bias, [embed_dim] each."""

    def __init__(self, embed_dim: int, dropout_rate: float = 0.5, weight_attr: Any = None, bias_attr: Any = None,
                 epsilon: float = 1e-5, name: Optional[str] = None) -> None:
        super().__init__()
        fn = "FusedBiasDropoutResidualLayerNorm"
        self.embed_dim = positive_int(embed_dim, "embed_dim", fn)
        self.dropout_rate = probability(dropout_rate, "dropout_rate", fn)
        self.linear_bias = self.create_parameter([embed_dim], attr=bias_attr, is_bias=True)
        self.ln_scale, self.ln_bias = _layer_norm_pair(self, embed_dim, weight_attr, bias_attr)
        self._epsilon = epsilon
        self.name = name

    def forward(self, x: Tensor, residual: Tensor) -> Tensor:
        return fused_bias_dropout_residual_layer_norm(x, residual, self.linear_bias, self.ln_scale, self.ln_bias,
                                                      self.dropout_rate, self._epsilon, self.training,
                                                      "upscale_in_train", self.name)

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, dropout_rate={self.dropout_rate}, epsilon={self._epsilon}"


class FusedMultiHeadAttention(Layer):
    """Self-attention with the packed qkv projection: qkv_weight [3, num_heads, head_dim,
    embed_dim] and qkv_bias [3, num_heads, head_dim] (with transpose_qkv_wb: [embed_dim,
    3 * embed_dim] and [3 * embed_dim]), linear_weight [embed_dim, embed_dim], linear_bias, and
    pre_ln_scale / pre_ln_bias (normalize_before) or ln_scale / ln_bias (after). The key and
    value arguments of forward are ignored (paddle's kernel attends over the query alone)."""

    def __init__(self, embed_dim: int, num_heads: int, dropout_rate: float = 0.5, attn_dropout_rate: float = 0.5,
                 kdim: Optional[int] = None, vdim: Optional[int] = None, normalize_before: bool = False,
                 need_weights: bool = False, qkv_weight_attr: Any = None, qkv_bias_attr: Any = None,
                 linear_weight_attr: Any = None, linear_bias_attr: Any = None, pre_ln_scale_attr: Any = None,
                 pre_ln_bias_attr: Any = None, ln_scale_attr: Any = None, ln_bias_attr: Any = None,
                 epsilon: float = 1e-5, nranks: int = 1, ring_id: int = -1, transpose_qkv_wb: bool = False,
                 name: Optional[str] = None) -> None:
        super().__init__()
        fn = "FusedMultiHeadAttention"
        positive_int(embed_dim, "embed_dim", fn)
        positive_int(num_heads, "num_heads", fn)
        if embed_dim % num_heads:
            raise ValueError(f"{fn}: embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})")
        if need_weights:
            raise ValueError(f"{fn}: need_weights must be False (paddle's rule), got {need_weights!r}")
        _single_rank(fn, nranks, ring_id)
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.kdim, self.vdim, self.need_weights = kdim, vdim, need_weights
        self.normalize_before = normalize_before
        self.dropout_rate = probability(dropout_rate, "dropout_rate", fn)
        self.attn_dropout_rate = probability(attn_dropout_rate, "attn_dropout_rate", fn)
        self._epsilon = epsilon
        self._ring_id = ring_id
        self.transpose_qkv_wb = transpose_qkv_wb
        if transpose_qkv_wb:
            qkv_shape, bias_shape = [embed_dim, 3 * embed_dim], [3 * embed_dim]
        else:
            qkv_shape, bias_shape = [3, num_heads, self.head_dim, embed_dim], [3, num_heads, self.head_dim]
        self.qkv_weight = self.create_parameter(qkv_shape, attr=qkv_weight_attr)
        self.qkv_bias = self.create_parameter(bias_shape, attr=qkv_bias_attr, is_bias=True)
        self.linear_weight = self.create_parameter([embed_dim, embed_dim], attr=linear_weight_attr)
        self.linear_bias = self.create_parameter([embed_dim], attr=linear_bias_attr, is_bias=True)
        if normalize_before:
            self.pre_ln_scale, self.pre_ln_bias = _layer_norm_pair(self, embed_dim, pre_ln_scale_attr,
                                                                   pre_ln_bias_attr)
            self.ln_scale = self.ln_bias = None
        else:
            self.pre_ln_scale = self.pre_ln_bias = None
            self.ln_scale, self.ln_bias = _layer_norm_pair(self, embed_dim, ln_scale_attr, ln_bias_attr)
        self.name = name

    def forward(self, query: Tensor, key: Optional[Tensor] = None, value: Optional[Tensor] = None,
                attn_mask: Optional[Tensor] = None, cache: Optional[Tensor] = None) -> Any:
        """The attention output [batch, seq, embed_dim]; with cache (a [2, batch, heads, past,
        head_dim] key/value tensor) also the grown cache."""
        query = as_tensor(query)
        return fused_multi_head_attention(
            query, self.qkv_weight, self.linear_weight, self.normalize_before, self.pre_ln_scale, self.pre_ln_bias,
            self.ln_scale, self.ln_bias, self._epsilon, self.qkv_bias, self.linear_bias, cache,
            attention_mask_as_float(attn_mask, query.dtype), self.dropout_rate, self.attn_dropout_rate,
            self._epsilon, self.training, "upscale_in_train", self._ring_id, True, self.num_heads,
            self.transpose_qkv_wb, self.name)

    def extra_repr(self) -> str:
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout_rate={self.dropout_rate}, "
                f"attn_dropout_rate={self.attn_dropout_rate}, epsilon={self._epsilon}, kdim={self.kdim}, "
                f"vdim={self.vdim}, normalize_before={self.normalize_before}, need_weights={self.need_weights}")


class FusedFeedForward(Layer):
    """linear1 -> activation -> dropout -> linear2 -> dropout, residual, with parameters
    _linear1_weight [d_model, dim_feedforward], _linear1_bias, _linear2_weight
    [dim_feedforward, d_model], _linear2_bias, and _ln1_scale / _ln1_bias (normalize_before) or
    _ln2_scale / _ln2_bias (after), paddle's names. act_dropout_rate defaults to dropout_rate."""

    def __init__(self, d_model: int, dim_feedforward: int, dropout_rate: float = 0.1, epsilon: float = 1e-05,
                 activation: str = "relu", act_dropout_rate: Optional[float] = None, normalize_before: bool = False,
                 linear1_weight_attr: Any = None, linear1_bias_attr: Any = None, linear2_weight_attr: Any = None,
                 linear2_bias_attr: Any = None, ln1_scale_attr: Any = None, ln1_bias_attr: Any = None,
                 ln2_scale_attr: Any = None, ln2_bias_attr: Any = None, nranks: int = 1, ring_id: int = -1,
                 name: Optional[str] = None) -> None:
        super().__init__()
        fn = "FusedFeedForward"
        self._d_model = positive_int(d_model, "d_model", fn)
        self._dim_feedforward = positive_int(dim_feedforward, "dim_feedforward", fn)
        _single_rank(fn, nranks, ring_id)
        if activation not in ("relu", "gelu"):
            raise ValueError(f"{fn}: activation must be 'relu' or 'gelu', got {activation!r}")
        self._dropout_rate = probability(dropout_rate, "dropout_rate", fn)
        self._act_dropout_rate = self._dropout_rate if act_dropout_rate is None else \
            probability(act_dropout_rate, "act_dropout_rate", fn)
        self._act_method = activation
        self._normalize_before = normalize_before
        self._epsilon = epsilon
        self._ring_id = ring_id
        self._linear1_weight = self.create_parameter([d_model, dim_feedforward], attr=linear1_weight_attr)
        self._linear1_bias = self.create_parameter([dim_feedforward], attr=linear1_bias_attr, is_bias=True)
        self._linear2_weight = self.create_parameter([dim_feedforward, d_model], attr=linear2_weight_attr)
        self._linear2_bias = self.create_parameter([d_model], attr=linear2_bias_attr, is_bias=True)
        if normalize_before:
            self._ln1_scale, self._ln1_bias = _layer_norm_pair(self, d_model, ln1_scale_attr, ln1_bias_attr)
            self._ln2_scale = self._ln2_bias = None
        else:
            self._ln1_scale = self._ln1_bias = None
            self._ln2_scale, self._ln2_bias = _layer_norm_pair(self, d_model, ln2_scale_attr, ln2_bias_attr)
        self.name = name

    def forward(self, src: Tensor, cache: Any = None) -> Tensor:
        return fused_feedforward(
            src, self._linear1_weight, self._linear2_weight, self._linear1_bias, self._linear2_bias, self._ln1_scale,
            self._ln1_bias, self._ln2_scale, self._ln2_bias, dropout1_rate=self._act_dropout_rate,
            dropout2_rate=self._dropout_rate, activation=self._act_method, ln1_epsilon=self._epsilon,
            ln2_epsilon=self._epsilon, pre_layer_norm=self._normalize_before, training=self.training,
            ring_id=self._ring_id, name=self.name)

    def extra_repr(self) -> str:
        return (f"d_model={self._d_model}, dim_feedforward={self._dim_feedforward}, dropout_rate={self._dropout_rate}, "
                f"epsilon={self._epsilon}, activation={self._act_method}, act_dropout_rate={self._act_dropout_rate}, "
                f"normalize_before={self._normalize_before}")


class FusedTransformerEncoderLayer(Layer):
    """fused_attn (FusedMultiHeadAttention) then ffn (FusedFeedForward); weight_attr / bias_attr
    one for all or a list of 2 (attention, feed-forward); attn_dropout_rate and act_dropout_rate
    default to dropout_rate."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int, dropout_rate: float = 0.1,
                 activation: str = "relu", attn_dropout_rate: Optional[float] = None,
                 act_dropout_rate: Optional[float] = None, normalize_before: bool = False, weight_attr: Any = None,
                 bias_attr: Any = None) -> None:
        super().__init__()
        fn = "FusedTransformerEncoderLayer"
        positive_int(dim_feedforward, "dim_feedforward", fn)
        attn_dropout_rate = dropout_rate if attn_dropout_rate is None else attn_dropout_rate
        act_dropout_rate = dropout_rate if act_dropout_rate is None else act_dropout_rate
        self.normalize_before = normalize_before
        weights = _attr_list(weight_attr, 2, "weight_attr", fn)
        biases = _attr_list(bias_attr, 2, "bias_attr", fn)
        self.fused_attn = FusedMultiHeadAttention(
            d_model, nhead, dropout_rate=dropout_rate, attn_dropout_rate=attn_dropout_rate,
            normalize_before=normalize_before, qkv_weight_attr=weights[0], qkv_bias_attr=biases[0],
            linear_weight_attr=weights[0], linear_bias_attr=biases[0], pre_ln_scale_attr=weights[0],
            pre_ln_bias_attr=biases[0], ln_scale_attr=weights[0], ln_bias_attr=biases[0])
        self.ffn = FusedFeedForward(
            d_model, dim_feedforward, dropout_rate=dropout_rate, activation=activation,
            act_dropout_rate=act_dropout_rate, normalize_before=normalize_before, linear1_weight_attr=weights[1],
            linear1_bias_attr=biases[1], linear2_weight_attr=weights[1], linear2_bias_attr=biases[1])

    def forward(self, src: Tensor, src_mask: Optional[Tensor] = None, cache: Optional[Tensor] = None) -> Any:
        """The encoded src; with cache (see FusedMultiHeadAttention) (out, the grown cache)."""
        if cache is None:
            return self.ffn(self.fused_attn(src, attn_mask=src_mask))
        attn_out, new_cache = self.fused_attn(src, attn_mask=src_mask, cache=cache)
        return self.ffn(attn_out), new_cache
