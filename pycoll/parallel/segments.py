"""Parameters split into equal pieces across the ranks of a group (ZeRO's layout), and the flat
buffers that move every rank's pieces in one reduce-scatter or all-gather.

A parameter of ``size`` elements, flattened, is cut into ``n`` pieces of ``ceil(size / n)``
elements; rank ``r`` owns elements ``[r·c, (r+1)·c)`` (clipped to the size, so the last pieces
may be short or empty). A bucket's flat buffer holds rank 0's pieces of all its parameters, then
rank 1's, ..., each piece padded to its full length: part ``r`` of the buffer is what rank ``r``
sends or receives.
"""
from __future__ import annotations

from typing import Any, List, Sequence, Tuple

import numpy as np

from pycoll import kernels


def piece_bounds(size: int, nranks: int, index: int) -> Tuple[int, int]:
    """``(lo, hi)``: the elements of a flattened parameter of ``size`` that rank ``index`` owns."""
    chunk = -(-size // nranks)
    return min(index * chunk, size), min((index + 1) * chunk, size)


class Segments:
    """The layout of one bucket of parameters (of ``shapes``, one dtype) over ``nranks`` ranks."""

    def __init__(self, shapes: Sequence[Tuple[int, ...]], nranks: int):
        self.nranks = nranks
        self.sizes = [int(np.prod(s)) for s in shapes]
        self.chunks = [-(-size // nranks) for size in self.sizes]
        self.offsets = list(np.cumsum([0] + self.chunks[:-1]))
        self.width = sum(self.chunks)  # one rank's part of the flat buffer

    def pack(self, arrays: Sequence[Any], out: Any, scale: float, xp: Any, tail: Any = None) -> None:
        """Write every rank's pieces of ``arrays`` (the whole parameters' values), times
        ``scale``, into ``out`` (``nranks × width`` elements); with ``tail``, an array of
        ``arrays``' dtype, each rank's part is followed by it (``nranks × (width + tail.size)``)."""
        pieces: List[Any] = []
        zeros = xp.zeros(max(self.chunks), dtype=arrays[0].dtype)
        for r in range(self.nranks):
            for arr, size, chunk in zip(arrays, self.sizes, self.chunks):
                lo, hi = piece_bounds(size, self.nranks, r)
                pieces.extend(p for p in (arr.reshape(-1)[lo:hi], zeros[:chunk - (hi - lo)]) if p.size)
            if tail is not None:
                pieces.append(tail)
        kernels.flatten(pieces, out=out, scale=scale)

    def pack_part(self, pieces: Sequence[Any], out: Any, xp: Any) -> None:
        """Write one rank's ``pieces`` (one per parameter, unpadded) into ``out`` (``width``)."""
        zeros = xp.zeros(max(self.chunks), dtype=out.dtype)
        padded = [p for piece, chunk in zip(pieces, self.chunks)
                  for p in (piece, zeros[:chunk - piece.size]) if p.size]
        kernels.flatten(padded, out=out)

    def unpack(self, parts: Sequence[Any], targets: Sequence[Any], xp: Any) -> None:
        """Write every rank's pieces into the whole parameters' arrays ``targets`` (C-contiguous,
        written in place): ``parts[r]`` is rank r's ``width`` elements (as an all-gather delivers
        them; the rows of one ``nranks × width`` array do too)."""
        pad = xp.empty(self.width, dtype=targets[0].dtype)  # the padding's sink, a slice of it each
        for r, part in enumerate(parts):
            views: List[Any] = []
            for target, size, chunk, offset in zip(targets, self.sizes, self.chunks, self.offsets):
                lo, hi = piece_bounds(size, self.nranks, r)
                sink = pad[offset:offset + chunk - (hi - lo)]
                views.extend(v for v in (target.reshape(-1)[lo:hi], sink) if v.size)
            kernels.unflatten(part, views)

    def part_pieces(self, part: Any, index: int) -> List[Any]:
        """Rank ``index``'s pieces (views, unpadded) in ``part``, its ``width`` elements."""
        out = []
        for offset, size in zip(self.offsets, self.sizes):
            lo, hi = piece_bounds(size, self.nranks, index)
            out.append(part[offset:offset + hi - lo])
        return out
