"""paddle.nn.functional.rnnt_loss: the RNN transducer loss, as paddle 3.3.1's CPU kernel (warp-
transducer) computes it, composed of differentiable pycoll ops (so create_graph works through it).

`input` [B, T, U + 1, V] holds log-probabilities, taken as they are (paddle's documented contract and
its CPU kernel; its GPU kernel applies a log_softmax first). The loss of sequence b is
-log of the sum, over the paths through the (t, u) lattice of its first input_lengths[b] steps and
label_lengths[b] labels, of exp(sum of the path's scores): a blank step (t, u) -> (t + 1, u) scores
input[b, t, u, blank], an emit step (t, u) -> (t, u + 1) scores input[b, t, u, label[b, u]], and the
path ends with the blank at (T_b - 1, U_b). The forward variables are computed one anti-diagonal
t + u at a time, vectorised over the batch and the diagonal's cells.

FastEmit (fastemit_lambda) leaves the loss as it is and scales the gradient of the emit scores by
1 + fastemit_lambda, as warp-transducer's does (the emit scores enter as (1 + lambda) e - lambda
detach(e)); that scaled gradient is no gradient of a function, so second derivatives through
create_graph are exact with fastemit_lambda=0 only (the emit path's carry one factor 1 + lambda
more). Where a label equals `blank`, the kernel's gradient for that class at (t, u) is the emit's
alone (it writes it over the blank's); so is pycoll's.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from pycoll._tensor_ops import as_tensor, require_floating
from pycoll.device import array_module
from pycoll.index_ops import take_along_axis
from pycoll.math_ops import sum
from pycoll.nn._loss_functional import _check_reduction
from pycoll.reduce_ops import logsumexp
from pycoll.shape_ops import concat, stack
from pycoll.tensor import Tensor, wrap

__all__ = ["rnnt_loss"]

_FAR = -1e30  # the score of a lattice move that does not exist: exp of it is 0, and no NaN follows


def rnnt_loss(input: Tensor, label: Tensor, input_lengths: Tensor, label_lengths: Tensor,  # noqa: A002
              blank: int = 0, fastemit_lambda: float = 0.001, reduction: str = "mean",
              name: Optional[str] = None) -> Tensor:
    """The RNN-T loss per sequence ('none', [B]), summed ('sum') or summed and divided by B
    ('mean'); see the module's notes."""
    fn = "rnnt_loss"
    _check_reduction(reduction)
    input = require_floating(as_tensor(input), fn, "input")
    lab = as_tensor(label)._array
    in_len, lab_len = as_tensor(input_lengths)._array, as_tensor(label_lengths)._array
    if input.ndim != 4:
        raise ValueError(f"{fn}: input must be 4-D [B, Tmax, Umax + 1, V], got shape {input.shape}")
    batch, steps, positions, classes = input.shape
    if lab.ndim != 2 or lab.shape[0] != batch or lab.shape[1] < positions - 1:
        raise ValueError(f"{fn}: label must be [B={batch}, Umax={positions - 1}], got shape {list(lab.shape)}")
    for what, arr in (("label", lab), ("input_lengths", in_len), ("label_lengths", lab_len)):
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{fn}: {what} must hold integers, got dtype {arr.dtype}")
    if in_len.shape != (batch,) or lab_len.shape != (batch,):
        raise ValueError(f"{fn}: input_lengths and label_lengths must be [B={batch}], got {list(in_len.shape)} and "
                         f"{list(lab_len.shape)}")
    if isinstance(blank, bool) or not isinstance(blank, (int, np.integer)) or not 0 <= blank < classes:
        raise ValueError(f"{fn}: blank must be an int in [0, {classes}), got {blank!r}")
    xp = array_module(lab)
    t_len, u_len = in_len.astype(np.int64), lab_len.astype(np.int64)
    if bool(xp.any((t_len < 1) | (t_len > steps) | (u_len < 0) | (u_len > positions - 1))):
        raise ValueError(f"{fn}: input_lengths must lie in [1, {steps}] and label_lengths in [0, {positions - 1}]")
    labels = lab[:, :positions - 1].astype(np.int64)
    if labels.size and bool(xp.any((labels < 0) | (labels >= classes))):
        raise ValueError(f"{fn}: labels must lie in [0, {classes})")

    blanks = input[:, :, :, blank]  # [B, T, U + 1]
    label_is_blank = xp.zeros((batch, 1, positions), dtype=input._array.dtype)
    label_is_blank[:, 0, :positions - 1] = (labels == blank) & (xp.arange(positions - 1) < u_len[:, None])
    if bool(label_is_blank.any()):  # warp-transducer writes the emit's gradient over the blank's there
        blanks = blanks * wrap(1 - label_is_blank) + blanks.detach() * wrap(label_is_blank)
    blanks = blanks.reshape([batch, -1])  # [B, T * (U + 1)]
    emit_ids = xp.broadcast_to(labels[:, None, :, None], (batch, steps, positions - 1, 1))
    emits = take_along_axis(input[:, :, :positions - 1, :], wrap(emit_ids), axis=3).reshape([batch, -1])
    if fastemit_lambda:  # the value stays, the gradient is scaled by 1 + lambda
        emits = emits * (1 + fastemit_lambda) - emits.detach() * fastemit_lambda

    width = positions  # U + 1 cells per time step
    diagonals = [wrap(xp.zeros((batch, 1), dtype=input._array.dtype))]  # alpha on t + u = 0
    spans = [(0, 0)]
    for d in range(1, steps + positions - 1):
        lo, hi = max(0, d - (positions - 1)), min(steps - 1, d)
        p_lo, p_hi = spans[-1]
        t = np.arange(lo, hi + 1)
        prev = concat([diagonals[-1], wrap(xp.full((batch, 1), _FAR, dtype=input._array.dtype))], axis=1)
        far = len(range(p_lo, p_hi + 1))  # the index of the _FAR column
        came_down = (t - 1 >= p_lo) & (t - 1 <= p_hi)  # from (t - 1, u) by a blank
        came_right = (t >= p_lo) & (t <= p_hi) & (d - t - 1 >= 0)  # from (t, u - 1) by an emit
        def pick(source: Tensor, keep: Any, index: Any, fallback: int) -> Tensor:
            chosen = np.broadcast_to(np.where(keep, index, fallback), (batch, t.size))
            return take_along_axis(source, wrap(xp.asarray(chosen, dtype=np.int64)), axis=1)
        from_down = pick(prev, came_down, t - 1 - p_lo, far) + pick(blanks, came_down, (t - 1) * width + d - t, 0)
        from_right = pick(prev, came_right, t - p_lo, far) + pick(emits, came_right, t * (width - 1) + d - t - 1, 0)
        diagonals.append(logsumexp(stack([from_down, from_right], axis=2), axis=2))
        spans.append((lo, hi))
    every = concat(diagonals, axis=1)
    offsets = np.cumsum([0] + [hi - lo + 1 for lo, hi in spans])
    offsets = xp.asarray(offsets)
    last_t = t_len - 1
    spans_lo = xp.asarray([lo for lo, _ in spans])
    end_diag = last_t + u_len
    where = (offsets[end_diag] + last_t - spans_lo[end_diag])[:, None]
    final = take_along_axis(every, wrap(where.astype(np.int64)), axis=1) \
        + take_along_axis(blanks, wrap((last_t * width + u_len)[:, None].astype(np.int64)), axis=1)
    losses = -final.reshape([batch])
    if reduction == "sum":
        return sum(losses)
    if reduction == "mean":
        return sum(losses) / batch
    return losses
