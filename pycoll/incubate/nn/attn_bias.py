"""paddle.incubate.nn.attn_bias (xformers' attention biases) for
``memory_efficient_attention``: each bias knows the additive mask it stands for
(``materialize(shape, dtype)``: 0 where a query may look, -inf where it may not).

- ``LowerTriangularMask``: causal, query i sees keys 0..i; ``add_bias(t)`` adds a tensor too
  (``LowerTriangularMaskWithTensorBias``);
- ``BlockDiagonalMask.from_seqlens(q_seqlen, kv_seqlen=None)``: sequences packed one after the
  other along the sequence axis of a batch of 1, each attending only within its own block;
  ``make_causal()`` (``BlockDiagonalCausalMask``) makes each block causal.

Left out: paddle's padded-keys variant (``BlockDiagonalCausalWithOffsetPaddedKeysMask``,
``PaddedSeqLenInfo``) and the tensor-list packing helpers."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, List, Optional, Sequence, Tuple

from pycoll.creation import full, zeros
from pycoll.math_ops import add
from pycoll.search_ops import triu
from pycoll.shape_ops import concat, expand, reshape
from pycoll.tensor import Tensor

__all__ = ["AttentionBias", "LowerTriangularMask", "LowerTriangularMaskWithTensorBias", "SeqLenInfo",
           "BlockDiagonalMask", "BlockDiagonalCausalMask"]


class AttentionBias:
    """An additive attention mask described by its structure rather than stored."""

    def materialize(self, shape: Sequence[int], dtype: Any = "float32") -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not define materialize")


class LowerTriangularMask(AttentionBias):
    """Causal: -inf above the diagonal of the last two axes."""

    def materialize(self, shape: Sequence[int], dtype: Any = "float32") -> Tensor:
        return triu(full(list(shape), float("-inf"), dtype), diagonal=1)

    def add_bias(self, bias: Tensor) -> "LowerTriangularMaskWithTensorBias":
        return LowerTriangularMaskWithTensorBias(bias)


class LowerTriangularMaskWithTensorBias(LowerTriangularMask):
    """The causal mask plus a tensor bias (broadcast to the scores' shape)."""

    def __init__(self, bias: Tensor) -> None:
        self._bias = bias

    def materialize(self, shape: Sequence[int], dtype: Any = "float32") -> Tensor:
        return add(super().materialize(shape, dtype), self._bias)


@dataclass
class SeqLenInfo:
    """Where each packed sequence starts (seqstart_py, ending with the total) and the longest."""
    seqstart_py: List[int]
    max_seqlen: int

    @classmethod
    def from_seqlens(cls, seqlens: Sequence[int]) -> "SeqLenInfo":
        starts = [0]
        for n in seqlens:
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise ValueError(f"SeqLenInfo.from_seqlens: lengths must be ints >= 0, got {list(seqlens)!r}")
            starts.append(starts[-1] + n)
        return cls(seqstart_py=starts, max_seqlen=max(seqlens, default=-1))

    def intervals(self) -> Iterator[Tuple[int, int]]:
        yield from zip(self.seqstart_py, self.seqstart_py[1:])


@dataclass
class BlockDiagonalMask(AttentionBias):
    """Packed sequences: query block i attends to key block i only."""
    q_seqinfo: SeqLenInfo
    k_seqinfo: SeqLenInfo

    def _block(self, rows: int, cols: int, dtype: Any) -> Tensor:
        return zeros([rows, cols], dtype)

    def materialize(self, shape: Sequence[int], dtype: Any = "float32") -> Tensor:
        lq, lk = self.q_seqinfo.seqstart_py[-1], self.k_seqinfo.seqstart_py[-1]
        if list(shape[-2:]) != [lq, lk]:
            raise ValueError(f"{type(self).__name__}.materialize: shape must end in [{lq}, {lk}] (the packed "
                             f"lengths), got {list(shape)}")
        rows = []
        for (q0, q1), (k0, k1) in zip(self.q_seqinfo.intervals(), self.k_seqinfo.intervals()):
            parts = [full([q1 - q0, k0], float("-inf"), dtype), self._block(q1 - q0, k1 - k0, dtype),
                     full([q1 - q0, lk - k1], float("-inf"), dtype)]
            rows.append(concat(parts, axis=1))
        mask = concat(rows, axis=0)
        return expand(reshape(mask, [1] * (len(shape) - 2) + [lq, lk]), list(shape))

    @classmethod
    def from_seqlens(cls, q_seqlen: Sequence[int], kv_seqlen: Optional[Sequence[int]] = None) -> "BlockDiagonalMask":
        if kv_seqlen is not None and len(kv_seqlen) != len(q_seqlen):
            raise ValueError(f"BlockDiagonalMask.from_seqlens: kv_seqlen must have q_seqlen's {len(q_seqlen)} "
                             f"entries, got {len(kv_seqlen)}")
        q = SeqLenInfo.from_seqlens(q_seqlen)
        return cls(q, q if kv_seqlen is None else SeqLenInfo.from_seqlens(kv_seqlen))

    def make_causal(self) -> "BlockDiagonalCausalMask":
        return BlockDiagonalCausalMask(self.q_seqinfo, self.k_seqinfo)


@dataclass
class BlockDiagonalCausalMask(BlockDiagonalMask):
    """Packed sequences, each block causal (query j of a block sees the block's keys 0..j)."""

    def _block(self, rows: int, cols: int, dtype: Any) -> Tensor:
        return LowerTriangularMask().materialize([rows, cols], dtype)
