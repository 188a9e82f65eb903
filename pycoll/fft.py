"""paddle.fft: discrete Fourier transforms of Tensors (SciPy's ``scipy.fft`` on the CPU, CuPy's
``cupy.fft`` on the GPU), with paddle's names, argument checks, dtypes and gradients.

Every transform is one of three kinds over a list of axes (paddle's ``fft_c2c``, ``fft_r2c``,
``fft_c2r``); the 1-D and 2-D functions are the N-D ones on one or two axes. Gradients follow
paddle's convention for complex values, ``dL/dRe + i dL/dIm``, under which the gradient of a
complex-linear map is its adjoint: the adjoint of a transform with norm ``N`` is the opposite
transform with the opposite norm (``backward`` <-> ``forward``, ``ortho`` stays), the adjoint of the
crop / zero-pad that ``n`` / ``s`` makes is the zero-pad / crop back, and a real input's gradient
is the real part. A one-sided (real-to-complex) spectrum's adjoint zero-fills the missing half; a
complex-to-real transform reads each bin but the first (and the middle one, for even lengths)
twice, so its adjoint weights those bins by 2.
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from pycoll._param_aliases import param_aliases
from pycoll._complex_grads import conjugate_grads
from pycoll._tensor_ops import as_tensor, delivered, normalize_axes, op_output, placed
from pycoll.device import array_module, device_place, module_for
from pycoll.dtypes import DTypeLike, convert_dtype, default_float, is_floating
from pycoll.reshape_ops import roll
from pycoll.tensor import Tensor, wrap

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]

_OPPOSITE = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
_ONE_AXIS = {"input": "x", "dim": "axis"}
_AXES = {"input": "x", "dim": "axes"}


# ---- argument checks (paddle's messages) ----

def _check_norm(norm: Any) -> None:
    if norm not in _OPPOSITE:
        raise ValueError(f"Unexpected norm: {norm}. Norm should be forward, backward or ortho")


def _check_n(n: Any) -> None:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise ValueError(f"Invalid FFT argument n({n}), it should be an integer.")
    if n <= 0:
        raise ValueError(f"Invalid FFT argument n({n}), it should be positive.")


def _axis_list(axes: Any, ndim: int, fn: str) -> List[int]:
    if not isinstance(axes, (list, tuple)):
        raise ValueError(f"{fn}: Invalid FFT axes ({axes}), it should be a sequence of integers.")
    if len(axes) > ndim:
        raise ValueError(f"{fn}: Length of fft axes should not be larger than the rank of input. Received, "
                         f"len of axes: {len(axes)}, rank of x: {ndim}")
    for a in axes:
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool) or not -ndim <= a < ndim:
            raise ValueError(f"{fn}: FFT axes {axes} contains invalid value ({a}), it should be in range "
                             f"[-{ndim}, {ndim})")
    out = [int(a) % ndim for a in axes]
    if len(set(out)) != len(out):
        raise ValueError(f"{fn}: FFT axes {axes} must not repeat an axis")
    return out


def _plan(x: Tensor, s: Any, axes: Any, fn: str) -> Tuple[List[int], Optional[List[int]]]:
    """The transform's axes (non-negative) and sizes (None: the input's) from paddle's s / axes."""
    ndim = x.ndim
    if s is not None:
        if not isinstance(s, (list, tuple)):
            raise ValueError(f"{fn}: Invalid FFT argument s({s}), it should be a sequence of integers.")
        if len(s) > ndim:
            raise ValueError(f"{fn}: Length of FFT argument s should not be larger than the rank of input. "
                             f"Received s: {s}, rank of x: {ndim}")
        for size in s:
            if not isinstance(size, (int, np.integer)) or isinstance(size, bool) or size <= 0:
                raise ValueError(f"{fn}: FFT sizes {s} contains invalid value ({size})")
        s = [int(v) for v in s]
    if axes is None:
        axes = list(range(ndim - (len(s) if s is not None else ndim), ndim))
    else:
        axes = _axis_list(axes, ndim, fn)
        if s is not None and len(s) != len(axes):
            raise ValueError(f"{fn}: Length of s ({len(s)}) and length of axes ({len(axes)}) does not match.")
    if not axes:
        raise ValueError(f"{fn}: the transform needs at least one axis, got x of rank {ndim}")
    return axes, s


