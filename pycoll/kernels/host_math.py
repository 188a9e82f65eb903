"""Single-pass host kernels for tensor ops whose NumPy form takes many passes over the data: erf,
exact gelu and its gradient, cumsum along an axis, batch norm's per-channel sums and its
normalisation, sigmoid and its gradient, the Adam step, a scatter-add of rows, 2-D max pooling, RoI
max pooling's picks, RoI align's sampling, position-sensitive RoI pooling's bin sums and a step of
a fused recurrent layer (``pycoll._C``, C++, the GIL released; see csrc/host_math.h, csrc/host_adam.h and
csrc/host_rnn.h for what each computes and how it rounds).

Each function returns None where the kernels do not serve its arrays: one is not a numpy array
(a CuPy array, say), its dtype is not one the kernel has (float32 and float64; cumsum also int64),
or this build of ``pycoll._C`` lacks the kernels (it is missing, or older). The caller then runs
its own array-module formula, which gives the same values to float rounding (sigmoid's and
Adam's: the same bits). Non-contiguous arrays are copied to contiguous ones first; results are
new C-contiguous arrays, but for adam_step, which writes its arrays in place.
"""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from pycoll.kernels.compiled import having

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_CUMSUM_DTYPES = _FLOATS + (np.dtype(np.int64),)


def _kernels() -> Optional[ModuleType]:
    """pycoll._C if it is built with these kernels, else None."""
    return having("psroi_sums")  # the newest of them


def _served(arrays: Tuple[Any, ...], dtypes: Tuple[np.dtype, ...] = _FLOATS) -> Optional[ModuleType]:
    """The kernels, if every array is a numpy.ndarray (not a subclass: its type would be lost)
    of one dtype they serve."""
    first = arrays[0]
    if type(first) is not np.ndarray or first.dtype not in dtypes:
        return None
    if any(type(a) is not np.ndarray or a.dtype != first.dtype for a in arrays[1:]):
        return None
    return _kernels()


def _c_order(a: Any, dtype: Any = None) -> np.ndarray:
    """``a`` as a C-contiguous array (copied only where it is not one), a 0-d one staying 0-d
    (np.ascontiguousarray would make it 1-d, and the kernel's result with it)."""
    return np.require(a, dtype, requirements="C")


def _layout(shape: Tuple[int, ...], axis: int) -> Tuple[int, int, int]:
    """``shape`` as [outer, shape[axis], inner] (the elements before, along and after the axis)."""
    return math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1:])


def _as_volumes(a: np.ndarray, nd: int) -> np.ndarray:
    """[..., *spatial] a of nd (1 to 3) spatial axes as [..., d, h, w] (axes of 1 put before)."""
    return a.reshape(a.shape[:a.ndim - nd] + (1,) * (3 - nd) + a.shape[a.ndim - nd:])


def _of_volumes(a: np.ndarray, nd: int) -> np.ndarray:
    """The inverse of `_as_volumes` (a view)."""
    return a.reshape(a.shape[:a.ndim - 3] + a.shape[a.ndim - nd:])


def _padded3(values: Sequence[int], fill: int) -> List[int]:
    return [fill] * (3 - len(values)) + list(values)


def max_pool(padded: Any, kernel: Sequence[int], stride: Sequence[int]) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """(out, pick) of the kernel's windows over the last len(kernel) (1 to 3) axes of ``padded``
    at ``stride``: each window's maximum and its row-major position (the first cell equal to it;
    a NaN wins)."""
    kernels = _served((padded,))
    if kernels is None:
        return None
    nd = len(kernel)
    out, pick = kernels.max_pool(_as_volumes(_c_order(padded), nd), *_padded3(kernel, 1), *_padded3(stride, 1))
    return _of_volumes(out, nd), _of_volumes(pick, nd)


def max_pool_grad(g: Any, pick: Any, size: Sequence[int], kernel: Sequence[int],
                  stride: Sequence[int]) -> Optional[np.ndarray]:
    """max_pool's gradient over the padded planes or volumes of ``size``: each g added at its
    window's pick, in the windows' order."""
    kernels = _served((g,))
    if kernels is None or type(pick) is not np.ndarray or pick.dtype != np.int32:
        return None
    nd = len(kernel)
    grad = kernels.max_pool_backward(_as_volumes(_c_order(g), nd), _as_volumes(_c_order(pick), nd),
                                     *_padded3(size, 1), *_padded3(kernel, 1), *_padded3(stride, 1))
    return _of_volumes(grad, nd)


