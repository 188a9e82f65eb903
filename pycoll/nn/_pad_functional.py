"""paddle.nn.functional.pad: constant, reflect, replicate and circular padding (and cropping by
negative pads) of any axes, one op with a hand-written backward."""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from pycoll._param_aliases import param_aliases
from pycoll._tensor_ops import as_tensor, op_output, placed
from pycoll.device import array_module, to_module
from pycoll.nn._sliding import FORMATS
from pycoll.tensor import Tensor


_NUMPY_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _pad_widths(shape: Sequence[int], pad: List[int], mode: str, data_format: Optional[str],
                pad_from_left_axis: bool) -> List[Tuple[int, int]]:
    """paddle's pad list as (before, after) per axis of x (see `pad`)."""
    nd = len(shape)
    widths = [(0, 0)] * nd
    if mode == "constant" and len(pad) != 2 * (nd - 2):
        if len(pad) % 2 or len(pad) > 2 * nd:
            raise ValueError(f"pad: pad must hold an even number (at most {2 * nd}) of ints, got {pad}")
        if any(p < 0 for p in pad):
            raise ValueError(f"pad: a negative pad (cropping) needs mode 'constant' with 2 * (ndim - 2) ints, or "
                             f"another mode, as in paddle; got {pad} for a {nd}-D x")
        from_left = len(pad) == 2 * nd and pad_from_left_axis
        axes = range(nd) if from_left else range(nd - 1, nd - 1 - len(pad) // 2, -1)
    else:
        if nd - 2 not in FORMATS:
            raise ValueError(f"pad: mode {mode!r} (or a pad of 2 * (ndim - 2) ints) needs a 3-D, 4-D or 5-D "
                             f"x, got shape {list(shape)}")
        first, last = FORMATS[nd - 2]
        data_format = data_format or first
        if data_format not in (first, last):
            raise ValueError(f"pad: data_format must be {first!r} or {last!r} for a {nd}-D x, got {data_format!r}")
        if len(pad) != 2 * (nd - 2):
            raise ValueError(f"pad: mode {mode!r} needs {2 * (nd - 2)} ints for a {nd}-D x, got {pad}")
        spatial = list(range(2, nd)) if data_format == first else list(range(1, nd - 1))
        axes = spatial[::-1]
    for i, ax in enumerate(axes):
        widths[ax] = (pad[2 * i], pad[2 * i + 1])
    return widths


@param_aliases({"input": "x"})
def pad(x: Tensor, pad: Any, mode: str = "constant", value: float = 0.0, data_format: Optional[str] = None,
        pad_from_left_axis: bool = True, name: Optional[str] = None) -> Tensor:
    """paddle's pad. mode 'constant' (fill with value), 'reflect', 'replicate' or 'circular'.

    With mode 'constant' and a pad list that is not 2 * (ndim - 2) long, the pairs (before, after)
    go to the axes from the last one backwards, or, when there are 2 * ndim ints and
    pad_from_left_axis, from the first one on. Otherwise x is 3-D to 5-D and the pairs go to its
    spatial axes (by data_format) from the last one backwards: [left, right, top, bottom, ...];
    there a negative entry crops that many cells off that side (paddle's rule, as if x were
    padded by the positive entries first and then cut).
    """
    if mode not in _NUMPY_MODES:
        raise ValueError(f"pad: mode must be one of {list(_NUMPY_MODES)}, got {mode!r}")
    if not isinstance(value, (int, float, np.number)):
        raise TypeError(f"pad: value must be a number, got {type(value).__name__} {value!r}")
    x = as_tensor(x)
    a = x._array
    if isinstance(pad, Tensor):
        pad = pad.numpy().tolist()
    if not isinstance(pad, (list, tuple)) or not all(isinstance(p, (int, np.integer)) for p in pad):
        raise ValueError(f"pad: pad must be a list of ints, got {pad!r}")
    widths = _pad_widths(a.shape, [int(p) for p in pad], mode, data_format, pad_from_left_axis)
    x, = placed("pad", x, axes=tuple(i for i, w in enumerate(widths) if w != (0, 0)))  # auto-parallel: others stay
    a = x._array
    if any(n + b + e < 0 for n, (b, e) in zip(a.shape, widths)):
        raise ValueError(f"pad: pad {pad} crops more than x (shape {list(a.shape)}) holds")
    grow = [(max(b, 0), max(e, 0)) for b, e in widths]
    cut = tuple(slice(max(-b, 0), n + max(b, 0) + e) for n, (b, e) in zip(a.shape, widths))
    xp = array_module(a)
    np_mode = _NUMPY_MODES[mode]
    if mode == "reflect" and any(b >= n or e >= n for n, (b, e) in zip(a.shape, grow) if b or e):
        raise ValueError(f"pad: reflect padding must be smaller than the padded axis, got {pad} for shape "
                         f"{list(a.shape)}")
    if mode == "constant":
        full = xp.pad(a, grow, constant_values=value)
    else:
        full = xp.pad(a, grow, mode=np_mode)
    out = xp.ascontiguousarray(full[cut])
    inner = tuple(slice(b, b + n) for n, (b, _) in zip(a.shape, grow))

    def backward(g: Any) -> tuple:
        if g.shape != full.shape:  # cropped: the cut cells get no gradient
            whole = xp.zeros(full.shape, dtype=g.dtype)
            whole[cut] = g
            g = whole
        if mode == "constant":
            return (g[inner],)
        for ax, (b, e) in enumerate(grow):  # each padded axis pulls its gradient back separately
            if b or e:
                g = _pulled_back(g, ax, a.shape[ax], (b, e), np_mode)
        return (xp.ascontiguousarray(g),)
    return op_output(out, backward, x)


def _pulled_back(g: Any, ax: int, n: int, grown: Tuple[int, int], np_mode: str) -> Any:
    """The gradient of x along axis ``ax`` (of size n) from g's along that axis, where x grew by
    ``grown`` (before, after) cells in NumPy's pad mode ``np_mode``: g's inner n cells plus each
    padded cell's gradient added to the cell it copies. A run of at most n padded cells copies
    distinct cells ('reflect' runs shorter than n back and forth, 'wrap' runs n consecutive ones
    round), so each run adds with one indexed add; 'edge' copies one cell: its run's sum."""
    xp = array_module(g)
    before, after = grown
    source = np.pad(np.arange(n), grown, mode=np_mode)
    lead = (slice(None),) * ax
    pulled = g[lead + (slice(before, before + n),)].copy()
    for start, stop in ((0, before), (before + n, before + n + after)):
        for lo in range(start, stop, n):
            block = g[lead + (slice(lo, min(lo + n, stop)),)]
            if np_mode == "edge":
                at = int(source[lo])
                pulled[lead + (slice(at, at + 1),)] += block.sum(axis=ax, keepdims=True)
            else:
                pulled[lead + (to_module(source[lo:lo + block.shape[ax]], xp),)] += block
    return pulled
