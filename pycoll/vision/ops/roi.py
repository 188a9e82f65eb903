"""paddle.vision.ops roi_align, roi_pool and psroi_pool, with their layers RoIAlign, RoIPool and
PSRoIPool: features of each region of interest pooled onto a fixed grid.

The three are differentiable in x (not in the boxes, as paddle's). roi_align's bilinear
sampling is separable along the two axes: each bin reads the pixels of its row samples times
those of its column samples (tables built on x's array module), one host kernel each way on
NumPy arrays, one op with its own backward; on CuPy's, each region's output is A_y @ x @ A_x^T
with the dense interpolation matrices, of pycoll's differentiable ops. roi_pool finds each bin's
maximum on the raw arrays and gathers it (the gradient goes to the first maximal pixel of the
bin, as paddle's argmax), of differentiable ops too. psroi_pool's bin sums are one host kernel
each way on NumPy arrays, four reads each of x's summed-area table on CuPy's, one op with its own
backward. The two ops' create_graph rules (below) compute them again from gathers."""
from __future__ import annotations

from typing import Any, List, Optional, Tuple

import numpy as np

from pycoll._higher_order.recompute import recomputed
from pycoll._higher_order.saved import Saved, const, rule
from pycoll._tensor_ops import op_output
from pycoll.device import array_module
from pycoll.kernels import host_math
from pycoll.math_ops import cast, matmul, sum as sum_
from pycoll.nn._pad_functional import pad
from pycoll.nn.layer import Layer
from pycoll.reduce_ops import cumsum, running_sums
from pycoll.search_ops import gather, where
from pycoll.shape_ops import concat, reshape, scatter_add, transpose
from pycoll.tensor import Tensor, wrap
from pycoll.vision.ops._common import batch_index, floating, pair, round_half_away

__all__ = ["PSRoIPool", "RoIAlign", "RoIPool", "psroi_pool", "roi_align", "roi_pool"]

Size2 = Any


def _inputs(x: Any, boxes: Any, boxes_num: Any, fn: str) -> Tuple[Tensor, Any, Any]:
    """x [N, C, H, W], the boxes' raw array [R, 4] in x's dtype, and each box's image index."""
    x = floating(x, fn, "x", 4)
    b = floating(boxes, fn, "boxes", 2, 4)
    if x.shape[1] == 0 or x.shape[2] == 0 or x.shape[3] == 0:
        raise ValueError(f"{fn}: x must have channels and a non-empty feature map, got shape {x.shape}")
    if boxes_num is None:
        raise ValueError(f"{fn}: boxes_num (the number of boxes of each image) is required")
    return x, b._array.astype(x.dtype, copy=False), batch_index(boxes_num, b.shape[0], x.shape[0], fn)


def _per_image(x: Tensor, image: Any, left: Any, right: Any) -> Tensor:
    """For every box r: left[r] @ x[image[r]] @ right[r]^T, as [R, C, P, Q] (left [R, P, H], right
    [R, Q, W]); computed image by image, so no per-box copy of x is made."""
    xp = array_module(image)
    host = np.asarray(wrap(image).numpy())
    parts = []
    for b in np.unique(host):
        sel = xp.asarray(np.flatnonzero(host == b))
        rows = matmul(wrap(left[sel][:, None]), x[int(b)][None])  # [Rb, C, P, W]
        parts.append(matmul(rows, wrap(right[sel][:, None]), transpose_y=True))
    if not parts:
        return wrap(xp.zeros((0, x.shape[1], left.shape[1], right.shape[1]), dtype=x.dtype))
    return parts[0] if len(parts) == 1 else concat(parts, axis=0)


def _bilinear_samples(xp: Any, start: Any, bin_size: Any, grid: Any, pooled: int, size: int) -> Tuple[Any, Any]:
    """For each box and bin along one axis, the pixels its ``grid`` samples read by paddle's
    bilinear rule and their weights in the bin's mean: index and weight [R, pooled, 2 * G] (G the
    most samples of any box; an unused one weighs 0)."""
    r = start.shape[0]
    most = int(wrap(grid).numpy().max()) if r else 0
    k = xp.arange(max(most, 1))
    pos = (start[:, None, None] + xp.arange(pooled)[None, :, None] * bin_size[:, None, None]
           + (k[None, None, :] + 0.5) * (bin_size / xp.maximum(grid, 1))[:, None, None])  # [R, P, G]
    used = (k[None, None, :] < grid[:, None, None]) & (pos >= -1.0) & (pos <= size)
    pos = xp.maximum(pos, 0)
    low = xp.floor(pos).astype(np.int64)
    last = low >= size - 1
    low = xp.where(last, size - 1, low)
    high = xp.where(last, size - 1, low + 1)
    frac = xp.where(last, 0, pos - low)
    weight = used / xp.maximum(grid, 1)[:, None, None]
    return (xp.concatenate([low, high], axis=-1),
            xp.concatenate([weight * (1 - frac), weight * frac], axis=-1).astype(start.dtype))


