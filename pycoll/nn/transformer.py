"""TransformerEncoderLayer, TransformerEncoder, TransformerDecoderLayer, TransformerDecoder and
Transformer: paddle's layers, with its sublayer names (so its state_dict keys), defaults and
post-norm / pre-norm (`normalize_before`) wiring."""
from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional, Sequence

from pycoll.nn import functional as F
from pycoll.nn._attention_functional import attention_mask_as_float
from pycoll.nn.attention import MultiHeadAttention, positive_int, probability
from pycoll.nn.common import Dropout, Linear
from pycoll.nn.container import LayerList
from pycoll.nn.layer import Layer
from pycoll.nn.norm import LayerNorm
from pycoll.nn.parameter import ParamAttr
from pycoll.search_ops import triu
from pycoll.creation import full
from pycoll.tensor import Tensor

__all__ = ["TransformerEncoderLayer", "TransformerEncoder", "TransformerDecoderLayer", "TransformerDecoder",
           "Transformer"]


def _attr_list(attr: Any, n: int, name: str, fn: str) -> List[Any]:
    """paddle's per-sublayer attributes: a list/tuple of n (True: the default, False: none), or
    one attribute for all (False: none; a named ParamAttr gets suffixes _0, _1, ...)."""
    if isinstance(attr, (list, tuple)):
        if len(attr) != n:
            raise ValueError(f"{fn}: {name} must be one attribute or a list of {n}, got a list of {len(attr)}")
        return [None if a is True else a for a in attr]
    if isinstance(attr, bool):
        return [None if attr else False] * n
    attr = ParamAttr.from_arg(attr, name)
    copies = []
    for i in range(n):
        one = copy.copy(attr)
        if attr.name:
            one.name = f"{attr.name}_{i}"
        copies.append(one)
    return copies


def _activation(name: Any, fn: str) -> Any:
    act = getattr(F, name, None) if isinstance(name, str) else None
    if not callable(act):
        raise ValueError(f"{fn}: activation must name a function of pycoll.nn.functional (e.g. 'relu', "
                         f"'gelu'), got {name!r}")
    return act


class _Block(Layer):
    """What the encoder and decoder layers share: checks, the feed-forward part and its norms."""

    def _setup(self, config: Dict[str, Any], n_attn: int) -> tuple:
        fn = type(self).__name__
        self._config = config
        d_model = positive_int(config["d_model"], "d_model", fn)
        positive_int(config["nhead"], "nhead", fn)
        dim_ff = positive_int(config["dim_feedforward"], "dim_feedforward", fn)
        dropout = probability(config["dropout"], "dropout", fn)
        attn_dropout = dropout if config["attn_dropout"] is None else config["attn_dropout"]
        act_dropout = dropout if config["act_dropout"] is None else config["act_dropout"]
        self.normalize_before = config["normalize_before"]
        weights = _attr_list(config["weight_attr"], n_attn + 1, "weight_attr", fn)
        biases = _attr_list(config["bias_attr"], n_attn + 1, "bias_attr", fn)
        self.activation = _activation(config["activation"], fn)
        return d_model, dim_ff, dropout, attn_dropout, act_dropout, weights, biases

    def _feed_forward_layers(self, d_model: int, dim_ff: int, act_dropout: float, weight: Any, bias: Any) -> None:
        self.linear1 = Linear(d_model, dim_ff, weight, bias_attr=bias)
        self.dropout = Dropout(act_dropout, mode="upscale_in_train")
        self.linear2 = Linear(dim_ff, d_model, weight, bias_attr=bias)

    def _sub_block(self, x: Tensor, norm: Layer, dropout: Layer, body: Any) -> Tensor:
        """x + dropout(body(x)) with `norm` before body (normalize_before) or after the sum."""
        out = body(norm(x) if self.normalize_before else x)
        out = x + dropout(out)
        return out if self.normalize_before else norm(out)

    def _feed_forward(self, x: Tensor) -> Tensor:
        return self.linear2(self.dropout(self.activation(self.linear1(x))))


