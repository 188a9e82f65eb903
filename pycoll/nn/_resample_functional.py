"""paddle.nn.functional.interpolate / upsample, pixel_shuffle and pixel_unshuffle.

Nearest, (bi/tri)linear and bicubic resampling are separable: along each spatial axis the output
is a fixed linear map of the input, an [out, in] matrix built here on the host with paddle's index
rules (its CPU kernel's: float32 ratios, 1 / scale_factor when a scale is given, the half-pixel
source index with align_mode=0, the corner-aligned ratio (in - 1) / (out - 1) with
align_corners). Nearest and the linear modes hold each map as taps, one or two source cells and
their weights per output cell, applied as gathers (a dense matmul would cost in * out per line),
and their gradients gather through the transposed taps; bicubic applies one matrix per axis and
its gradient their transposes.

Bicubic is Keys' cubic convolution with paddle's a = -0.75 over the four cells around the source
index (always half-pixel without align_corners: paddle ignores align_mode there), cells past an
edge clamped to it; its source index and weights are computed in float64 from the float32 ratio,
as paddle's kernel does for float64 inputs.
"""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from pycoll._promotion import accumulates_in_float32
from pycoll._tensor_ops import as_tensor, op_output, placed, require_floating, value_output
from pycoll.device import move, place_of
from pycoll.nn._adaptive_pool_functional import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d
from pycoll.nn._sliding import apply_axis_maps, apply_axis_taps, transpose_taps
from pycoll.shape_ops import reshape, transpose
from pycoll.tensor import Tensor
from pycoll._param_aliases import param_aliases

__all__ = ["interpolate", "upsample", "pixel_shuffle", "pixel_unshuffle"]

_MODES = {"nearest": (4, 5), "linear": (3,), "bilinear": (4,), "trilinear": (5,), "bicubic": (4,), "area": (3, 4, 5)}
_FORMATS = {3: ("NCW", "NWC"), 4: ("NCHW", "NHWC"), 5: ("NCDHW", "NDHWC")}


_CUBIC_A = -0.75


def _cubic_weights(t: np.ndarray) -> List[np.ndarray]:
    """The weights of the cells at offsets -1, 0, 1, 2 from a source index t past its floor."""
    a = _CUBIC_A

    def near(d: np.ndarray) -> np.ndarray:  # |d| <= 1
        return ((a + 2) * d - (a + 3)) * d * d + 1

    def far(d: np.ndarray) -> np.ndarray:  # 1 < |d| < 2
        return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _ratio(n_in: int, n_out: int, align_corners: bool, scale: float, one_cell_centred: bool) -> np.float32:
    """Source cells per output cell along one axis, in float32 as paddle's kernel takes it: 0 for
    an output of one cell, but with ``one_cell_centred``, as paddle's 1-D and 3-D linear kernels
    (linear, trilinear) and OpenCV take it, in / out, which samples the half-pixel centre of the
    whole axis (7 cells to 1: cell 3)."""
    f32 = np.float32
    if align_corners:
        return f32(n_in - 1) / f32(n_out - 1) if n_out > 1 else f32(0.0)
    if n_out <= 1 and not one_cell_centred:
        return f32(0.0)
    return f32(1.0 / scale) if scale > 0 else f32(n_in) / f32(n_out)


def _axis_taps(n_in: int, n_out: int, mode: str, align_corners: bool, align_mode: int,
               scale: float) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """One spatial axis of 'nearest' or a linear mode as taps: [n_out, T] source indices and their
    float32 weights (nearest: T = 1, weights None; linear: T = 2, the cell below the source index
    and the one above it, clamped to the edge), as paddle's kernel computes them."""
    f32 = np.float32
    ratio = _ratio(n_in, n_out, align_corners, scale, mode in ("linear", "trilinear"))
    kf = np.arange(n_out).astype(f32)
    if mode == "nearest":
        index = np.minimum((ratio * kf).astype(np.int64), n_in - 1)
        return index[:, None], None
    half_pixel = align_mode == 0 and not align_corners
    src = ratio * (kf + f32(0.5)) - f32(0.5) if half_pixel else ratio * kf
    lo = np.maximum(np.trunc(src).astype(np.int64), 0)
    hi = np.where(lo < n_in - 1, lo + 1, lo)
    w_hi = np.maximum(src, f32(0)) - lo.astype(f32)
    return np.stack([lo, hi], axis=1), np.stack([f32(1) - w_hi, w_hi], axis=1)