def _dense(xp: Any, index: Any, weight: Any, size: int) -> Any:
    """[R, pooled, size]: the weight each pixel gets in each bin (the samples' table summed)."""
    r, pooled = index.shape[:2]
    a = xp.zeros((r, pooled, size), dtype=weight.dtype)
    scatter_add(a, (xp.arange(r)[:, None, None], xp.arange(pooled)[None, :, None], index), weight)
    return a


def roi_align(x: Tensor, boxes: Tensor, boxes_num: Tensor, output_size: Size2, spatial_scale: float = 1.0,
              sampling_ratio: int = -1, aligned: bool = True, name: Optional[str] = None) -> Tensor:
    """RoIAlign: each box [R, 4] (x1, y1, x2, y2 in input pixels, times ``spatial_scale``) of image
    boxes_num's says, split into output_size bins, each the mean of sampling_ratio^2 bilinear
    samples (-1: ceil(box size / bins) per axis); ``aligned`` shifts boxes by half a pixel.
    Returns [R, C, ph, pw].

    The gradient is that of this forward. paddle 3.3.1's CPU backward differs for an aligned box
    narrower than one pixel (after spatial_scale): it widens such a box to 1 pixel, which its
    forward does not, so its gradient there is not the forward's."""
    fn = "roi_align"
    ph, pw = pair(output_size, fn, "output_size")
    spatial_scale = float(np.float32(spatial_scale))  # a float32 attribute in paddle
    x, b, image = _inputs(x, boxes, boxes_num, fn)
    xp = array_module(b)
    shift = 0.5 if aligned else 0.0
    lo, hi = b[:, :2] * spatial_scale - shift, b[:, 2:] * spatial_scale - shift
    size = hi - lo
    if not aligned:
        size = xp.maximum(size, 1.0)
    bins = size / xp.asarray([pw, ph], dtype=b.dtype)
    if sampling_ratio > 0:
        grid = xp.full(size.shape, sampling_ratio, dtype=np.int64)
    else:
        grid = xp.ceil(size / xp.asarray([pw, ph], dtype=b.dtype)).astype(np.int64)
    h, w = x.shape[2:]
    iy, wy = _bilinear_samples(xp, lo[:, 1], bins[:, 1], grid[:, 1], ph, h)
    ix, wx = _bilinear_samples(xp, lo[:, 0], bins[:, 0], grid[:, 0], pw, w)
    a = x._array
    out = host_math.roi_sample(a, image, iy, wy, ix, wx)
    if out is None:  # (CuPy's arrays: two matrix products per image)
        return _per_image(x, image, _dense(xp, iy, wy, h), _dense(xp, ix, wx, w))
    shape = a.shape

    def backward(g: Any) -> tuple:
        return (host_math.roi_sample_grad(g, image, iy, wy, ix, wx, shape),)
    return op_output(out, backward, x)


@rule("roi_align.<locals>.backward")
def _roi_align_rule(s: Saved, g: Tensor) -> tuple:
    """create_graph: roi_align, linear in x, computed again as each bin's weighted reads of its row
    samples times its column samples (the host kernel's tables; x's value does not matter: zeros
    stand in)."""
    image, iy, wy, ix, wx, shape = s["image"], s["iy"], s["wy"], s["ix"], s["wx"], s["shape"]
    xp = array_module(wy)
    n, c, h, w = shape
    r, ph, k = iy.shape
    pw, kk = ix.shape[1:]
    flat = (image[:, None, None, None, None] * h + iy[:, :, :, None, None]) * w + ix[:, None, None, :, :]
    weights = (wy[:, :, :, None, None] * wx[:, None, None, :, :])[..., None]  # [R, ph, k, pw, kk, 1]

    def forward(x: Tensor) -> Tensor:
        pixels = reshape(transpose(x, [0, 2, 3, 1]), [n * h * w, c])
        reads = reshape(gather(pixels, const(flat.reshape(-1))), [r, ph, k, pw, kk, c]) * const(weights)
        return transpose(sum_(reads, axis=[2, 4]), [0, 3, 1, 2])
    return recomputed(s, g, forward, [xp.zeros(shape, wy.dtype)])