class TransformerEncoderLayer(_Block):
    """Self attention then a feed-forward network (linear1, activation, dropout, linear2), each
    in a residual block with dropout1/dropout2 and norm1/norm2 (applied after the sum, or before
    the sublayer with normalize_before). attn_dropout / act_dropout default to `dropout`.
    weight_attr / bias_attr: one for all, or a list of 2 (attention, feed-forward)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int, dropout: float = 0.1,
                 activation: str = "relu", attn_dropout: Optional[float] = None,
                 act_dropout: Optional[float] = None, normalize_before: bool = False, weight_attr: Any = None,
                 bias_attr: Any = None, layer_norm_eps: float = 1e-05):
        config = dict(locals())
        for k in ("self", "__class__"):
            config.pop(k, None)
        super().__init__()
        d_model, dim_ff, dropout, attn_dropout, act_dropout, weights, biases = self._setup(config, 1)
        self.self_attn = MultiHeadAttention(d_model, nhead, dropout=attn_dropout, weight_attr=weights[0],
                                            bias_attr=biases[0])
        self._feed_forward_layers(d_model, dim_ff, act_dropout, weights[1], biases[1])
        self.norm1 = LayerNorm(d_model, layer_norm_eps)
        self.norm2 = LayerNorm(d_model, layer_norm_eps)
        self.dropout1 = Dropout(dropout, mode="upscale_in_train")
        self.dropout2 = Dropout(dropout, mode="upscale_in_train")

    def forward(self, src: Tensor, src_mask: Optional[Tensor] = None, cache: Any = None) -> Any:
        mask = attention_mask_as_float(src_mask, src.dtype)
        new_cache = []

        def attn(x: Tensor) -> Tensor:
            if cache is None:
                return self.self_attn(x, x, x, mask)
            out, c = self.self_attn(x, x, x, mask, cache)
            new_cache.append(c)
            return out
        out = self._sub_block(src, self.norm1, self.dropout1, attn)
        out = self._sub_block(out, self.norm2, self.dropout2, self._feed_forward)
        return out if cache is None else (out, new_cache[0])

    def gen_cache(self, src: Tensor) -> MultiHeadAttention.Cache:
        """An empty incremental cache for self attention (see MultiHeadAttention.gen_cache)."""
        return self.self_attn.gen_cache(src, type=MultiHeadAttention.Cache)


class TransformerDecoderLayer(_Block):
    """Self attention, cross attention over `memory`, then the feed-forward network, each in a
    residual block (dropout1..3, norm1..3). weight_attr / bias_attr: one for all, or a list of 3
    (self attention, cross attention, feed-forward)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int, dropout: float = 0.1,
                 activation: str = "relu", attn_dropout: Optional[float] = None,
                 act_dropout: Optional[float] = None, normalize_before: bool = False, weight_attr: Any = None,
                 bias_attr: Any = None, layer_norm_eps: float = 1e-05):
        config = dict(locals())
        for k in ("self", "__class__"):
            config.pop(k, None)
        super().__init__()
        d_model, dim_ff, dropout, attn_dropout, act_dropout, weights, biases = self._setup(config, 2)
        self.self_attn = MultiHeadAttention(d_model, nhead, dropout=attn_dropout, weight_attr=weights[0],
                                            bias_attr=biases[0])
        self.cross_attn = MultiHeadAttention(d_model, nhead, dropout=attn_dropout, weight_attr=weights[1],
                                             bias_attr=biases[1])
        self._feed_forward_layers(d_model, dim_ff, act_dropout, weights[2], biases[2])
        self.norm1 = LayerNorm(d_model, layer_norm_eps)
        self.norm2 = LayerNorm(d_model, layer_norm_eps)
        self.norm3 = LayerNorm(d_model, layer_norm_eps)
        self.dropout1 = Dropout(dropout, mode="upscale_in_train")
        self.dropout2 = Dropout(dropout, mode="upscale_in_train")
        self.dropout3 = Dropout(dropout, mode="upscale_in_train")

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Optional[Tensor] = None,
                memory_mask: Optional[Tensor] = None, cache: Any = None) -> Any:
        tgt_mask = attention_mask_as_float(tgt_mask, tgt.dtype)
        memory_mask = attention_mask_as_float(memory_mask, memory.dtype)
        new_cache = []

        def self_attn(x: Tensor) -> Tensor:
            if cache is None:
                return self.self_attn(x, x, x, tgt_mask, None)
            out, c = self.self_attn(x, x, x, tgt_mask, cache[0])
            new_cache.append(c)
            return out

        def cross_attn(x: Tensor) -> Tensor:
            if cache is None:
                return self.cross_attn(x, memory, memory, memory_mask, None)
            out, c = self.cross_attn(x, memory, memory, memory_mask, cache[1])
            new_cache.append(c)
            return out
        out = self._sub_block(tgt, self.norm1, self.dropout1, self_attn)
        out = self._sub_block(out, self.norm2, self.dropout2, cross_attn)
        out = self._sub_block(out, self.norm3, self.dropout3, self._feed_forward)
        return out if cache is None else (out, tuple(new_cache))

    def gen_cache(self, memory: Tensor) -> tuple:
        """(an empty Cache for self attention, a StaticCache of memory for cross attention)."""
        return (self.self_attn.gen_cache(memory, type=MultiHeadAttention.Cache),
                self.cross_attn.gen_cache(memory, memory, type=MultiHeadAttention.StaticCache))


def _stack(layer: Layer, num_layers: int, norm: Optional[Layer], fn: str) -> LayerList:
    """num_layers layers: `layer` itself first, then new ones built with its arguments (fresh
    parameters, as paddle's). None (0, as paddle allows) leaves only `norm` to run."""
    if isinstance(num_layers, bool) or not isinstance(num_layers, int):
        raise TypeError(f"{fn}: num_layers must be an int >= 0, got {num_layers!r}")
    if num_layers < 0:
        raise ValueError(f"{fn}: num_layers must be an int >= 0, got {num_layers!r}")
    if norm is not None and not isinstance(norm, Layer):
        raise TypeError(f"{fn}: norm must be a Layer (e.g. LayerNorm) or None, got {type(norm).__name__}")
    return LayerList([layer if i == 0 else type(layer)(**layer._config) for i in range(num_layers)])


