"""``paddle.incubate.nn.FusedMultiTransformer``: num_layers transformer layers over
``fused_multi_transformer``. As paddle's, its parameters are kept in per-kind lists
(ln_scales, qkv_weights, ...) and registered under their generated names
(``fused_multi_transformer_N.w_k`` / ``.b_k``), so a paddle state_dict of the same layer loads;
the biases exist only where their attribute is given (paddle's rule), the layer-norm weights
are float32."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence

from pycoll.incubate.nn.functional.fused_multi_transformer import fused_multi_transformer
from pycoll.nn.attention import positive_int, probability
from pycoll.nn.initializer import Constant
from pycoll.nn.layer import Layer
from pycoll.tensor import Tensor

_ACTIVATIONS = ("gelu", "relu", "swiglu", "geglu")


class FusedMultiTransformer(Layer):
    """A stack of pre- (normalize_before, the default) or post-norm transformer layers; each
    *_attrs argument is one attribute for every layer or a list of one per layer (whose length
    then gives num_layers)."""

    def __init__(self, embed_dim: int, num_heads: int, dim_feedforward: int, dropout_rate: float = 0.0,
                 activation: str = "gelu", normalize_before: bool = True, ln_scale_attrs: Any = None,
                 ln_bias_attrs: Any = None, qkv_weight_attrs: Any = None, qkv_bias_attrs: Any = None,
                 linear_weight_attrs: Any = None, linear_bias_attrs: Any = None, ffn_ln_scale_attrs: Any = None,
                 ffn_ln_bias_attrs: Any = None, ffn1_weight_attrs: Any = None, ffn1_bias_attrs: Any = None,
                 ffn2_weight_attrs: Any = None, ffn2_bias_attrs: Any = None, epsilon: float = 1e-5,
                 residual_alpha: float = 1.0, num_layers: int = -1, nranks: int = 1, trans_qkvw: bool = True,
                 ring_id: int = -1, norm_type: str = "layernorm", use_neox_rotary_style: bool = False,
                 gqa_group_size: int = -1, name: Optional[str] = None) -> None:
        super().__init__()
        fn = "FusedMultiTransformer"
        positive_int(embed_dim, "embed_dim", fn)
        positive_int(num_heads, "num_heads", fn)
        positive_int(dim_feedforward, "dim_feedforward", fn)
        if embed_dim % num_heads:
            raise ValueError(f"{fn}: embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})")
        if activation not in _ACTIVATIONS:
            raise ValueError(f"{fn}: activation must be one of {list(_ACTIVATIONS)}, got {activation!r}")
        if norm_type not in ("layernorm", "rmsnorm"):
            raise ValueError(f"{fn}: norm_type must be 'layernorm' or 'rmsnorm', got {norm_type!r}")
        if nranks != 1 or ring_id != -1 or gqa_group_size > 0:
            raise NotImplementedError(f"{fn}: nranks={nranks!r}, ring_id={ring_id!r}, gqa_group_size="
                                      f"{gqa_group_size!r} are not implemented; use 1, -1 and -1")
        if isinstance(qkv_weight_attrs, (list, tuple)):
            num_layers = len(qkv_weight_attrs)
        positive_int(num_layers, "num_layers", fn)
        self.normalize_before = normalize_before
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self._dim_feedforward = dim_feedforward
        self._epsilon, self._residual_alpha = epsilon, residual_alpha
        self._trans_qkvw, self._ring_id, self._norm_type = trans_qkvw, ring_id, norm_type
        self._use_neox_rotary_style, self._gqa_group_size = use_neox_rotary_style, gqa_group_size
        self.dropout_rate = probability(dropout_rate, "dropout_rate", fn)
        self.activation = activation
        self.name = name
        norm_dtype = "float32" if norm_type == "layernorm" else None
        ffn1 = 2 * dim_feedforward if activation.endswith("glu") else dim_feedforward
        qkv_shape = [3, num_heads, self.head_dim, embed_dim] if trans_qkvw else [embed_dim, 3, num_heads, self.head_dim]
        kinds = {  # list name: (shape, attrs, is_bias, layer-norm dtype and initial 1)
            "ln_scales": ([embed_dim], ln_scale_attrs, False, True), "ln_biases": ([embed_dim], ln_bias_attrs, True, True),
            "qkv_weights": (qkv_shape, qkv_weight_attrs, False, False),
            "qkv_biases": ([3, num_heads, self.head_dim], qkv_bias_attrs, True, False),
            "linear_weights": ([embed_dim, embed_dim], linear_weight_attrs, False, False),
            "linear_biases": ([embed_dim], linear_bias_attrs, True, False),
            "ffn_ln_scales": ([embed_dim], ffn_ln_scale_attrs, False, True),
            "ffn_ln_biases": ([embed_dim], ffn_ln_bias_attrs, True, True),
            "ffn1_weights": ([embed_dim, ffn1], ffn1_weight_attrs, False, False),
            "ffn1_biases": ([ffn1], ffn1_bias_attrs, True, False),
            "ffn2_weights": ([dim_feedforward, embed_dim], ffn2_weight_attrs, False, False),
            "ffn2_biases": ([embed_dim], ffn2_bias_attrs, True, False)}
        lists = {kind: [] for kind in kinds}
        for i in range(num_layers):
            for kind, (shape, attrs, is_bias, is_norm) in kinds.items():
                attr = self._layer_attr(attrs, i, num_layers, kind)
                if is_bias and not attr:
                    lists[kind].append(None)  # paddle creates a bias only where its attribute is given
                    continue
                param = self.create_parameter(shape, attr=None if attr is True else attr,
                                              dtype=norm_dtype if is_norm else None, is_bias=is_bias,
                                              default_initializer=Constant(1.0) if is_norm and not is_bias else None)
                self._parameters[param.name] = param
                lists[kind].append(param)
        for kind, params in lists.items():
            setattr(self, kind, None if params[0] is None else params)

    @staticmethod
    def _layer_attr(attrs: Any, i: int, num_layers: int, kind: str) -> Any:
        if isinstance(attrs, (list, tuple)):
            if len(attrs) != num_layers:
                raise ValueError(f"FusedMultiTransformer: the attributes for {kind} must be one or a list of "
                                 f"{num_layers}, got a list of {len(attrs)}")
            return attrs[i]
        return attrs

    def forward(self, src: Tensor, attn_mask: Optional[Tensor] = None, caches: Optional[Sequence[Tensor]] = None,
                pre_caches: Any = None, rotary_embs: Any = None, rotary_emb_dims: int = 0, beam_offset: Any = None,
                seq_lens: Any = None, time_step: Any = None) -> Any:
        """The output [batch, seq, embed_dim]; with caches (one per layer) (out, caches)."""
        return fused_multi_transformer(
            src, self.ln_scales, self.ln_biases, self.qkv_weights, self.qkv_biases, self.linear_weights,
            self.linear_biases, self.ffn_ln_scales, self.ffn_ln_biases, self.ffn1_weights, self.ffn1_biases,
            self.ffn2_weights, self.ffn2_biases, pre_layer_norm=self.normalize_before, epsilon=self._epsilon,
            residual_alpha=self._residual_alpha, cache_kvs=caches, beam_offset=beam_offset, pre_caches=pre_caches,
            rotary_embs=rotary_embs, time_step=time_step, seq_lens=seq_lens, attn_mask=attn_mask,
            dropout_rate=self.dropout_rate, rotary_emb_dims=rotary_emb_dims, activation=self.activation,
            training=self.training, mode="upscale_in_train", trans_qkvw=self._trans_qkvw, ring_id=self._ring_id,
            norm_type=self._norm_type, use_neox_rotary_style=self._use_neox_rotary_style,
            gqa_group_size=self._gqa_group_size, name=self.name)


__all__: List[str] = ["FusedMultiTransformer"]
