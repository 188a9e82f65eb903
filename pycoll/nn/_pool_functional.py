"""paddle.nn.functional pooling and pad: max_pool1d/2d, avg_pool1d/2d, adaptive_avg_pool1d/2d,
adaptive_max_pool1d/2d and pad, each one op with a hand-written backward. A 1-D pool is the 2-D
one over an axis of height 1 (as paddle's).

Window geometry is paddle 3.3.1's: with ceil_mode the last windows may run past the padded input.
An exclusive average divides by the window's cells inside the input; a non-exclusive one by its
cells from the first padded row up to the input's end plus the *leading* padding (paddle's kernel
sees one padding per axis, so a window over an asymmetric trailing pad, as 'SAME' makes, is
divided as if that pad were the leading one's size). Those counts are per axis and not clipped at
zero, as in paddle's kernel: a window holding no cell to count (one of padding alone, or one past
the input's end) gives 0 / 0 = NaN. divisor_override rescales the result as paddle does
(out * kh * kw / divisor). Adaptive windows span [floor(i * n / o), ceil((i + 1) * n / o)).
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, Union

import numpy as np

from pycoll._tensor_ops import as_tensor, op_output, value_output
from pycoll.device import array_module, to_module
from pycoll.nn._sliding import (Pads, check_format, fold, from_nchw, int_list, pad_spatial, parse_padding,
                                same_pads, to_nchw, windows)
from pycoll.shape_ops import scatter_add
from pycoll.tensor import Tensor

Size2 = Union[int, Sequence[int]]
MaskedResult = Union[Tensor, Tuple[Tensor, Tensor]]


def _geometry(a: Any, kernel_size: Size2, stride: Optional[Size2], padding: Any, ceil_mode: bool,
              channel_last: bool, nd: int, fn: str) -> Tuple[List[int], List[int], Pads, Pads]:
    """(kernel, stride, explicit pads, pads with the ceil-mode overflow added) over the two
    trailing axes of NCHW `a`; a 1-D pool's (nd=1) height axis gets kernel 1, stride 1, no pads."""
    kernel = int_list(kernel_size, nd, "kernel_size", fn)
    stride = list(kernel) if stride is None else int_list(stride, nd, "stride", fn)
    if ceil_mode and isinstance(padding, str) and padding.upper() == "VALID":
        raise ValueError(f"{fn}: ceil_mode must be False with padding='VALID'")
    pads = parse_padding(padding, nd, channel_last, fn)
    if pads is None:
        pads = same_pads(a.shape[4 - nd:], kernel, stride)
    if nd == 1:
        kernel, stride, pads = [1] + kernel, [1] + stride, [(0, 0)] + pads
    grown = []
    for n, k, s, (b, e) in zip(a.shape[2:], kernel, stride, pads):
        span = n + b + e - k
        if span < 0:
            raise ValueError(f"{fn}: kernel_size {kernel[2 - nd:]} is larger than the padded input "
                             f"{list(a.shape[4 - nd:])}")
        out = (span + (s - 1 if ceil_mode else 0)) // s + 1
        grown.append((b, e + max((out - 1) * s - span, 0)))
    return kernel, stride, pads, grown


def _crop(ga: Any, pads: Pads, shape: Sequence[int]) -> Any:
    (t, _), (l, _) = pads
    return ga[:, :, t:t + shape[2], l:l + shape[3]]


def max_pool2d(x: Tensor, kernel_size: Size2, stride: Optional[Size2] = None, padding: Any = 0,
               return_mask: bool = False, ceil_mode: bool = False, data_format: str = "NCHW",
               name: Optional[str] = None) -> MaskedResult:
    """The maximum of each window (padding never wins). return_mask (NCHW only) also gives the
    int32 flat index h * W + w of each maximum in its input plane; the gradient goes to the first
    maximum of a window, as paddle's."""
    return _max_pool(x, kernel_size, stride, padding, return_mask, ceil_mode, data_format, 2, "max_pool2d")