def _two(s: Any, axes: Any, x: Any, fn: str) -> None:
    """The 2-D functions' extra checks: x of rank >= 2, s and axes of two entries."""
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"{fn}: The rank of the input ({x.ndim}) should >= 2")
    if s is not None and (not isinstance(s, (list, tuple)) or len(s) != 2):
        raise ValueError(f"{fn}: Invalid FFT argument s ({s}), it should be a sequence of 2 integers.")
    if axes is not None and (not isinstance(axes, (list, tuple)) or len(axes) != 2):
        raise ValueError(f"{fn}: Invalid FFT argument axes ({axes}), it should be a sequence of 2 integers.")


# ---- raw-array helpers ----

def _transforms(xp: Any) -> Any:
    """The FFT functions for arrays of ``xp``: ``cupy.fft`` for device arrays, ``scipy.fft`` for
    host ones. Both pocketfft, but SciPy's vectorizes: 3-4x ``numpy.fft`` on 1M points, closer to
    paddle's own (imported on first use: it takes 0.2 s)."""
    if xp is not np:
        return xp.fft
    import scipy.fft
    return scipy.fft


def _complex_of(dtype: np.dtype) -> np.dtype:
    if dtype.kind == "c":
        return dtype
    real = dtype if is_floating(dtype) else default_float()
    return np.dtype(np.complex64) if real.itemsize <= 4 else np.dtype(np.complex128)


def _resized(a: Any, sizes: Sequence[int], axes: Sequence[int]) -> Any:
    """a cropped (from the start) or zero-padded (at the end) to ``sizes`` along ``axes``."""
    if all(a.shape[ax] == n for ax, n in zip(axes, sizes)):
        return a
    xp = array_module(a)
    shape = list(a.shape)
    for ax, n in zip(axes, sizes):
        shape[ax] = n
    out = xp.zeros(shape, dtype=a.dtype)
    common = tuple(slice(0, min(a.shape[d], shape[d])) for d in range(a.ndim))
    out[common] = a[common]
    return out


def _grad_like(g: Any, a: Any) -> Any:
    """The gradient array ``g`` in the dtype of operand ``a`` (its real part for a real operand)."""
    if a.dtype.kind != "c":
        g = g.real
    return g.astype(a.dtype, copy=False)


# ---- the three kinds of transform ----

def _c2c(x: Any, s: Any, axes: Any, norm: str, forward: bool, fn: str) -> Tensor:
    x = as_tensor(x)
    _check_norm(norm)
    axes, s = _plan(x, s, axes, fn)
    x, = placed("_c2c", x, axes=tuple(axes))  # auto-parallel: the transformed axes whole, other splits stay
    a = x._array
    xp = array_module(a)
    ft = _transforms(xp)
    cdt = _complex_of(a.dtype)
    b = a.astype(cdt, copy=False) if s is None else _resized(a.astype(cdt, copy=False), s, axes)

    def transformed(v: Any, ahead: bool, scaling: str) -> Any:  # an empty x's transform is empty (paddle's)
        return (ft.fftn if ahead else ft.ifftn)(v, axes=axes, norm=scaling) if v.size else xp.zeros(v.shape, cdt)
    out = transformed(b, forward, norm).astype(cdt, copy=False)
    in_sizes = [a.shape[ax] for ax in axes]

    def backward(g: Any) -> Tuple[Any]:
        adj = transformed(g.astype(cdt, copy=False), not forward, _OPPOSITE[norm])
        return (_grad_like(_resized(adj, in_sizes, axes), a),)
    return op_output(out, conjugate_grads(backward), x)  # adjoint transforms: the convention's own