class TransformerEncoder(Layer):
    """`num_layers` encoder layers (the given one and copies with fresh parameters, under
    'layers.N'), then `norm` if given."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Optional[Layer] = None):
        super().__init__()
        self.layers = _stack(encoder_layer, num_layers, norm, "TransformerEncoder")
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src: Tensor, src_mask: Optional[Tensor] = None, cache: Optional[Sequence[Any]] = None) -> Any:
        mask = attention_mask_as_float(src_mask, src.dtype)
        out, new_caches = src, []
        for i, layer in enumerate(self.layers):
            if cache is None:
                out = layer(out, src_mask=mask)
            else:
                out, c = layer(out, src_mask=mask, cache=cache[i])
                new_caches.append(c)
        if self.norm is not None:
            out = self.norm(out)
        return out if cache is None else (out, new_caches)

    def gen_cache(self, src: Tensor) -> List[Any]:
        return [layer.gen_cache(src) for layer in self.layers]


class TransformerDecoder(Layer):
    """`num_layers` decoder layers (as TransformerEncoder builds them), then `norm` if given."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Optional[Layer] = None):
        super().__init__()
        self.layers = _stack(decoder_layer, num_layers, norm, "TransformerDecoder")
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Optional[Tensor] = None,
                memory_mask: Optional[Tensor] = None, cache: Optional[Sequence[Any]] = None) -> Any:
        tgt_mask = attention_mask_as_float(tgt_mask, tgt.dtype)
        memory_mask = attention_mask_as_float(memory_mask, memory.dtype)
        out, new_caches = tgt, []
        for i, layer in enumerate(self.layers):
            if cache is None:
                out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask)
            else:
                out, c = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, cache=cache[i])
                new_caches.append(c)
        if self.norm is not None:
            out = self.norm(out)
        return out if cache is None else (out, new_caches)

    def gen_cache(self, memory: Tensor, do_zip: bool = False) -> List[Any]:
        """Each layer's (Cache, StaticCache); with do_zip, (all Caches, all StaticCaches)."""
        cache = [layer.gen_cache(memory) for layer in self.layers]
        return list(zip(*cache)) if do_zip else cache


def _split_attr(attr: Any, name: str) -> tuple:
    """paddle's Transformer attribute lists: 1, 2 or 3 entries spread over the encoder's 2 and
    the decoder's 3 sublayers; anything else serves both as it is."""
    if not isinstance(attr, (list, tuple)):
        return attr, attr
    if len(attr) == 1:
        return [attr[0]] * 2, [attr[0]] * 3
    if len(attr) == 2:
        return list(attr), [attr[0], attr[0], attr[-1]]
    if len(attr) == 3:
        return [attr[0], attr[-1]], list(attr)
    raise ValueError(f"Transformer: {name} as a list must have 1, 2 or 3 entries, got {len(attr)}")


class Transformer(Layer):
    """An encoder and a decoder (TransformerEncoder / TransformerDecoder with a final LayerNorm
    each), or the custom ones given. forward(src, tgt, src_mask, tgt_mask, memory_mask)."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1, activation: str = "relu",
                 attn_dropout: Optional[float] = None, act_dropout: Optional[float] = None,
                 normalize_before: bool = False, weight_attr: Any = None, bias_attr: Any = None,
                 custom_encoder: Optional[Layer] = None, custom_decoder: Optional[Layer] = None):
        super().__init__()
        enc_w, dec_w = _split_attr(weight_attr, "weight_attr")
        enc_b, dec_b = _split_attr(bias_attr, "bias_attr")
        common = (d_model, nhead, dim_feedforward, dropout, activation, attn_dropout, act_dropout, normalize_before)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(*common, enc_w, enc_b)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, LayerNorm(d_model))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(*common, dec_w, dec_b)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, LayerNorm(d_model))
        self.d_model, self.nhead = d_model, nhead

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Optional[Tensor] = None, tgt_mask: Optional[Tensor] = None,
                memory_mask: Optional[Tensor] = None) -> Tensor:
        memory = self.encoder(src, src_mask=attention_mask_as_float(src_mask, src.dtype))
        return self.decoder(tgt, memory, tgt_mask=attention_mask_as_float(tgt_mask, tgt.dtype),
                            memory_mask=attention_mask_as_float(memory_mask, memory.dtype))

    def generate_square_subsequent_mask(self, length: Any) -> Tensor:
        """[length, length] float mask: -inf above the diagonal (future positions), 0 elsewhere."""
        n = int(length.item()) if isinstance(length, Tensor) else length
        return triu(full([n, n], -float("inf")), 1)