def _bicubic_matrix(n_in: int, n_out: int, align_corners: bool, scale: float,
                    one_cell_centred: bool = False) -> np.ndarray:
    """The [n_out, n_in] bicubic map of one spatial axis, in float64 (see the module's notes;
    ``one_cell_centred``: see `_ratio`, OpenCV's rule, which vision's resize of arrays takes)."""
    k = np.arange(n_out)
    ratio = _ratio(n_in, n_out, align_corners, scale, one_cell_centred)
    src = (ratio * k.astype(np.float32)).astype(np.float64) if align_corners else np.float64(ratio) * (k + 0.5) - 0.5
    base = np.floor(src)
    m = np.zeros((n_out, n_in), np.float64)
    for offset, w in zip((-1, 0, 1, 2), _cubic_weights(src - base)):
        np.add.at(m, (k, np.clip(base.astype(np.int64) + offset, 0, n_in - 1)), w)
    return m


def _sizes(size: Any, scale_factor: Any, spatial: List[int], recompute: Optional[bool], fn: str) -> tuple:
    """(output sizes, the scales the kernel uses: 0 where it takes in / out)."""
    nd = len(spatial)
    if size is None and scale_factor is None:
        raise ValueError(f"{fn}: one of size and scale_factor must be given")
    if size is not None and scale_factor is not None:
        raise ValueError(f"{fn}: give size or scale_factor, not both")
    if size is not None:
        if recompute:
            raise ValueError(f"{fn}: recompute_scale_factor is not meaningful with an explicit size")
        if isinstance(size, Tensor):
            size = size.tolist()
        items = [int(s.item()) if isinstance(s, Tensor) else s for s in size] if isinstance(size, (list, tuple)) \
            else None
        if items is None or len(items) != nd or not all(isinstance(s, (int, np.integer)) and s > 0 for s in items):
            raise ValueError(f"{fn}: size must be a list of {nd} ints > 0 (one per spatial axis), got {size!r}")
        return [int(s) for s in items], [0.0] * nd
    if isinstance(scale_factor, Tensor):
        scale_factor = scale_factor.tolist()
    scales = [scale_factor] * nd if isinstance(scale_factor, (int, float)) else scale_factor
    if not isinstance(scales, (list, tuple)) or len(scales) != nd \
            or not all(isinstance(s, (int, float)) and not isinstance(s, bool) and s > 0 for s in scales):
        raise ValueError(f"{fn}: scale_factor must be a number > 0 or a list of {nd}, got {scale_factor!r}")
    out = [int(np.float32(n) * np.float32(s)) for n, s in zip(spatial, scales)]
    if any(n < 1 for n in out):
        raise ValueError(f"{fn}: scale_factor {scale_factor!r} leaves no output for spatial sizes {spatial}")
    return out, ([0.0] * nd if recompute else [float(s) for s in scales])