def _bin_edges(xp: Any, start: Any, bin_size: Any, pooled: int, size: int,
               start_after: bool = False) -> Tuple[Any, Any]:
    """First and one-past-last pixel of each box's bins, [R, pooled], clipped to [0, size]:
    ``floor(k * bin_size + start)`` and ``ceil((k + 1) * bin_size + start)``, or with
    ``start_after`` (a whole-pixel start) ``floor(k * bin_size) + start``, as paddle's kernels
    compute them: in the boxes' dtype (float32 bin edges computed in float64 differ, e.g.
    3 * float32(4 / 3) > 4, taking a pixel past the box into the last bin)."""
    k = xp.arange(pooled, dtype=bin_size.dtype)[None, :]
    offset = 0 if start_after else start[:, None]
    first = xp.floor(k * bin_size[:, None] + offset)
    last = xp.ceil((k + 1) * bin_size[:, None] + offset)
    if start_after:
        first, last = first + start[:, None], last + start[:, None]
    return xp.clip(first, 0, size).astype(np.int64), xp.clip(last, 0, size).astype(np.int64)


def psroi_pool(x: Tensor, boxes: Tensor, boxes_num: Tensor, output_size: Size2, spatial_scale: float = 1.0,
               name: Optional[str] = None) -> Tensor:
    """Position-sensitive RoI pooling (R-FCN): x [N, C * ph * pw, H, W]; bin (i, j) of output
    channel c averages input channel (c * ph + i) * pw + j over the bin. Returns [R, C, ph, pw]."""
    fn = "psroi_pool"
    ph, pw = pair(output_size, fn, "output_size")
    spatial_scale = float(np.float32(spatial_scale))  # a float32 attribute in paddle
    x, b, image = _inputs(x, boxes, boxes_num, fn)
    n, c, h, w = x.shape
    if c % (ph * pw):
        raise ValueError(f"{fn}: x's channels ({c}) must be a multiple of output_size's ph * pw ({ph * pw})")
    xp = array_module(b)
    start = round_half_away(xp, b[:, :2]) * spatial_scale
    end = (round_half_away(xp, b[:, 2:]) + 1.0) * spatial_scale
    size = xp.maximum(end - start, 0.1)
    hs, he = _bin_edges(xp, start[:, 1], size[:, 1] / ph, ph, h)
    ws, we = _bin_edges(xp, start[:, 0], size[:, 0] / pw, pw, w)
    area = (he - hs)[:, :, None] * (we - ws)[:, None, :]  # [R, ph, pw]
    scale = xp.where(area > 0, 1.0 / xp.maximum(area, 1), 0).reshape(b.shape[0], 1, ph, pw)
    a = x._array
    shape, bins = a.shape, (image, hs, he, ws, we)
    sums = host_math.psroi_sums(a, *bins)
    if sums is None:  # (CuPy's arrays: four reads of a summed-area table per bin)
        corners = _corners(xp, bins, shape)
        sums = (_summed_area(a).reshape(-1)[corners] * xp.asarray(_SIGNS)).sum(axis=0)
    out = (sums * scale).astype(a.dtype)

    def backward(g: Any) -> tuple:
        weights = (g * scale).astype(g.dtype)  # what each cell of a bin gets
        grad = host_math.psroi_sums_grad(weights, *bins, shape)
        if grad is None:  # each bin's weight at its corners (signed), summed over the plane: its cells get it
            n, c, h, w = shape
            signed = (weights[None] * xp.asarray(_SIGNS)).reshape(-1)
            spread = xp.bincount(_corners(xp, bins, shape).reshape(-1), signed, minlength=n * c * (h + 1) * (w + 1))
            grad = _plane_sums(spread.reshape(n, c, h + 1, w + 1))[:, :, :h, :w].astype(g.dtype)
        return (grad,)
    return op_output(out, backward, x)


_SIGNS = np.asarray([1.0, -1.0, -1.0, 1.0]).reshape(4, 1, 1, 1, 1)  # a bin's sum from its corners' prefix sums


