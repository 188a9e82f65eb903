"""Complex numbers' parts: ``real``, ``imag``, ``conj``, ``angle``, ``complex`` (also Tensor
methods ``real()``, ``imag()``, ``conj()``, ``angle()``), with paddle's gradients.

A gradient reaching a complex tensor is paddle's (and torch's) conjugate-Wirtinger one, as
``pycoll.abs`` already gives it: for a real loss L of z = x + iy it is dL/dx + i dL/dy. So
``real`` sends g back as g + 0i, ``imag`` as i·g, ``conj`` sends conj(g), and ``angle`` g·(-y + ix)/|z|².
Their backward functions are written in that convention (`pycoll._graph.conjugate_grads`). On
real tensors (which paddle's kernels refuse) they act as NumPy's: ``real`` and ``conj`` are
the values, ``imag`` zeros, ``angle`` 0 or pi.
"""
from __future__ import annotations

from typing import Any, Optional

from pycoll._complex_grads import conjugate_grads
from pycoll._tensor_ops import as_tensor, op_output
from pycoll.device import array_module
from pycoll.dtypes import is_floating
from pycoll.shape_ops import unbroadcast
from pycoll.tensor import Tensor

__all__ = ["real", "imag", "conj", "angle", "complex", "as_complex", "as_real"]


def real(x: Any, name: Optional[str] = None) -> Tensor:
    """The real parts of x (float32 for complex64, float64 for complex128)."""
    x = as_tensor(x)
    a = x._array
    xp = array_module(a)
    dtype = a.dtype

    def backward(g: Any) -> tuple:
        return (g.astype(dtype, copy=False),)
    # of a complex x, a view of its memory, as paddle's (real(z).zero_() changes z)
    return op_output(xp.real(a) if a.dtype.kind == "c" else a.copy(), conjugate_grads(backward), x)


def imag(x: Any, name: Optional[str] = None) -> Tensor:
    """The imaginary parts of x (zeros for a real x)."""
    x = as_tensor(x)
    a = x._array
    xp = array_module(a)
    dtype = a.dtype
    is_complex = a.dtype.kind == "c"

    def backward(g: Any) -> tuple:
        return ((g * 1j).astype(dtype, copy=False) if is_complex else xp.zeros_like(g),)
    return op_output(xp.imag(a) if is_complex else xp.zeros_like(a), conjugate_grads(backward), x)


def conj(x: Any, name: Optional[str] = None) -> Tensor:
    """The complex conjugate of x (x itself, copied, when real)."""
    x = as_tensor(x)
    xp = array_module(x._array)
    return op_output(xp.conj(x._array), conjugate_grads(lambda g: (xp.conj(g),)), x)


def angle(x: Any, name: Optional[str] = None) -> Tensor:
    """The argument of each element, in (-pi, pi] (0 or pi for a real x)."""
    x = as_tensor(x)
    a = x._array
    xp = array_module(a)
    if a.dtype.kind != "c":
        return op_output(xp.angle(a).astype(a.dtype if is_floating(a.dtype) else "float32"),
                         lambda g: (xp.zeros_like(g),), x)
    xr, yi = xp.real(a), xp.imag(a)  # the backward keeps the parts, not x's memory

    def backward(g: Any) -> tuple:
        size = xr * xr + yi * yi
        safe = xp.where(size == 0, 1, size)
        return (xp.where(size == 0, 0, g * (-yi + 1j * xr) / safe).astype(a.dtype, copy=False),)
    return op_output(xp.angle(a), conjugate_grads(backward), x)


def complex(real: Any, imag: Any, name: Optional[str] = None) -> Tensor:  # noqa: A001 - paddle's name
    """real + i·imag, broadcast (float32 parts give complex64, float64 complex128); each part gets
    the matching part of the gradient."""
    re, im = as_tensor(real), as_tensor(imag)
    ra, ia = re._array, im._array
    if ra.dtype != ia.dtype or not is_floating(ra.dtype):
        raise TypeError(f"complex: real and imag must be floating tensors of one dtype, got {ra.dtype} and "
                        f"{ia.dtype}")
    xp = array_module(ra)
    r, i = xp.broadcast_arrays(ra, ia)
    out = xp.empty(r.shape, xp.complex64 if ra.dtype == xp.float32 else xp.complex128)
    out.real[...] = r  # set part by part: ra + 1j * ia would turn an infinite imag's 0 * inf into a NaN real
    out.imag[...] = i
    shapes, dtype = (ra.shape, ia.shape), ra.dtype  # the backward keeps no values of the parts

    def backward(g: Any) -> tuple:
        return (unbroadcast(xp.real(g), shapes[0]).astype(dtype), unbroadcast(xp.imag(g), shapes[1]).astype(dtype))
    return op_output(out, conjugate_grads(backward), re, im)


def as_complex(x: Any, name: Optional[str] = None) -> Tensor:
    """[..., 2] floats (real, imaginary) as [...] complex numbers (float32 -> complex64)."""
    x = as_tensor(x)
    a = x._array
    if not is_floating(a.dtype) or a.ndim < 1 or a.shape[-1] != 2:
        raise ValueError(f"as_complex: x must be a floating tensor whose last dimension is 2, got shape "
                         f"{list(a.shape)} dtype {a.dtype}")
    xp = array_module(a)
    complex_dtype = xp.complex64 if a.dtype == xp.float32 else xp.complex128
    out = _reinterpreted(a, complex_dtype)
    if out is None:  # pairs not adjacent in memory: a copy
        out = (a[..., 0] + 1j * a[..., 1]).astype(complex_dtype)
    else:
        out = out[..., 0]
    dtype = a.dtype

    def backward(g: Any) -> tuple:
        return (xp.stack([xp.real(g), xp.imag(g)], axis=-1).astype(dtype, copy=False),)
    return op_output(out, conjugate_grads(backward), x)


def as_real(x: Any, name: Optional[str] = None) -> Tensor:
    """[...] complex numbers as [..., 2] floats (real, imaginary)."""
    x = as_tensor(x)
    a = x._array
    if a.dtype.kind != "c":
        raise ValueError(f"as_real: x must be a complex tensor, got dtype {a.dtype}")
    xp = array_module(a)
    dtype = a.dtype

    def backward(g: Any) -> tuple:
        return ((g[..., 0] + 1j * g[..., 1]).astype(dtype, copy=False),)
    pairs = _reinterpreted(a, xp.float32 if a.dtype == xp.complex64 else xp.float64)
    if pairs is None:  # not contiguous along its last dimension: a copy
        pairs = xp.stack([xp.real(a), xp.imag(a)], axis=-1)
    else:
        pairs = pairs.reshape(a.shape + (2,))
    return op_output(pairs, conjugate_grads(backward), x)


def _reinterpreted(a: Any, dtype: Any) -> Any:
    """``a``'s memory read as ``dtype`` (a view, as paddle's as_real / as_complex are), or None
    where its last dimension is not contiguous (complex numbers and their float pairs must be)."""
    if a.ndim == 0 or a.strides[-1] != a.itemsize:
        return None
    try:
        return a.view(dtype)
    except ValueError:
        return None


for _name, _fn in {"real": real, "imag": imag, "conj": conj, "angle": angle}.items():
    setattr(Tensor, _name, _fn)
del _name, _fn