def max_pool1d(x: Tensor, kernel_size: Size2, stride: Optional[Size2] = None, padding: Any = 0,
               return_mask: bool = False, ceil_mode: bool = False, name: Optional[str] = None) -> MaskedResult:
    """max_pool2d's rules along the last axis of x [N, C, L]; the mask holds indices into L."""
    return _max_pool(x, kernel_size, stride, padding, return_mask, ceil_mode, "NCL", 1, "max_pool1d")


def _max_pool(x: Tensor, kernel_size: Any, stride: Any, padding: Any, return_mask: bool, ceil_mode: bool,
              data_format: str, nd: int, fn: str) -> MaskedResult:
    x = as_tensor(x)
    channel_last = check_format(data_format, nd, fn)
    if return_mask and channel_last:
        raise ValueError(f"{fn}: return_mask needs data_format='NCHW'")
    a = to_nchw(x._array, nd, channel_last, fn)
    xp = array_module(a)
    kernel, stride, pads, grown = _geometry(a, kernel_size, stride, padding, ceil_mode, channel_last, nd, fn)
    # paddle's max starts from the lowest finite value: a window of padding alone gives that
    padded = pad_spatial(a, grown, (np.finfo if a.dtype.kind == "f" else np.iinfo)(a.dtype).min)
    win = windows(padded, kernel, stride)
    n, c, oh, ow, kh, kw = win.shape
    cols = win.reshape(n, c, oh, ow, kh * kw)
    pick = cols.argmax(axis=-1)
    out = xp.take_along_axis(cols, pick[..., None], axis=-1)[..., 0]

    def backward(g: Any) -> tuple:
        g = to_nchw(g, nd, channel_last, fn)
        gcols = (pick[..., None] == xp.arange(kh * kw)) * g[..., None]
        ga = fold(gcols.reshape(n, c, oh, ow, kh, kw), padded.shape, stride)
        return (from_nchw(_crop(ga, grown, a.shape), nd, channel_last),)
    result = op_output(from_nchw(out, nd, channel_last), backward, x)
    if not return_mask:
        return result
    rows = xp.arange(oh)[:, None] * stride[0] + pick // kw - grown[0][0]
    cols_ = xp.arange(ow) * stride[1] + pick % kw - grown[1][0]
    mask = from_nchw((rows * a.shape[3] + cols_).astype(np.int32), nd, False)
    return result, value_output(mask, f"{fn}_mask", x)


def avg_pool2d(x: Tensor, kernel_size: Size2, stride: Optional[Size2] = None, padding: Any = 0,
               ceil_mode: bool = False, exclusive: bool = True, divisor_override: Optional[float] = None,
               data_format: str = "NCHW", name: Optional[str] = None) -> Tensor:
    """The mean of each window (see the module's notes for the divisor)."""
    return _avg_pool(x, kernel_size, stride, padding, ceil_mode, exclusive, divisor_override, data_format, 2,
                     "avg_pool2d")


def avg_pool1d(x: Tensor, kernel_size: Size2, stride: Optional[Size2] = None, padding: Any = 0,
               exclusive: bool = True, ceil_mode: bool = False, name: Optional[str] = None) -> Tensor:
    """avg_pool2d's rules along the last axis of x [N, C, L] (paddle's argument order: exclusive
    before ceil_mode)."""
    return _avg_pool(x, kernel_size, stride, padding, ceil_mode, exclusive, None, "NCL", 1, "avg_pool1d")


