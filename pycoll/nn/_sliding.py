"""What convolution and pooling share: paddle's size and padding arguments, the move between
channel-last and channel-first layouts, and sliding windows over the two trailing axes of an
NCHW array (a strided view, no copy) together with their adjoint, `fold`.

1-D ops run as 2-D ones over an axis of height 1, as paddle's do.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple, Union

from pycoll.device import array_module

Pads = List[Tuple[int, int]]  # (before, after) per spatial axis


def int_list(value: Any, n: int, name: str, fn: str, minimum: int = 1) -> List[int]:
    """paddle's convert_to_list: an int repeated n times, or a list/tuple of n ints (>= minimum)."""
    items = [value] * n if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(items, (list, tuple)) or len(items) != n \
            or not all(isinstance(v, int) and not isinstance(v, bool) and v >= minimum for v in items):
        raise ValueError(f"{fn}: {name} must be an int >= {minimum} or a list of {n} of them, got {value!r}")
    return list(items)


def parse_padding(padding: Union[str, int, Sequence[Any]], nd: int, channel_last: bool, fn: str
                  ) -> Optional[Pads]:
    """paddle's padding argument for `nd` spatial axes as (before, after) pairs; None for 'SAME'
    (whose pairs depend on the input size, see `same_pads`). Accepted: 'SAME', 'VALID', an int, nd
    ints, 2*nd ints (before, after, before, after...) or nd+2 pairs including the zero pairs of the
    batch and channel axes."""
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "VALID"):
            raise ValueError(f"{fn}: padding must be 'SAME', 'VALID', an int or a list, got {padding!r}")
        return None if padding.upper() == "SAME" else [(0, 0)] * nd
    if isinstance(padding, (list, tuple)) and len(padding) == nd + 2 \
            and all(isinstance(p, (list, tuple)) for p in padding):
        outer = [padding[0], padding[-1]] if channel_last else list(padding[:2])
        if any(list(p) != [0, 0] for p in outer):
            raise ValueError(f"{fn}: padding of the batch and channel axes must be 0, got {padding!r}")
        inner = padding[1:-1] if channel_last else padding[2:]
        flat = int_list([v for p in inner for v in p], 2 * nd, "padding", fn, minimum=0)
    elif isinstance(padding, (list, tuple)) and len(padding) == 2 * nd:
        flat = int_list(padding, 2 * nd, "padding", fn, minimum=0)
    else:
        flat = [v for v in int_list(padding, nd, "padding", fn, minimum=0) for _ in (0, 1)]
    return [(flat[2 * i], flat[2 * i + 1]) for i in range(nd)]


def same_pads(sizes: Sequence[int], kernel: Sequence[int], stride: Sequence[int]) -> Pads:
    """paddle's 'SAME' padding: ceil(size / stride) outputs, the extra half (rounded up) after."""
    pads = []
    for n, k, s in zip(sizes, kernel, stride):
        total = max((-(-n // s) - 1) * s + k - n, 0)
        pads.append((total // 2, total - total // 2))
    return pads


FORMATS = {1: ("NCL", "NLC"), 2: ("NCHW", "NHWC")}  # (channels first, channels last) by spatial axes


def check_format(data_format: str, nd: int, fn: str) -> bool:
    """Whether `data_format` puts the channels last; ValueError unless it is paddle's for nd axes."""
    first, last = FORMATS[nd]
    if data_format not in (first, last):
        raise ValueError(f"{fn}: data_format must be {first!r} or {last!r}, got {data_format!r}")
    return data_format == last


def to_nchw(a: Any, nd: int, channel_last: bool, fn: str) -> Any:
    """An input of nd spatial axes (channels first or last) as an NCHW array (a view)."""
    if a.ndim != nd + 2:
        raise ValueError(f"{fn}: x must have {nd + 2} dimensions, got shape {list(a.shape)}")
    xp = array_module(a)
    if channel_last:
        a = xp.moveaxis(a, -1, 1)
    return a[:, :, None, :] if nd == 1 else a


def conv_operands(x: Any, weight: Any, nd: int, channel_last: bool, fn: str) -> Tuple[Any, Any]:
    """The arrays of a (transposed) convolution's ``x`` and weight (Tensors), as 2-D ones: x in
    NCHW, the weight with a kernel height of 1 for ``nd`` = 1; their ranks and dtypes checked."""
    a = to_nchw(x._array, nd, channel_last, fn)
    wa = weight._array
    if wa.ndim != nd + 2:
        raise ValueError(f"{fn}: weight must have {nd + 2} dimensions, got shape {list(wa.shape)}")
    if nd == 1:
        wa = wa[:, :, None, :]
    if a.dtype != wa.dtype:
        raise TypeError(f"{fn}: x has dtype {a.dtype} and the weight {wa.dtype}; both must have the same "
                        f"floating-point dtype (paddle refuses the mix too): cast x, e.g. x.astype('{wa.dtype}')")
    return a, wa


def from_nchw(a: Any, nd: int, channel_last: bool) -> Any:
    """The inverse of `to_nchw` (on results and gradients), contiguous."""
    xp = array_module(a)
    if nd == 1:
        a = a[:, :, 0, :]
    return xp.ascontiguousarray(xp.moveaxis(a, 1, -1) if channel_last else a)


def windows(a: Any, kernel: Sequence[int], stride: Sequence[int], dilation: Sequence[int] = (1, 1)) -> Any:
    """The view [N, C, OH, OW, kh, kw] of every kernel window of NCHW `a` (already padded)."""
    xp = array_module(a)
    n, c, h, w = a.shape
    (kh, kw), (sh, sw), (dh, dw) = kernel, stride, dilation
    oh, ow = (h - dh * (kh - 1) - 1) // sh + 1, (w - dw * (kw - 1) - 1) // sw + 1
    s = a.strides
    return xp.lib.stride_tricks.as_strided(
        a, (n, c, oh, ow, kh, kw), (s[0], s[1], s[2] * sh, s[3] * sw, s[2] * dh, s[3] * dw))


def fold(cols: Any, shape: Sequence[int], stride: Sequence[int], dilation: Sequence[int] = (1, 1)) -> Any:
    """The adjoint of `windows`: an array of `shape` where each window adds up its entries of
    `cols` [N, C, OH, OW, kh, kw] (col2im; one strided slice per kernel position)."""
    xp = array_module(cols)
    out = xp.zeros(shape, dtype=cols.dtype)
    oh, ow, kh, kw = cols.shape[2:]
    (sh, sw), (dh, dw) = stride, dilation
    for i in range(kh):
        for j in range(kw):
            out[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw] += cols[..., i, j]
    return out


def pad_spatial(a: Any, pads: Pads, value: float = 0.0) -> Any:
    """NCHW `a` with pads[0] on H and pads[1] on W filled with `value` (a itself when no padding)."""
    if not any(b or e for b, e in pads):
        return a
    return array_module(a).pad(a, ((0, 0), (0, 0), *pads), constant_values=value)
