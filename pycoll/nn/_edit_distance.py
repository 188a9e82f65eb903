"""paddle.nn.functional.loss.edit_distance: the Levenshtein distance (insertions, deletions and
substitutions, each costing 1) between each hypothesis row of `input` and the label row beside it.

The dynamic programme runs over the hypothesis positions, one row of distances at a time, each row
vectorised over the batch and the label positions: within a row, the insertion chain
D[i, j] = min_k (C[i, k] + j - k) is a running minimum of C[i, k] - k (C: the best of a deletion
and a substitution step). The distance between the prefixes of lengths (n, m) is D[n, m], so
padded rows of different lengths share one programme and each takes its own cell.

Paddle 3.3.1 quirks kept: the result is (sequence_num [1] int64, distance [batch, 1] float32), in
that order, whatever its docstring's names say, and a non-empty ignored_tokens raises. Without
lengths, a row's length is its full width (paddle's eager kernel rejects that call or crashes).
"""
from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import numpy as np

from pycoll._tensor_ops import as_tensor, placed, value_output
from pycoll.device import array_module, to_module
from pycoll.scan_ops import accumulate
from pycoll.tensor import Tensor

__all__ = ["edit_distance"]

_FN = "edit_distance"


def _sequences(name: str, x: Any) -> Tensor:
    """`x` as a Tensor of int64 rows [batch, width], else a ValueError naming it (paddle's kernel
    reads int64 only)."""
    x = as_tensor(x)
    if x.ndim != 2 or x._array.dtype != np.int64:
        raise ValueError(f"{_FN}: {name} must be a 2-D int64 tensor [batch, length], got shape {x.shape} "
                         f"dtype {x._array.dtype}")
    return x


def _lengths(name: str, lengths: Any, batch: int, width: int, xp: Any) -> Any:
    """The int64 length of each of the `batch` rows, in [0, width]; the full width when not given."""
    if lengths is None:
        return xp.full(batch, width, dtype=np.int64)
    a = to_module(as_tensor(lengths)._array, xp)
    if a.dtype != np.int64 or a.size != batch:
        raise ValueError(f"{_FN}: {name} must be an int64 tensor of {batch} lengths (one per sequence), got shape "
                         f"{list(a.shape)} dtype {a.dtype}")
    a = a.reshape(-1)
    if batch and bool(((a < 0) | (a > width)).any()):
        raise ValueError(f"{_FN}: {name} must lie in [0, {width}] (the sequences' width), got {a.tolist()}")
    return a


def _levenshtein(hyp: Any, ref: Any, hyp_len: Any, ref_len: Any) -> Any:
    """The int64 edit distance [batch] between hyp[b, :hyp_len[b]] and ref[b, :ref_len[b]]."""
    xp = array_module(hyp)
    batch, ref_width = ref.shape
    offsets = xp.arange(ref_width + 1, dtype=np.int64)
    rows = xp.arange(batch)
    row = xp.broadcast_to(offsets, (batch, ref_width + 1))  # D[0, j] = j: j insertions
    dist = row[rows, ref_len]
    for i in range(1, hyp.shape[1] + 1):
        substituted = row[:, :-1] + (hyp[:, i - 1:i] != ref)
        best_step = xp.concatenate([xp.full((batch, 1), i, dtype=np.int64),
                                    xp.minimum(row[:, 1:] + 1, substituted)], axis=1)
        row = accumulate(xp, "minimum", best_step - offsets, 1) + offsets
        dist = xp.where(hyp_len == i, row[rows, ref_len], dist)
    return dist


def edit_distance(input: Tensor, label: Tensor, normalized: bool = True, ignored_tokens: Optional[Sequence[int]] = None,
                  input_length: Optional[Tensor] = None, label_length: Optional[Tensor] = None
                  ) -> Tuple[Tensor, Tensor]:
    """(sequence_num, distance) as paddle 3.3.1 returns them: the batch size [1] int64 and the edit
    distance of each row pair [batch, 1] float32, divided by the label's length when `normalized`
    (an empty label then raises, as paddle's does)."""
    if ignored_tokens is not None and len(ignored_tokens) > 0:
        raise ValueError(f"{_FN}: Expected ignored_tokens is None (got {ignored_tokens}); paddle 3.3.1 does not "
                         f"support removing tokens")
    if not isinstance(normalized, (bool, np.bool_)):
        raise TypeError(f"{_FN}: normalized must be a bool, got {type(normalized).__name__}")
    hyp, ref = _sequences("input", input), _sequences("label", label)
    given = [as_tensor(t) for t in (input_length, label_length) if t is not None]
    hyp, ref, *given = placed("_all_whole", hyp, ref, *given)  # auto-parallel: computed whole
    if input_length is not None:
        input_length = given.pop(0)
    if label_length is not None:
        label_length = given.pop(0)
    if hyp.shape[0] != ref.shape[0]:
        raise ValueError(f"{_FN}: input and label must have the same batch size, got shapes {hyp.shape} and "
                         f"{ref.shape}")
    h = hyp._array
    xp = array_module(h)
    r = to_module(ref._array, xp)
    batch = h.shape[0]
    hyp_len = _lengths("input_length", input_length, batch, h.shape[1], xp)
    ref_len = _lengths("label_length", label_length, batch, r.shape[1], xp)
    dist = _levenshtein(h, r, hyp_len, ref_len).astype(np.float32)
    if normalized:
        empty = xp.flatnonzero(ref_len == 0)
        if empty.size:
            raise ValueError(f"{_FN}: label sequence {int(empty[0])} is empty (label_length 0); normalized=True "
                             f"divides by the label length")
        dist = dist / ref_len.astype(np.float32)
    sequence_num = xp.full(1, batch, dtype=np.int64)
    return (value_output(sequence_num, _FN, hyp, ref),
            value_output(dist.reshape(batch, 1), _FN, hyp, ref))
