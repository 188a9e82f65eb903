"""nn.MultiHeadAttention (paddle's names, parameters, initialisation, state_dict keys and caches);
as ``paddle.nn.attention``, also paddle's ``SDPBackend`` and ``sdpa_kernel`` (pycoll.nn._sdpa_backends)."""
from __future__ import annotations

import collections
from typing import Any, Optional, Tuple, Union

from pycoll._errors import AssertedArgument
from pycoll.creation import zeros
from pycoll.nn._attention_functional import attend, attention_mask_as_float
from pycoll.nn.common import Linear
from pycoll.nn.layer import Layer
from pycoll.nn._sdpa_backends import SDPBackend, sdpa_kernel
from pycoll.shape_ops import concat, reshape, transpose
from pycoll.tensor import Tensor

__all__ = ["MultiHeadAttention", "SDPBackend", "sdpa_kernel"]  # the last two: paddle.nn.attention's


def positive_int(value: Any, name: str, fn: str, error: type = ValueError) -> int:
    """``value``, an int > 0, or ``error`` naming ``name`` (AssertedArgument where paddle asserts)."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise error(f"{fn}: {name} must be an int > 0, got {value!r}")
    return value


def probability(value: Any, name: str, fn: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise ValueError(f"{fn}: {name} must be a number in [0, 1], got {value!r}")
    return float(value)


class MultiHeadAttention(Layer):
    """Attention of `num_heads` heads of embed_dim / num_heads features each.

    Parameters as paddle's: q_proj (embed_dim -> embed_dim), k_proj (kdim -> embed_dim), v_proj
    (vdim -> embed_dim) and out_proj, all `Linear` layers (weights [in, out], XavierUniform; biases
    zeros), so a paddle state_dict loads as it is. forward(query, key=None, value=None,
    attn_mask=None, cache=None) returns the output, then the weights if `need_weights`, then the
    updated cache if one was given. attn_mask broadcasts to [batch, num_heads, len_q, len_k]: bool
    or int masks keep True / 1 positions (the others get -1e9), float masks are added to the
    scores. `dropout` applies to the attention weights while training.

    Caches (for decoding step by step): `Cache(k, v)` holds the projected keys and values of the
    earlier steps, to which this step's are appended; `StaticCache(k, v)` holds projected keys and
    values used in place of key and value (cross attention). See `gen_cache`.
    """

    Cache = collections.namedtuple("Cache", ["k", "v"])
    StaticCache = collections.namedtuple("StaticCache", ["k", "v"])

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, kdim: Optional[int] = None,
                 vdim: Optional[int] = None, need_weights: bool = False, weight_attr: Any = None,
                 bias_attr: Any = None):
        super().__init__()
        fn = "MultiHeadAttention"
        self.embed_dim = positive_int(embed_dim, "embed_dim", fn, AssertedArgument)  # paddle asserts these
        self.num_heads = positive_int(num_heads, "num_heads", fn, AssertedArgument)
        if embed_dim % num_heads:
            raise AssertedArgument(f"{fn}: embed_dim ({embed_dim}) must be divisible by num_heads ({num_heads})")
        self.kdim = embed_dim if kdim is None else positive_int(kdim, "kdim", fn)
        self.vdim = embed_dim if vdim is None else positive_int(vdim, "vdim", fn)
        self.dropout = probability(dropout, "dropout", fn)
        self.need_weights = need_weights
        self.head_dim = embed_dim // num_heads
        self.q_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.k_proj = Linear(self.kdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.v_proj = Linear(self.vdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.out_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)

    def _heads(self, x: Tensor) -> Tensor:
        """[batch, length, embed_dim] -> [batch, num_heads, length, head_dim]."""
        return transpose(reshape(x, [0, 0, self.num_heads, self.head_dim]), [0, 2, 1, 3])

    def compute_kv(self, key: Tensor, value: Tensor) -> Tuple[Tensor, Tensor]:
        """The projected keys and values, [batch, num_heads, length, head_dim] each."""
        return self._heads(self.k_proj(key)), self._heads(self.v_proj(value))

    def gen_cache(self, key: Tensor, value: Optional[Tensor] = None, type: Any = Cache) -> Any:  # noqa: A002
        """A StaticCache of compute_kv(key, value); a Cache of (key, value) as given; or, for a
        Cache without value, an empty one ([batch, num_heads, 0, head_dim], batch and dtype taken
        from key)."""
        if type is MultiHeadAttention.StaticCache:
            if value is None:
                raise TypeError("MultiHeadAttention.gen_cache: a StaticCache needs value (the memory the "
                                "keys come with) as well as key, got value=None")
            return self.StaticCache(*self.compute_kv(key, value))
        if type is not MultiHeadAttention.Cache:
            raise TypeError(f"MultiHeadAttention.gen_cache: type must be MultiHeadAttention.Cache or "
                            f"MultiHeadAttention.StaticCache, got {type!r}")
        if value is None:
            shape = [key.shape[0], self.num_heads, 0, self.head_dim]
            return self.Cache(zeros(shape, key.dtype), zeros(shape, key.dtype))
        return self.Cache(key, value)

    def forward(self, query: Tensor, key: Optional[Tensor] = None, value: Optional[Tensor] = None,
                attn_mask: Optional[Tensor] = None, cache: Any = None) -> Union[Tensor, tuple]:
        key = query if key is None else key
        value = query if value is None else value
        if isinstance(attn_mask, (self.Cache, self.StaticCache)):  # a cache given one place too early
            raise TypeError(f"MultiHeadAttention: attn_mask must be a Tensor or None, got a "
                            f"{type(attn_mask).__name__}; pass the cache as cache= (the fifth argument)")
        if query.ndim != 3 or query.shape[-1] != self.embed_dim:
            raise ValueError(f"MultiHeadAttention: query must be [batch, length, {self.embed_dim}], got shape "
                             f"{query.shape}")
        q = self._heads(self.q_proj(query))
        if isinstance(cache, self.StaticCache):
            k, v = cache.k, cache.v
        else:
            k, v = self.compute_kv(key, value)
        if isinstance(cache, self.Cache):
            k, v = concat([cache.k, k], axis=2), concat([cache.v, v], axis=2)
            cache = self.Cache(k, v)
        elif cache is not None and not isinstance(cache, self.StaticCache):
            raise TypeError(f"MultiHeadAttention: cache must be None, a MultiHeadAttention.Cache or a "
                            f"MultiHeadAttention.StaticCache, got {type(cache).__name__}")
        mask = attention_mask_as_float(attn_mask, q.dtype)
        out, weights = attend(q, k, v, mask, self.dropout, self.training, self.head_dim ** -0.5)
        out = self.out_proj(reshape(transpose(out, [0, 2, 1, 3]), [0, 0, self.embed_dim]))
        outs = [out] + ([weights] if self.need_weights else []) + ([cache] if cache is not None else [])
        return out if len(outs) == 1 else tuple(outs)