@param_aliases({"input": "x"})
@accumulates_in_float32
def interpolate(x: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: bool = False, align_mode: int = 0, data_format: Optional[str] = None,
                recompute_scale_factor: Optional[bool] = None, antialias: bool = False,
                name: Optional[str] = None) -> Tensor:
    """Resize the spatial axes of x (3-D NCW/NWC, 4-D NCHW/NHWC or 5-D NCDHW/NDHWC) to `size`, or
    by `scale_factor` (output floor(in * scale)). Modes: 'nearest' (4-D, 5-D), 'linear' (3-D),
    'bilinear' and 'bicubic' (4-D), 'trilinear' (5-D) and 'area' (adaptive average pooling, size
    only). align_corners (not with nearest) maps the corner pixels onto each other; otherwise
    align_mode 0 samples at half-pixel centres and 1 at ratio * index (bicubic: always half-pixel).
    antialias is not implemented in pycoll."""
    fn = "interpolate"
    x = as_tensor(x)
    nd = x.ndim
    if nd not in _FORMATS:
        raise ValueError(f"{fn}: x must be 3-D, 4-D or 5-D, got shape {x.shape}")
    mode = mode.lower() if isinstance(mode, str) else mode
    if mode not in _MODES:
        raise ValueError(f"{fn}: mode must be one of {sorted(_MODES)}, got {mode!r}")
    if nd not in _MODES[mode]:
        raise ValueError(f"{fn}: mode {mode!r} takes a {' or '.join(f'{n}-D' for n in _MODES[mode])} x, "
                         f"got shape {x.shape}")
    if antialias:
        raise NotImplementedError(f"{fn}: antialias is not implemented in pycoll")
    if not isinstance(align_corners, bool):
        raise TypeError(f"{fn}: align_corners must be a bool, got {align_corners!r}")
    if align_mode not in (0, 1):
        raise ValueError(f"{fn}: align_mode must be 0 or 1, got {align_mode!r}")
    if align_corners and mode == "nearest":
        raise ValueError(f"{fn}: align_corners can only be set with modes linear, bilinear, bicubic and trilinear")
    data_format = (data_format or _FORMATS[nd][0]).upper()
    if data_format not in _FORMATS[nd]:
        raise ValueError(f"{fn}: data_format must be {' or '.join(map(repr, _FORMATS[nd]))} for a {nd}-D x, "
                         f"got {data_format!r}")
    channel_last = data_format == _FORMATS[nd][1]
    axes = list(range(1, nd - 1)) if channel_last else list(range(2, nd))
    if x._array.dtype.kind in "iub" and mode in ("area", "bicubic"):  # paddle has no integer kernel for them
        require_floating(x, f"{fn} (mode {mode!r})")
    if mode == "area":
        if size is None:
            raise ValueError(f"{fn}: mode 'area' needs size")
        out_size, _ = _sizes(size, None, [x.shape[a] for a in axes], None, fn)
        if nd == 3:
            return transpose(adaptive_avg_pool1d(transpose(x, [0, 2, 1]), out_size[0]), [0, 2, 1]) if channel_last \
                else adaptive_avg_pool1d(x, out_size[0])
        pool = adaptive_avg_pool2d if nd == 4 else adaptive_avg_pool3d
        return pool(x, out_size, data_format=data_format)
    x, = placed(fn, x, axes=tuple(axes))  # auto-parallel: the spatial axes whole, a batch or channel split stays
    a = x._array
    out_size, scales = _sizes(size, scale_factor, [a.shape[ax] for ax in axes], recompute_scale_factor, fn)
    place = place_of(a)
    shapes = [(a.shape[ax], n, s) for ax, n, s in zip(axes, out_size, scales)]
    if mode == "bicubic":
        mats = [move(_bicubic_matrix(m, n, align_corners, s).astype(a.dtype), place) for m, n, s in shapes]
        return op_output(apply_axis_maps(a, mats, axes), lambda g: (apply_axis_maps(g, mats, axes, transposed=True),), x)
    # one or two taps per output cell: gathers, not dense matmuls, both ways
    taps = [_axis_taps(m, n, mode, align_corners, align_mode, s) for m, n, s in shapes]
    blends_integers = a.dtype.kind in "iu" and mode != "nearest"  # paddle's uint8 images: weighed in float32
    weight_dtype = np.dtype(np.float32) if blends_integers else a.dtype

    def placed_taps(pairs: List[Tuple[np.ndarray, Optional[np.ndarray]]]) -> List[Tuple[Any, Any]]:
        return [(move(i, place), None if w is None else move(w.astype(weight_dtype), place)) for i, w in pairs]

    if blends_integers:  # truncated back to the integer dtype; no gradient
        return value_output(apply_axis_taps(a.astype(np.float32), placed_taps(taps), axes).astype(a.dtype), fn, x)

    def backward(g: Any) -> tuple:
        gathers = [transpose_taps(i, w, m) for (i, w), (m, _, _) in zip(taps, shapes)]
        return (apply_axis_taps(g, placed_taps(gathers), axes),)
    return op_output(apply_axis_taps(a, placed_taps(taps), axes), backward, x)


