"""Rearrangements along a time axis (paddle.nn.functional names): temporal_shift (the Temporal
Shift Module's channel shift between neighbouring frames) and gather_tree (the backtrace of a beam
search). temporal_shift is composed of differentiable slices and concatenations; gather_tree works
on integer ids and has no gradient."""
from __future__ import annotations

from typing import Optional

import numpy as np

from pycoll._tensor_ops import as_tensor, value_output
from pycoll.device import array_module
from pycoll.shape_ops import concat
from pycoll.tensor import Tensor, wrap

__all__ = ["temporal_shift", "gather_tree"]


def temporal_shift(x: Tensor, seg_num: int, shift_ratio: float = 0.25, name: Optional[str] = None,
                   data_format: str = "NCHW") -> Tensor:
    """x [N * seg_num, C, H, W] (or NHWC) seen as N clips of seg_num frames: channels [0, c1) take
    the previous frame's values, [c1, c2) the next frame's (zeros past the clip's ends), the rest
    stay; c1 = int(C * shift_ratio), c2 = int(2 C * shift_ratio) in float32, as paddle's kernel."""
    fn = "temporal_shift"
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"{fn}: data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
    if isinstance(seg_num, bool) or not isinstance(seg_num, (int, np.integer)) or seg_num <= 0:
        raise ValueError(f"{fn}: seg_num must be an int > 0, got {seg_num!r}")
    if isinstance(shift_ratio, bool) or not isinstance(shift_ratio, (int, float)) or not 0 < shift_ratio < 0.5:
        raise ValueError(f"{fn}: shift_ratio must be a number in (0, 0.5), got {shift_ratio!r}")
    x = as_tensor(x)
    if x.ndim != 4:
        raise ValueError(f"{fn}: x must be 4-D [N * seg_num, C, H, W] ({data_format}), got shape {x.shape}")
    if x.shape[0] % seg_num:
        raise ValueError(f"{fn}: x's first dimension ({x.shape[0]}) must be divisible by seg_num ({seg_num})")
    frames = x.reshape([x.shape[0] // seg_num, seg_num] + x.shape[1:])
    axis = 2 if data_format == "NCHW" else 4
    channels = frames.shape[axis]
    c1 = int(np.float32(channels) * np.float32(shift_ratio))
    c2 = int(np.float32(2 * channels) * np.float32(shift_ratio))

    def block(lo: int, hi: int, t_lo: int, t_hi: int) -> Tensor:
        index = [slice(None)] * 5
        index[1], index[axis] = slice(t_lo, t_hi), slice(lo, hi)
        return frames[tuple(index)]

    def gap(lo: int, hi: int) -> Tensor:
        shape = list(frames.shape)
        shape[1], shape[axis] = 1, hi - lo
        return wrap(array_module(x._array).zeros(shape, dtype=x._array.dtype))

    earlier = concat([gap(0, c1), block(0, c1, 0, seg_num - 1)], axis=1)
    later = concat([block(c1, c2, 1, seg_num), gap(c1, c2)], axis=1)
    out = concat([earlier, later, block(c2, channels, 0, seg_num)], axis=axis)
    return out.reshape(x.shape)


def gather_tree(ids: Tensor, parents: Tensor) -> Tensor:
    """The full sequences of a beam search: ids and parents [max_time, batch, beam] (integers);
    each beam is followed back from the last step through its parents, picking up the ids on
    the way."""
    fn = "gather_tree"
    ids, parents = as_tensor(ids), as_tensor(parents)
    a, p = ids._array, parents._array
    if a.ndim != 3 or p.shape != a.shape:
        raise ValueError(f"{fn}: ids and parents must both be [max_time, batch, beam], got shapes {ids.shape} and "
                         f"{parents.shape}")
    if a.dtype.kind not in "iu" or p.dtype.kind not in "iu":
        raise TypeError(f"{fn}: ids and parents must hold integers, got {a.dtype} and {p.dtype}")
    xp = array_module(a)
    beams = a.shape[2]
    if p.size and (int(p.min()) < 0 or int(p.max()) >= beams):
        bad = int(p.min()) if int(p.min()) < 0 else int(p.max())
        raise ValueError(f"{fn}: parents must lie in [0, beam={beams}), got {bad}")
    out = xp.empty_like(a)
    if a.shape[0]:
        out[-1] = a[-1]
        parent = p[-1]
        for step in range(a.shape[0] - 2, -1, -1):
            out[step] = xp.take_along_axis(a[step], parent, axis=1)
            parent = xp.take_along_axis(p[step], parent, axis=1)
    return value_output(out, fn, ids, parents)