def _corners(xp: Any, bins: Tuple[Any, ...], shape: Tuple[int, ...]) -> Any:
    """[4, R, C / (ph * pw), ph, pw]: where each bin's four corners lie in the flattened
    summed-area table [N, C, h + 1, w + 1] of x (shape [N, C, h, w]), in ``_SIGNS``' order; bin
    (i, j) of output channel o reads input channel (o * ph + i) * pw + j."""
    image, hs, he, ws, we = bins
    _, c, h, w = shape
    ph, pw = hs.shape[1], ws.shape[1]
    out_c = c // (ph * pw)
    channel = (xp.arange(out_c)[:, None, None] * ph + xp.arange(ph)[:, None]) * pw + xp.arange(pw)  # [out_c, ph, pw]
    plane = (image[:, None, None, None] * c + channel[None]) * (h + 1)  # [R, out_c, ph, pw]: its table's rows
    rows = [hs[:, None, :, None], he[:, None, :, None]]  # [R, 1, ph, 1]
    cols = [ws[:, None, None, :], we[:, None, None, :]]  # [R, 1, 1, pw]
    return xp.stack([(plane + y) * (w + 1) + x_ for y in rows for x_ in cols])


@rule("psroi_pool.<locals>.backward")
def _psroi_pool_rule(s: Saved, g: Tensor) -> tuple:
    """create_graph: psroi_pool, linear in x, computed again as four signed reads of x's float64
    summed-area table per bin, times the bin's 1 / area (x's value does not matter: zeros stand in)."""
    bins, scale, shape = s["bins"], s["scale"], s["shape"]
    xp = array_module(scale)
    corners = _corners(xp, bins, shape)

    def forward(x: Tensor) -> Tensor:
        table = cumsum(cumsum(pad(cast(x, "float64"), [1, 0, 1, 0]), axis=2), axis=3)
        reads = reshape(gather(reshape(table, [-1]), const(corners.reshape(-1))), list(corners.shape))
        return cast(sum_(reads * const(xp.asarray(_SIGNS)), axis=0) * const(scale), g.dtype)
    return recomputed(s, g, forward, [xp.zeros(shape, g._array.dtype)])


def _summed_area(a: Any) -> Any:
    """[N, C, H + 1, W + 1]: at (y, x) the sum of a's plane over [0, y) x [0, x), in float64 (a
    float32 table's differences of large prefix sums would lose the bins' last digits): a bin's
    sum is four reads whatever its size (paddle adds each bin's pixels)."""
    n, c, h, w = a.shape
    padded = array_module(a).zeros((n, c, h + 1, w + 1))
    padded[:, :, 1:, 1:] = a
    return _plane_sums(padded)


def _plane_sums(a: Any) -> Any:
    """a's running sums down its last two axes (pycoll's kernel on the host: NumPy's running sum
    down an axis with elements after it is 3x slower)."""
    xp = array_module(a)
    return running_sums(xp, running_sums(xp, a, 2), 3)


def _window(xp: Any, first: Any, last: Any) -> Tuple[Any, Any]:
    """For bins [first, last) ([R, P]): the pixels [R, P, K] of the widest and which are in the bin."""
    most = int(wrap(last - first).numpy().max()) if first.size else 0
    pix = first[..., None] + xp.arange(max(most, 1))
    return pix, pix < last[..., None]


def roi_pool(x: Tensor, boxes: Tensor, boxes_num: Tensor, output_size: Size2, spatial_scale: float = 1.0,
             name: Optional[str] = None) -> Tensor:
    """RoI max pooling (Fast R-CNN): box corners times ``spatial_scale`` rounded to pixels, the box
    split into output_size bins, each the maximum of its pixels (0 for an empty bin).
    Returns [R, C, ph, pw]."""
    fn = "roi_pool"
    ph, pw = pair(output_size, fn, "output_size")
    spatial_scale = float(np.float32(spatial_scale))  # a float32 attribute in paddle
    x, b, image = _inputs(x, boxes, boxes_num, fn)
    n, c, h, w = x.shape
    xp = array_module(b)
    start = round_half_away(xp, b[:, :2] * spatial_scale)
    size = xp.maximum(round_half_away(xp, b[:, 2:] * spatial_scale) - start + 1, 1)
    hs, he = _bin_edges(xp, start[:, 1], size[:, 1] / ph, ph, h, start_after=True)
    ws, we = _bin_edges(xp, start[:, 0], size[:, 0] / pw, pw, w, start_after=True)
    index = host_math.roi_max_index(x._array, image, hs, he, ws, we)
    if index is None:
        index = _roi_max_index(xp, x._array, image, hs, he, ws, we)
    empty = ((he - hs) <= 0)[:, :, None] | ((we - ws) <= 0)[:, None, :]  # [R, ph, pw]
    unpicked = index < 0
    picked = gather(x.reshape([-1]), wrap(xp.where(unpicked, 0, index).reshape(-1))).reshape(list(index.shape))
    # paddle's kernel: an empty bin gives 0, one whose cells are NaN or -inf its starting maximum,
    # the dtype's lowest value (neither takes a gradient)
    fill = xp.where(empty[:, None], 0, np.finfo(x.dtype).min).astype(x.dtype)
    return where(wrap(~unpicked), picked, wrap(fill))