def upsample(x: Tensor, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool = False, align_mode: int = 0, data_format: Optional[str] = None,
             name: Optional[str] = None) -> Tensor:
    """`interpolate` under its other paddle name."""
    return interpolate(x, size, scale_factor, mode, align_corners, align_mode, data_format)


def _factor(value: Any, name: str, fn: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise TypeError(f"{fn}: {name} must be an int >= 1, got {value!r}")
    return value


def _shuffle_operand(x: Any, factor: int, factor_name: str, data_format: str,
                     fn: str) -> Tuple[Tensor, int, int, int, int, int]:
    """pixel_shuffle's and pixel_unshuffle's x, checked (4-D, NCHW or NHWC), their factor r,
    and x's sizes n, c, h, w whatever its layout."""
    r = _factor(factor, factor_name, fn)
    x = as_tensor(x)
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"{fn}: data_format must be 'NCHW' or 'NHWC', got {data_format!r}")
    if x.ndim != 4:
        raise ValueError(f"{fn}: x must be 4-D, got shape {x.shape}")
    n, c, h, w = x.shape if data_format == "NCHW" else [x.shape[i] for i in (0, 3, 1, 2)]
    return x, r, n, c, h, w


def pixel_shuffle(x: Tensor, upscale_factor: int, data_format: str = "NCHW", name: Optional[str] = None) -> Tensor:
    """[N, C * r * r, H, W] -> [N, C, H * r, W * r]: channel c * r * r + i * r + j of pixel
    (h, w) goes to pixel (h * r + i, w * r + j) of channel c (NHWC alike)."""
    fn = "pixel_shuffle"
    x, r, n, c, h, w = _shuffle_operand(x, upscale_factor, "upscale_factor", data_format, fn)
    if c % (r * r):
        raise ValueError(f"{fn}: the {c} channels must be divisible by upscale_factor ** 2 = {r * r}")
    c //= r * r
    if data_format == "NCHW":
        y = transpose(reshape(x, [n, c, r, r, h, w]), [0, 1, 4, 2, 5, 3])
        return reshape(y, [n, c, h * r, w * r])
    y = transpose(reshape(x, [n, h, w, c, r, r]), [0, 1, 4, 2, 5, 3])
    return reshape(y, [n, h * r, w * r, c])


def pixel_unshuffle(x: Tensor, downscale_factor: int, data_format: str = "NCHW",
                    name: Optional[str] = None) -> Tensor:
    """The inverse of pixel_shuffle: [N, C, H * r, W * r] -> [N, C * r * r, H, W]."""
    fn = "pixel_unshuffle"
    x, r, n, c, h, w = _shuffle_operand(x, downscale_factor, "downscale_factor", data_format, fn)
    if h % r or w % r:
        raise ValueError(f"{fn}: the spatial sizes {[h, w]} must be divisible by downscale_factor = {r}")
    h, w = h // r, w // r
    if data_format == "NCHW":
        y = transpose(reshape(x, [n, c, h, r, w, r]), [0, 1, 3, 5, 2, 4])
        return reshape(y, [n, c * r * r, h, w])
    y = transpose(reshape(x, [n, h, r, w, r, c]), [0, 1, 3, 5, 2, 4])
    return reshape(y, [n, h, w, c * r * r])

