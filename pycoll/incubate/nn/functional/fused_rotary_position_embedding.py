"""paddle.incubate's ``fused_rotary_position_embedding`` (RoPE), composed of pycoll's ops so
that gradients reach q, k and v.

Each head vector t of q, k, v is rotated: out = t * cos + rotate(t) * sin, where rotate is, with
``use_neox_rotary_style=True`` (paddle's default, and paddle's naming), the pairwise rotation of
neighbours ((t0, t1) -> (-t1, t0), ...), and with ``False`` the rotate-half form
(concat(-second half, first half)). sin and cos are [seq_len, head_dim] or
[1, seq_len, 1, head_dim] tables read at each token's position (its index, or
``position_ids[b, s]``); without them paddle's kernel computes
sin/cos(pos * rotary_emb_base ** (-2 * (i // 2) / head_dim)) in float32 for element i, which is
done here the same way (rotate-half and position_ids then need explicit tables, as in paddle)."""
from __future__ import annotations

from typing import Any, Optional, Tuple

from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module
from pycoll.math_ops import add, cast, multiply
from pycoll.shape_ops import chunk, concat, reshape, transpose
from pycoll.tensor import Tensor, wrap

__all__ = ["fused_rotary_position_embedding"]

_FN = "fused_rotary_position_embedding"


def _rotated(t: Tensor, neighbours: bool) -> Tensor:
    """t's head vectors rotated by 90 degrees in each plane: neighbours (-t1, t0, -t3, t2, ...)
    or halves (-t[d/2:], t[:d/2])."""
    if not neighbours:
        first, second = chunk(t, 2, axis=-1)
        return concat([-second, first], axis=-1)
    shape = list(t.shape)
    even, odd = chunk(reshape(t, shape[:-1] + [shape[-1] // 2, 2]), 2, axis=-1)
    return reshape(concat([-odd, even], axis=-1), shape)


def _table(name: str, t: Any, dim: int) -> Tensor:
    """A sin or cos table as [positions, head_dim]."""
    t = as_tensor(t)
    if not (t.ndim == 2 and t.shape[1] == dim) and not (t.ndim == 4 and t.shape[0] == 1 and t.shape[2] == 1
                                                        and t.shape[3] == dim):
        raise ValueError(f"{_FN}: {name} must have shape [seq_len, {dim}] or [1, seq_len, 1, {dim}], got {t.shape}")
    return reshape(t, [-1, dim]) if t.ndim == 4 else t


def _positions(position_ids: Any, batch: int, seq: int, like: Any) -> Tuple[Any, bool]:
    """The position of every token: position_ids as [batch, seq] integers, or 0..seq-1 (shared
    by the batch: the flag says which)."""
    xp = array_module(like)
    if position_ids is None:
        return xp.arange(seq), False
    ids = as_tensor(position_ids)._array
    if ids.dtype.kind not in "iu" or tuple(ids.shape) != (batch, seq):
        raise ValueError(f"{_FN}: position_ids must be integers of shape [{batch}, {seq}], got {ids.dtype} "
                         f"{list(ids.shape)}")
    return xp.asarray(ids), True


def _sin_cos(sin: Any, cos: Any, pos: Any, per_batch: bool, dim: int, base: float, like: Tensor) -> Tuple[Tensor, Tensor]:
    """sin and cos at each token's position, as [batch or 1, seq, 1, dim] (batch-major)."""
    if sin is None:
        xp = array_module(like._array)
        i = xp.arange(dim)
        inv_freq = 1.0 / xp.power(xp.float32(base), (2 * (i // 2)).astype(xp.float32) / xp.float32(dim))
        freq = pos.astype(xp.float32)[..., None] * inv_freq.astype(xp.float32)
        s, c = wrap(xp.sin(freq)), wrap(xp.cos(freq))
    else:
        s, c = _table("sin", sin, dim), _table("cos", cos, dim)
        if s.shape != c.shape:
            raise ValueError(f"{_FN}: sin and cos must have the same shape, got {s.shape} and {c.shape}")
        limit = int(pos.max()) + 1 if pos.size else 0
        if limit > s.shape[0]:
            raise ValueError(f"{_FN}: sin/cos have {s.shape[0]} positions, the tokens need {limit}")
        s, c = s[pos], c[pos]
    lead = list(pos.shape) if per_batch else [1, pos.shape[0]]
    s, c = reshape(s, lead + [1, dim]), reshape(c, lead + [1, dim])
    if s.dtype != like.dtype:
        s, c = cast(s, like.dtype), cast(c, like.dtype)
    return s, c


def fused_rotary_position_embedding(q: Tensor, k: Optional[Tensor] = None, v: Optional[Tensor] = None,
                                    sin: Optional[Tensor] = None, cos: Optional[Tensor] = None,
                                    position_ids: Optional[Tensor] = None, use_neox_rotary_style: bool = True,
                                    time_major: bool = False, rotary_emb_base: float = 10000.0
                                    ) -> Tuple[Tensor, Optional[Tensor], Optional[Tensor]]:
    """RoPE applied to q, k and v ([batch, seq, heads, head_dim], or [seq, batch, ...] with
    time_major; k and v may have their own number of heads). Returns (out_q, out_k, out_v),
    None for an input not given."""
    q = as_tensor(q)
    if q.ndim != 4 or q.shape[-1] % 2:
        raise ValueError(f"{_FN}: q must be 4-D with an even head_dim, got shape {q.shape}")
    if (sin is None) != (cos is None):
        raise ValueError(f"{_FN}: sin and cos must be given together, got only {'cos' if sin is None else 'sin'}")
    if sin is None and position_ids is not None:
        raise ValueError(f"{_FN}: position_ids need sin and cos (paddle's rule), got sin=None and cos=None")
    if sin is None and not use_neox_rotary_style:
        raise ValueError(f"{_FN}: use_neox_rotary_style=False needs sin and cos (paddle's rule), got None")
    seq, batch = (q.shape[0], q.shape[1]) if time_major else (q.shape[1], q.shape[0])
    dim = q.shape[-1]
    inputs = [q]
    for name, t in (("k", k), ("v", v)):
        if t is not None:
            t = as_tensor(t)
            if t.ndim != 4 or t.shape[:2] != q.shape[:2] or t.shape[-1] != dim:
                raise ValueError(f"{_FN}: {name} must have q's first two sizes and head_dim {q.shape[:2]}, {dim}, "
                                 f"got shape {t.shape}")
        inputs.append(t)
    pos, per_batch = _positions(position_ids, batch, seq, q._array)
    s, c = _sin_cos(sin, cos, pos, per_batch, dim, float(rotary_emb_base), q)
    if time_major:
        s, c = transpose(s, [1, 0, 2, 3]), transpose(c, [1, 0, 2, 3])
    out = tuple(None if t is None else add(multiply(t, c), multiply(_rotated(t, use_neox_rotary_style), s))
                for t in inputs)
    return out[0], out[1], out[2]