def sum_pool(padded: Any, kernel: Sequence[int], stride: Sequence[int]) -> Optional[np.ndarray]:
    """The sums of the kernel's windows over the last len(kernel) (1 to 3) axes of ``padded`` at
    ``stride``, each window's cells added in row-major order (paddle's running sum)."""
    kernels = _served((padded,))
    if kernels is None:
        return None
    nd = len(kernel)
    out = kernels.sum_pool(_as_volumes(_c_order(padded), nd), *_padded3(kernel, 1), *_padded3(stride, 1))
    return _of_volumes(out, nd)


def sum_pool_grad(g: Any, size: Sequence[int], kernel: Sequence[int], stride: Sequence[int]) -> Optional[np.ndarray]:
    """sum_pool's gradient over the padded planes or volumes of ``size``: each g added to every
    cell of its window, window by window."""
    kernels = _served((g,))
    if kernels is None:
        return None
    nd = len(kernel)
    grad = kernels.sum_pool_backward(_as_volumes(_c_order(g), nd), *_padded3(size, 1), *_padded3(kernel, 1),
                                     *_padded3(stride, 1))
    return _of_volumes(grad, nd)


def roi_max_index(x: Any, image: Any, hs: Any, he: Any, ws: Any, we: Any) -> Optional[np.ndarray]:
    """RoI max pooling's picks [R, C, ph, pw]: for each RoI (of image ``image[r]``), channel and
    bin [hs, he) x [ws, we) (``[R, ph]``, ``[R, pw]``), the flat index into x [N, C, h, w] of the
    bin's maximum (the first of equal maxima; a NaN never wins, as in paddle's kernel); -1 for an
    empty bin, or one of NaN and -inf cells only."""
    kernels = _served((x,))
    if kernels is None:
        return None
    return kernels.roi_max_index(_c_order(x), *(_c_order(v, np.int64) for v in (image, hs, he, ws, we)))


def roi_sample(x: Any, image: Any, iy: Any, wy: Any, ix: Any, wx: Any) -> Optional[np.ndarray]:
    """RoI align's pooled features [R, C, ph, pw] of x [N, C, h, w]: bin (i, j) of RoI r sums
    ``wy[r, i, a] * wx[r, j, b] * x[image[r], :, iy[r, i, a], ix[r, j, b]]`` over its row samples
    a and column samples b (tables [R, ph, k] and [R, pw, kk]; weights in x's dtype)."""
    kernels = _served((x, wy, wx))
    if kernels is None:
        return None
    return kernels.roi_sample(_c_order(x), *_roi_tables(image, iy, wy, ix, wx))


def roi_sample_grad(g: Any, image: Any, iy: Any, wy: Any, ix: Any, wx: Any,
                    shape: Sequence[int]) -> Optional[np.ndarray]:
    """roi_sample's gradient: g [R, C, ph, pw] spread back onto x's ``shape`` [N, C, h, w]."""
    kernels = _served((g, wy, wx))
    if kernels is None:
        return None
    n, _, h, w = shape
    return kernels.roi_sample_backward(_c_order(g), *_roi_tables(image, iy, wy, ix, wx), n, h, w)


def psroi_sums(x: Any, image: Any, hs: Any, he: Any, ws: Any, we: Any) -> Optional[np.ndarray]:
    """Position-sensitive RoI pooling's bin sums [R, C / (ph * pw), ph, pw], float64: bin (i, j)
    of output channel o of RoI r sums input channel (o * ph + i) * pw + j of x [N, C, h, w] (image
    ``image[r]``) over rows [hs, he) x columns [ws, we) (``[R, ph]``, ``[R, pw]``, within the plane)."""
    kernels = _served((x,))
    if kernels is None:
        return None
    return kernels.psroi_sums(_c_order(x), *(_c_order(v, np.int64) for v in (image, hs, he, ws, we)))


def psroi_sums_grad(g: Any, image: Any, hs: Any, he: Any, ws: Any, we: Any,
                    shape: Sequence[int]) -> Optional[np.ndarray]:
    """psroi_sums' gradient: each bin's weight in g [R, C / (ph * pw), ph, pw] added to the
    cells of its bin, in an array of x's ``shape``."""
    kernels = _served((g,))
    if kernels is None:
        return None
    return kernels.psroi_sums_backward(_c_order(g), *(_c_order(v, np.int64) for v in (image, hs, he, ws, we)),
                                       *shape)


def _roi_tables(image: Any, iy: Any, wy: Any, ix: Any, wx: Any) -> Tuple[np.ndarray, ...]:
    return (_c_order(image, np.int64), _c_order(iy, np.int64), _c_order(wy), _c_order(ix, np.int64), _c_order(wx))