def _r2c(x: Any, s: Any, axes: Any, norm: str, forward: bool, fn: str) -> Tensor:
    """The one-sided spectrum of real x (halved along the last of axes): rfftn (forward) or
    ihfftn (inverse: the conjugate of rfftn with the opposite norm)."""
    x = as_tensor(x)
    _check_norm(norm)
    axes, s = _plan(x, s, axes, fn)
    x, = placed("_r2c", x, axes=tuple(axes))  # auto-parallel: the transformed axes whole, other splits stay
    a = x._array
    if a.dtype.kind == "c":
        raise TypeError(f"{fn}: x must be a real Tensor, got dtype {a.dtype}")
    xp = array_module(a)
    ft = _transforms(xp)
    rdt = a.dtype if is_floating(a.dtype) else default_float()
    cdt = _complex_of(rdt)
    b = a.astype(rdt, copy=False) if s is None else _resized(a.astype(rdt, copy=False), s, axes)
    used = norm if forward else _OPPOSITE[norm]
    out = ft.rfftn(b, axes=axes, norm=used).astype(cdt, copy=False)
    if not forward:
        out = xp.conj(out)
    full = [b.shape[ax] for ax in axes]
    in_sizes = [a.shape[ax] for ax in axes]

    def backward(g: Any) -> Tuple[Any]:
        g = g.astype(cdt, copy=False)
        if not forward:
            g = xp.conj(g)
        adj = ft.ifftn(_resized(g, full[-1:], axes[-1:]), axes=axes, norm=_OPPOSITE[used])
        return (_grad_like(_resized(adj, in_sizes, axes), a),)
    return op_output(out, conjugate_grads(backward), x)  # adjoint transforms: the convention's own