def _avg_pool(x: Tensor, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool, exclusive: bool,
              divisor_override: Optional[float], data_format: str, nd: int, fn: str) -> Tensor:
    if divisor_override is not None and (isinstance(divisor_override, bool) or not isinstance(
            divisor_override, (int, float)) or divisor_override <= 0):
        raise ValueError(f"{fn}: divisor_override must be a number > 0, got {divisor_override!r}")
    x = as_tensor(x)
    channel_last = check_format(data_format, nd, fn)
    a = to_nchw(x._array, nd, channel_last, fn)
    xp = array_module(a)
    kernel, stride, pads, grown = _geometry(a, kernel_size, stride, padding, ceil_mode, channel_last, nd, fn)
    padded = pad_spatial(a, grown)
    win = windows(padded, kernel, stride)
    oh, ow = win.shape[2:4]
    counts = []  # per axis, in padded coordinates (the input at [b, b + n)): see the module's notes
    for n, k, s, o, (b, _) in zip(a.shape[2:], kernel, stride, (oh, ow), pads):
        lo, hi = (b, b + n) if exclusive else (0, n + 2 * b)
        start = xp.arange(o) * s
        counts.append(xp.minimum(start + k, hi) - xp.maximum(start, lo))
    with np.errstate(divide="ignore", invalid="ignore"):  # a count of 0 gives NaN, as paddle's
        scale = 1.0 / (counts[0][:, None] * counts[1][None, :])
        if divisor_override is not None:
            scale = scale * (kernel[0] * kernel[1] / divisor_override)
        scale = scale.astype(a.dtype)
        out = win.sum(axis=(4, 5)) * scale

    def backward(g: Any) -> tuple:
        with np.errstate(invalid="ignore"):  # NaN windows hold padding alone: cropped away below
            g = to_nchw(g, nd, channel_last, fn) * scale
        ga = fold(xp.broadcast_to(g[..., None, None], win.shape), padded.shape, stride)
        return (from_nchw(_crop(ga, grown, a.shape), nd, channel_last),)
    return op_output(from_nchw(out, nd, channel_last), backward, x)


def _output_size(output_size: Any, shape: Sequence[int], nd: int, fn: str) -> List[int]:
    """An adaptive pool's output_size (an int or nd of them, None keeping the input's size) as
    [oh, ow] over NCHW `shape`'s two trailing axes (oh = 1 for a 1-D pool)."""
    sizes = [output_size] * nd if isinstance(output_size, int) else output_size
    if not isinstance(sizes, (list, tuple)) or len(sizes) != nd or not all(
            s is None or (isinstance(s, int) and not isinstance(s, bool) and s > 0) for s in sizes):
        raise ValueError(f"{fn}: output_size must be an int > 0 or {nd} of them (None keeps the input's), "
                         f"got {output_size!r}")
    return [1] * (2 - nd) + [n if s is None else s for s, n in zip(sizes, shape[4 - nd:])]