def contiguous(a: Any) -> Any:
    """A numpy array the kernels serve as a C-contiguous one (a copy where it is not), anything
    else unchanged: for an array several kernels read (a broadcast gradient), copied once."""
    return _c_order(a) if _served((a,), _CUMSUM_DTYPES) is not None else a


def erf(a: Any) -> Optional[np.ndarray]:
    """erf(a); float32 correctly rounded (but within 1e-10 of a rounding boundary), float64 as
    the C library's erf."""
    kernels = _served((a,))
    return None if kernels is None else kernels.erf(_c_order(a))


def gelu(a: Any) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """(a * cdf, cdf) with cdf = 0.5 * (1 + erf(a * sqrt(1/2))), each step in a's dtype."""
    kernels = _served((a,))
    return None if kernels is None else kernels.gelu(_c_order(a))


def gelu_grad(a: Any, cdf: Any, g: Any) -> Optional[np.ndarray]:
    """g * (cdf + a * exp(-a * a / 2) / sqrt(2 pi)), each step in a's dtype; all of one shape
    (else None)."""
    kernels = _served((a, cdf, g))
    if kernels is None or not a.shape == cdf.shape == g.shape:
        return None
    return kernels.gelu_backward(*(_c_order(v) for v in (a, cdf, g)))


def cumsum(a: Any, axis: int, reverse: bool = False) -> Optional[np.ndarray]:
    """The running sums of a along `axis` (from its end when `reverse`), added in sequence as
    NumPy's cumsum adds them: the same bits."""
    kernels = _served((a,), _CUMSUM_DTYPES)
    if kernels is None or a.ndim == 0:
        return None
    outer, n, inner = _layout(a.shape, axis)
    return kernels.cumsum(_c_order(a), outer, n, inner, reverse).reshape(a.shape)


def cumprod(a: Any, axis: int) -> Optional[np.ndarray]:
    """The running products of a along `axis`, multiplied in sequence as NumPy's cumprod
    multiplies them: the same bits (NumPy runs an axis with elements after it, [1000, 1000] along
    0, one element at a time, 8x the kernel's time)."""
    kernels = _served((a,), _CUMSUM_DTYPES)
    if kernels is None or a.ndim == 0:
        return None
    return kernels.cumprod(_c_order(a), *_layout(a.shape, axis)).reshape(a.shape)


def channel_sums(a: Any, channel_axis: int, *, less: Any = None) -> Optional[np.ndarray]:
    """Per-channel float64 sums of a, or of (a - less[c]) ** 2 (the difference rounded to a's
    dtype), over every axis but `channel_axis`."""
    kernels = _served((a,) if less is None else (a, less))
    if kernels is None:
        return None
    a, less = _c_order(a), None if less is None else _c_order(less)
    return kernels.channel_sums(a, less, *_layout(a.shape, channel_axis))


def channel_sums_and_dots(a: Any, times: Any, channel_axis: int) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """Per-channel float64 sums of a and of a * times (same shape, the products rounded to a's
    dtype), in one pass."""
    kernels = _served((a, times))
    if kernels is None:
        return None
    a, times = _c_order(a), _c_order(times)
    return kernels.channel_sums_and_dots(a, times, *_layout(a.shape, channel_axis))


def normalize(a: Any, mean: Any, rstd: Any, weight: Any, bias: Any,
              channel_axis: int) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """(xhat, out): xhat = (a - mean) * rstd, out = xhat * weight + bias, per channel (weight
    and bias may be None), each step in a's dtype."""
    operands = tuple(v for v in (a, mean, rstd, weight, bias) if v is not None)
    kernels = _served(operands)
    if kernels is None:
        return None
    a, mean, rstd, weight, bias = (None if v is None else _c_order(v)
                                   for v in (a, mean, rstd, weight, bias))
    return kernels.normalize(a, mean, rstd, weight, bias, *_layout(a.shape, channel_axis))


def normalize_grad(g: Any, xhat: Any, g_mean: Any, gxhat_mean: Any, scale: Any, channel_axis: int,
                   overwrite_g: bool = False) -> Optional[np.ndarray]:
    """Batch norm's input gradient through its statistics, ((g - g_mean) - xhat * gxhat_mean)
    * scale per channel, each step in g's dtype; written over g (a C-contiguous array nobody
    else holds) when `overwrite_g`."""
    operands = (g, xhat, g_mean, gxhat_mean, scale)
    kernels = _served(operands)
    if kernels is None:
        return None
    contiguous = [_c_order(v) for v in operands]
    return kernels.normalize_backward(*contiguous, *_layout(g.shape, channel_axis),
                                      overwrite_g and contiguous[0] is g)