def _c2r(x: Any, s: Any, axes: Any, norm: str, forward: bool, fn: str) -> Tensor:
    """The real signal whose one-sided spectrum (along the last of axes) is x: irfftn (inverse) or
    hfftn (forward: irfftn of the conjugate with the opposite norm)."""
    x = as_tensor(x)
    _check_norm(norm)
    axes, s = _plan(x, s, axes, fn)
    x, = placed("_c2r", x, axes=tuple(axes))  # auto-parallel: the transformed axes whole, other splits stay
    a = x._array
    xp = array_module(a)
    ft = _transforms(xp)
    cdt = _complex_of(a.dtype)
    rdt = np.dtype(np.float32) if cdt == np.complex64 else np.dtype(np.float64)
    last = s[-1] if s is not None else 2 * (a.shape[axes[-1]] - 1)
    if last <= 0:
        raise ValueError(f"{fn}: the output length along axis {axes[-1]} must be positive; give n (or s) for an "
                         f"input of length {a.shape[axes[-1]]}")
    sizes = (list(s[:-1]) if s is not None else [a.shape[ax] for ax in axes[:-1]]) + [last]
    b = _resized(a.astype(cdt, copy=False), sizes[:-1] + [last // 2 + 1], axes)
    used = _OPPOSITE[norm] if forward else norm
    if forward and hasattr(ft, "hfftn"):  # SciPy's: the same transform without a pass for the conjugate
        out = ft.hfftn(b, s=sizes, axes=axes, norm=norm).astype(rdt, copy=False)
    else:
        out = ft.irfftn(xp.conj(b) if forward else b, s=sizes, axes=axes, norm=used).astype(rdt, copy=False)
    in_sizes = [a.shape[ax] for ax in axes]

    def backward(g: Any) -> Tuple[Any]:
        adj = ft.rfftn(g.real.astype(rdt, copy=False), axes=axes, norm=_OPPOSITE[used]).astype(cdt, copy=False)
        weight = xp.full(last // 2 + 1, 2, dtype=rdt)
        weight[0] = 1
        if last % 2 == 0:
            weight[-1] = 1
        view = [1] * adj.ndim
        view[axes[-1]] = weight.size
        adj = adj * weight.reshape(view)
        if forward:
            adj = xp.conj(adj)
        return (_grad_like(_resized(adj, in_sizes, axes), a),)
    return op_output(out, conjugate_grads(backward), x)  # adjoint transforms: the convention's own


def _is_real(x: Any) -> bool:
    return as_tensor(x)._array.dtype.kind != "c"


# ---- 1-D ----

@param_aliases(_ONE_AXIS)
def fft(x: Any, n: Optional[int] = None, axis: int = -1, norm: str = "backward", name: Optional[str] = None, *,
        out: Optional[Tensor] = None) -> Tensor:
    """The 1-D discrete Fourier transform along ``axis`` (x cropped or zero-padded to ``n``)."""
    return delivered(_c2c(x, _n(n), [axis], norm, True, "fft"), out, "fft")


@param_aliases(_ONE_AXIS)
def ifft(x: Any, n: Optional[int] = None, axis: int = -1, norm: str = "backward", name: Optional[str] = None, *,
         out: Optional[Tensor] = None) -> Tensor:
    """The inverse of fft."""
    return delivered(_c2c(x, _n(n), [axis], norm, False, "ifft"), out, "ifft")


@param_aliases(_ONE_AXIS)
def rfft(x: Any, n: Optional[int] = None, axis: int = -1, norm: str = "backward", name: Optional[str] = None, *,
         out: Optional[Tensor] = None) -> Tensor:
    """fft of a real x, keeping the n//2 + 1 non-negative frequencies."""
    return delivered(_r2c(x, _n(n), [axis], norm, True, "rfft"), out, "rfft")


@param_aliases(_ONE_AXIS)
def irfft(x: Any, n: Optional[int] = None, axis: int = -1, norm: str = "backward", name: Optional[str] = None, *,
          out: Optional[Tensor] = None) -> Tensor:
    """The inverse of rfft: a real signal of length n (default 2 * (x's length - 1))."""
    return delivered(_c2r(x, _n(n), [axis], norm, False, "irfft"), out, "irfft")


@param_aliases(_ONE_AXIS)
def hfft(x: Any, n: Optional[int] = None, axis: int = -1, norm: str = "backward", name: Optional[str] = None, *,
         out: Optional[Tensor] = None) -> Tensor:
    """fft of a Hermitian-symmetric signal given by its first half x: a real spectrum of length n."""
    return delivered(_c2r(x, _n(n), [axis], norm, True, "hfft"), out, "hfft")


@param_aliases(_ONE_AXIS)
def ihfft(x: Any, n: Optional[int] = None, axis: int = -1, norm: str = "backward", name: Optional[str] = None, *,
          out: Optional[Tensor] = None) -> Tensor:
    """The inverse of hfft: the one-sided inverse transform of a real x."""
    return delivered(_r2c(x, _n(n), [axis], norm, False, "ihfft"), out, "ihfft")


def _n(n: Any) -> Optional[List[int]]:
    if n is None:
        return None
    _check_n(n)
    return [int(n)]


# ---- N-D ----

@param_aliases(_AXES)
def fftn(x: Any, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None, norm: str = "backward",
         name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """The N-D discrete Fourier transform over ``axes`` (default: the last len(s) axes, or all)."""
    return delivered(_c2c(x, s, axes, norm, True, "fftn"), out, "fftn")


@param_aliases(_AXES)
def ifftn(x: Any, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None, norm: str = "backward",
          name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """The inverse of fftn."""
    return delivered(_c2c(x, s, axes, norm, False, "ifftn"), out, "ifftn")


@param_aliases(_AXES)
def rfftn(x: Any, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None, norm: str = "backward",
          name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """fftn of a real x, one-sided along the last of ``axes``."""
    return delivered(_r2c(x, s, axes, norm, True, "rfftn"), out, "rfftn")


@param_aliases(_AXES)
def irfftn(x: Any, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None, norm: str = "backward",
           name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """The inverse of rfftn."""
    return delivered(_c2r(x, s, axes, norm, False, "irfftn"), out, "irfftn")


@param_aliases(_AXES)
def hfftn(x: Any, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None, norm: str = "backward",
          name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """fftn of a signal Hermitian-symmetric along the last of ``axes``, given by its first half."""
    return delivered(_c2r(x, s, axes, norm, True, "hfftn"), out, "hfftn")


@param_aliases(_AXES)
def ihfftn(x: Any, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None, norm: str = "backward",
           name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """The inverse of hfftn."""
    return delivered(_r2c(x, s, axes, norm, False, "ihfftn"), out, "ihfftn")


# ---- 2-D ----

@param_aliases(_AXES)
def fft2(x: Any, s: Optional[Sequence[int]] = None, axes: Sequence[int] = (-2, -1), norm: str = "backward",
         name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """fftn over two axes (default the last two)."""
    _two(s, axes, x, "fft2")
    return delivered(_c2c(x, s, axes, norm, True, "fft2"), out, "fft2")


@param_aliases(_AXES)
def ifft2(x: Any, s: Optional[Sequence[int]] = None, axes: Sequence[int] = (-2, -1), norm: str = "backward",
          name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """ifftn over two axes."""
    _two(s, axes, x, "ifft2")
    return delivered(_c2c(x, s, axes, norm, False, "ifft2"), out, "ifft2")


@param_aliases(_AXES)
def rfft2(x: Any, s: Optional[Sequence[int]] = None, axes: Sequence[int] = (-2, -1), norm: str = "backward",
          name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """rfftn over two axes."""
    _two(s, axes, x, "rfft2")
    return delivered(_r2c(x, s, axes, norm, True, "rfft2"), out, "rfft2")


@param_aliases(_AXES)
def irfft2(x: Any, s: Optional[Sequence[int]] = None, axes: Sequence[int] = (-2, -1), norm: str = "backward",
           name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """irfftn over two axes."""
    _two(s, axes, x, "irfft2")
    return delivered(_c2r(x, s, axes, norm, False, "irfft2"), out, "irfft2")


@param_aliases(_AXES)
def hfft2(x: Any, s: Optional[Sequence[int]] = None, axes: Sequence[int] = (-2, -1), norm: str = "backward",
          name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """hfftn over two axes."""
    _two(s, axes, x, "hfft2")
    return delivered(_c2r(x, s, axes, norm, True, "hfft2"), out, "hfft2")


@param_aliases(_AXES)
def ihfft2(x: Any, s: Optional[Sequence[int]] = None, axes: Sequence[int] = (-2, -1), norm: str = "backward",
           name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """ihfftn over two axes."""
    _two(s, axes, x, "ihfft2")
    return delivered(_r2c(x, s, axes, norm, False, "ihfft2"), out, "ihfft2")


# ---- frequencies and shifts ----

def _frequencies(ints: Any, n: int, d: float, dtype: DTypeLike, device: Any, requires_grad: bool,
                 out: Optional[Tensor], fn: str) -> Tensor:
    xp = module_for(device_place(device))
    dt = convert_dtype(dtype)
    if dt is None or dt.kind not in "fc":  # an integer dtype would truncate every frequency to 0: paddle's float
        dt = default_float()
    values = xp.asarray(ints, dtype=dt) * (1.0 / (n * d))
    result = wrap(values.astype(dt, copy=False))
    result.stop_gradient = not requires_grad
    return delivered(result, out, fn)


def _check_spacing(n: Any, d: Any, fn: str) -> None:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool):
        raise TypeError(f"{fn}: n must be an int, got {type(n).__name__}")
    if d * n == 0:
        raise ValueError("d or n should not be 0.")


def fftfreq(n: int, d: float = 1.0, dtype: DTypeLike = None, name: Optional[str] = None, *,
            out: Optional[Tensor] = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an n-point fft: [0, 1, ..., -2, -1] / (d * n)."""
    _check_spacing(n, d, "fftfreq")
    ints = np.roll(np.arange(-(n // 2), (n + 1) // 2), -(n // 2))
    return _frequencies(ints, n, d, dtype, device, requires_grad, out, "fftfreq")


def rfftfreq(n: int, d: float = 1.0, dtype: DTypeLike = None, name: Optional[str] = None, *,
             out: Optional[Tensor] = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an n-point rfft: [0, 1, ..., n // 2] / (d * n)."""
    _check_spacing(n, d, "rfftfreq")
    return _frequencies(np.arange(n // 2 + 1), n, d, dtype, device, requires_grad, out, "rfftfreq")


def _shift(x: Any, axes: Any, half: Any, fn: str) -> Tensor:
    x = as_tensor(x)
    if axes is None:
        axes = list(range(x.ndim))
    else:
        try:
            axes = list(normalize_axes(axes, x.ndim))
        except ValueError:
            raise ValueError(f"{fn}: axes must be ints in [-{max(x.ndim, 1)}, {max(x.ndim, 1)}) for x of shape "
                             f"{list(x.shape)}, got {axes!r}") from None
    return roll(x, [half(x.shape[ax]) for ax in axes], axes)


@param_aliases(_AXES)
def fftshift(x: Any, axes: Any = None, name: Optional[str] = None) -> Tensor:
    """x rolled by half its length along ``axes`` (all by default): frequency zero to the centre."""
    return _shift(x, axes, lambda n: n // 2, "fftshift")


@param_aliases(_AXES)
def ifftshift(x: Any, axes: Any = None, name: Optional[str] = None) -> Tensor:
    """The inverse of fftshift."""
    return _shift(x, axes, lambda n: (n + 1) // 2, "ifftshift")