def _spans(n: int, o: int) -> List[Tuple[int, int]]:
    return [(i * n // o, -(-(i + 1) * n // o)) for i in range(o)]


def adaptive_avg_pool2d(x: Tensor, output_size: Any, data_format: str = "NCHW",
                        name: Optional[str] = None) -> Tensor:
    """Mean over adaptive windows: as averaging matrices on each axis, out = A_h @ x @ A_w^T."""
    return _adaptive_avg_pool(x, output_size, data_format, 2, "adaptive_avg_pool2d")


def adaptive_avg_pool1d(x: Tensor, output_size: int, name: Optional[str] = None) -> Tensor:
    """Mean over adaptive windows along the last axis of x [N, C, L]."""
    return _adaptive_avg_pool(x, output_size, "NCL", 1, "adaptive_avg_pool1d")


def _adaptive_avg_pool(x: Tensor, output_size: Any, data_format: str, nd: int, fn: str) -> Tensor:
    x = as_tensor(x)
    channel_last = check_format(data_format, nd, fn)
    a = to_nchw(x._array, nd, channel_last, fn)
    xp = array_module(a)
    mats = []
    for n, o in zip(a.shape[2:], _output_size(output_size, a.shape, nd, fn)):
        m = np.zeros((o, n))
        for i, (s, e) in enumerate(_spans(n, o)):
            m[i, s:e] = 1.0 / (e - s)
        mats.append(to_module(m.astype(a.dtype), xp))
    ah, aw = mats
    out = ah @ a @ aw.T
    return op_output(from_nchw(out, nd, channel_last),
                     lambda g: (from_nchw(ah.T @ to_nchw(g, nd, channel_last, fn) @ aw, nd, channel_last),), x)


def adaptive_max_pool2d(x: Tensor, output_size: Any, return_mask: bool = False,
                        name: Optional[str] = None) -> MaskedResult:
    """Maximum over adaptive windows of NCHW x (one vectorised step per output cell); return_mask
    also gives the int32 flat index h * W + w of each maximum."""
    return _adaptive_max_pool(x, output_size, return_mask, 2, "adaptive_max_pool2d")


def adaptive_max_pool1d(x: Tensor, output_size: Union[int, Sequence[int]], return_mask: bool = False,
                        name: Optional[str] = None) -> MaskedResult:
    """Maximum over adaptive windows along the last axis of x [N, C, L]; the mask holds indices into L."""
    return _adaptive_max_pool(x, output_size, return_mask, 1, "adaptive_max_pool1d")


def _adaptive_max_pool(x: Tensor, output_size: Any, return_mask: bool, nd: int, fn: str) -> MaskedResult:
    x = as_tensor(x)
    a = to_nchw(x._array, nd, False, fn)
    xp = array_module(a)
    n, c, h, w = a.shape
    oh, ow = _output_size(output_size, a.shape, nd, fn)
    out = xp.empty((n, c, oh, ow), dtype=a.dtype)
    where = xp.empty((n, c, oh, ow), dtype=np.int64)
    for i, (hs, he) in enumerate(_spans(h, oh)):
        for j, (ws, we) in enumerate(_spans(w, ow)):
            block = a[:, :, hs:he, ws:we].reshape(n, c, -1)
            k = block.argmax(axis=-1)
            out[:, :, i, j] = xp.take_along_axis(block, k[..., None], axis=-1)[..., 0]
            where[:, :, i, j] = (hs + k // (we - ws)) * w + ws + k % (we - ws)

    def backward(g: Any) -> tuple:
        ga = xp.zeros((n * c, h * w), dtype=g.dtype)
        scatter_add(ga, (xp.arange(n * c)[:, None], where.reshape(n * c, -1)), g.reshape(n * c, -1))
        return (from_nchw(ga.reshape(n, c, h, w), nd, False),)
    result = op_output(from_nchw(out, nd, False), backward, x)
    if not return_mask:
        return result
    return result, value_output(from_nchw(where.astype(np.int32), nd, False), f"{fn}_mask", x)


_NUMPY_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}
_FORMATS = {3: ("NCL", "NLC"), 4: ("NCHW", "NHWC"), 5: ("NCDHW", "NDHWC")}


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
        if nd not in _FORMATS:
            raise ValueError(f"pad: mode {mode!r} (or a pad of 2 * (ndim - 2) ints) needs a 3-D, 4-D or 5-D "
                             f"x, got shape {list(shape)}")
        first, last = _FORMATS[nd]
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
    x = as_tensor(x)
    a = x._array
    if isinstance(pad, Tensor):
        pad = pad.numpy().tolist()
    if not isinstance(pad, (list, tuple)) or not all(isinstance(p, (int, np.integer)) for p in pad):
        raise ValueError(f"pad: pad must be a list of ints, got {pad!r}")
    widths = _pad_widths(a.shape, [int(p) for p in pad], mode, data_format, pad_from_left_axis)
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
                source = np.pad(np.arange(a.shape[ax]), (b, e), mode=np_mode)
                m = np.zeros((source.size, a.shape[ax]), dtype=g.dtype)
                m[np.arange(source.size), source] = 1
                g = xp.moveaxis(xp.tensordot(g, to_module(m, xp), axes=([ax], [0])), -1, ax)
        return (xp.ascontiguousarray(g),)
    return op_output(out, backward, x)