def sigmoid(a: Any) -> Optional[np.ndarray]:
    """1 / (1 + exp(-a)), and exp(a) where that is 0: NumPy's exp (so the same bits as that
    formula in NumPy), then one pass for the rest. Overflow is not warned of only in the caller's
    ``quiet()``."""
    kernels = _served((a,))
    if kernels is None:
        return None
    e = np.negative(a, out=np.empty(a.shape, a.dtype))
    np.exp(e, out=e)
    if kernels.sigmoid_from_exp(e):
        zero = e == 0
        e[zero] = np.exp(a[zero])
    return e


def sigmoid_grad(g: Any, out: Any) -> Optional[np.ndarray]:
    """sigmoid's input gradient (g * out) * (1 - out), each step in out's dtype; g and out of
    one shape (else None)."""
    kernels = _served((out, g))
    if kernels is None or g.shape != out.shape:
        return None
    return kernels.sigmoid_backward(_c_order(out), _c_order(g))


def _writable(a: Any) -> bool:
    return a.flags.c_contiguous and a.flags.writeable


def adam_step(param: Any, grad: Any, moment1: Any, moment2: Any, moment2_max: Any, *, decay: float,
              beta1: float, beta2: float, epsilon: float, step: float) -> Optional[bool]:
    """One Adam step in place (csrc/host_math.h: each Python float rounded to the arrays' dtype
    as NumPy rounds it, then every operation in that dtype): True, or None where the kernel does
    not serve the arrays, the ones written in place included only if C-contiguous and writable
    (moment2_max may be None)."""
    written = tuple(x for x in (param, moment1, moment2, moment2_max) if x is not None)
    kernels = _served(written + (grad,))
    if kernels is None or not all(_writable(x) and x.shape == param.shape for x in written):
        return None
    if grad.shape != param.shape:
        return None
    kernels.adam_step(param, _c_order(grad), moment1, moment2, moment2_max, decay,
                      beta1, 1 - beta1, beta2, 1 - beta2, epsilon, step)
    return True


def scatter_add_rows(target: Any, index: Any, values: Any) -> Optional[bool]:
    """``target[index] += values`` with repeats adding up, for a 1-D integer ``index`` of rows of
    ``target`` (values of shape ``index.shape + target.shape[1:]``), in place and in np.add.at's
    order (the same sums, bit for bit; np.add.at took 20-30x longer on 20 000 rows of 512).
    True, or None where the kernel does not serve the arrays (target then unchanged); IndexError,
    as np.add.at's, for an index outside the rows."""
    return _scatter_rows(target, index, values, lambda k, t, i, v: k.scatter_add_rows(t, i, v))


def scatter_extreme_rows(target: Any, index: Any, values: Any, maximum: bool) -> Optional[bool]:
    """``np.maximum.at(target, index, values)`` (``np.minimum.at`` unless ``maximum``) over rows,
    as `scatter_add_rows` (np.maximum.at took 15x longer on 100 000 rows of 64)."""
    return _scatter_rows(target, index, values, lambda k, t, i, v: k.scatter_extreme_rows(t, i, v, bool(maximum)))


def _scatter_rows(target: Any, index: Any, values: Any, run: Any) -> Optional[bool]:
    if not (isinstance(index, np.ndarray) and index.ndim == 1 and index.dtype.kind in "iu"):
        return None
    kernels = _served((target, values))
    if kernels is None or not _writable(target) or target.ndim < 1 or values.shape != index.shape + target.shape[1:]:
        return None
    bad = run(kernels, target, _c_order(index, dtype=np.int64), _c_order(values))
    if bad >= 0:
        raise IndexError(f"index {int(index[bad])} is out of bounds for axis 0 with size {target.shape[0]}")
    return True


def rnn_steps(*arrays: Any) -> Optional[Tuple[Any, Any]]:
    """The classes that take the steps of a fused recurrent layer and back (csrc/host_rnn.h:
    ``RnnSteps``, ``RnnStepsBackward`` for the arrays' dtype), where they serve ``arrays`` (the
    layer's inputs, states and weights); None otherwise."""
    module = _served(arrays)
    if module is None or not hasattr(module, "RnnSteps32"):
        return None
    bits = 32 if arrays[0].dtype == np.float32 else 64
    return getattr(module, f"RnnSteps{bits}"), getattr(module, f"RnnStepsBackward{bits}")