def _roi_max_index(xp: Any, a: Any, image: Any, hs: Any, he: Any, ws: Any, we: Any) -> Any:
    """host_math.roi_max_index on the array module (CuPy's arrays, or without the kernel): NaN
    cells, and cells past a bin, count as -inf; a bin whose maximum is -inf has no pick (-1)."""
    n, c, h, w = a.shape
    pw = ws.shape[1]
    cols, col_ok = _window(xp, ws, we)  # [R, pw, KW]
    # channels last: each gathered pixel is one contiguous run of C values (NCHW's are h * w apart)
    pixels = xp.ascontiguousarray(a.transpose(0, 2, 3, 1))
    flat: List[Any] = []
    for i in range(hs.shape[1]):  # one row of bins at a time bounds the gathered windows' memory
        rows, row_ok = _window(xp, hs[:, i:i + 1], he[:, i:i + 1])  # [R, 1, KH]
        r_idx = xp.clip(rows[:, 0, None, :, None], 0, h - 1)  # [R, 1, KH, 1]
        c_idx = xp.clip(cols[:, :, None, :], 0, w - 1)  # [R, pw, 1, KW]
        vals = pixels[image[:, None, None, None], r_idx, c_idx]  # [R, pw, KH, KW, C]
        ok = (row_ok[:, 0, None, :, None] & col_ok[:, :, None, :])[..., None]
        vals = xp.where(ok & ~xp.isnan(vals), vals, -xp.inf)
        vals = vals.reshape(vals.shape[0], pw, vals.shape[2] * vals.shape[3], c)
        best = vals.argmax(axis=2) if vals.size else xp.zeros((0, pw, c), np.int64)  # [R, pw, C]
        none = xp.take_along_axis(vals, best[:, :, None], axis=2)[:, :, 0] == -xp.inf if vals.size else best < 0
        kw = cols.shape[2]
        pick_r = xp.take_along_axis(xp.broadcast_to(r_idx[:, :, :, 0], (r_idx.shape[0], 1, r_idx.shape[2])),
                                    best // kw, axis=2)
        pick_c = xp.take_along_axis(c_idx[:, :, 0, :], best % kw, axis=2)
        picks = ((image[:, None, None] * c + xp.arange(c)) * h + pick_r) * w + pick_c  # [R, pw, C]
        flat.append(xp.where(none, -1, picks))
    return xp.stack(flat, axis=1).transpose(0, 3, 1, 2)  # [R, C, ph, pw]


class RoIAlign(Layer):
    """roi_align as a layer: ``RoIAlign(output_size, spatial_scale=1.0)(x, boxes, boxes_num, aligned=True)``."""

    def __init__(self, output_size: Size2, spatial_scale: float = 1.0) -> None:
        super().__init__()
        self._output_size = output_size
        self._spatial_scale = spatial_scale

    def forward(self, x: Tensor, boxes: Tensor, boxes_num: Tensor, aligned: bool = True) -> Tensor:
        return roi_align(x, boxes, boxes_num, self._output_size, self._spatial_scale, aligned=aligned)


class RoIPool(Layer):
    """roi_pool as a layer: ``RoIPool(output_size, spatial_scale=1.0)(x, boxes, boxes_num)``."""

    def __init__(self, output_size: Size2, spatial_scale: float = 1.0) -> None:
        super().__init__()
        self._output_size = output_size
        self._spatial_scale = spatial_scale

    def forward(self, x: Tensor, boxes: Tensor, boxes_num: Tensor) -> Tensor:
        return roi_pool(x, boxes, boxes_num, self._output_size, self._spatial_scale)

    def extra_repr(self) -> str:
        return f"output_size={self._output_size}, spatial_scale={self._spatial_scale}"


class PSRoIPool(Layer):
    """psroi_pool as a layer: ``PSRoIPool(output_size, spatial_scale=1.0)(x, boxes, boxes_num)``."""

    def __init__(self, output_size: Size2, spatial_scale: float = 1.0) -> None:
        super().__init__()
        self.output_size = output_size
        self.spatial_scale = spatial_scale

    def forward(self, x: Tensor, boxes: Tensor, boxes_num: Tensor) -> Tensor:
        return psroi_pool(x, boxes, boxes_num, self.output_size, self.spatial_scale)
