"""paddle.linalg's ``norm`` (also ``Tensor.norm``), ``vector_norm`` and ``matrix_norm``: vector
p-norms and the matrix norms, with paddle's rules for which is which and paddle's gradients.
(paddle.linalg's other functions, ``inv``, ``det``, ``solve``, ``cov``, ..., come from
`pycoll.matrix_ops` and its siblings, ``householder_product`` / ``ormqr`` from
`pycoll.linalg_householder`, ``svd_lowrank`` / ``pca_lowrank`` from `pycoll.linalg_lowrank`;
``diagonal``, ``matmul`` and ``matrix_transpose`` are the top-level ops.)

Which norm: a string ``p`` ('fro', 'nuc') is a matrix norm, except 'fro' with ``axis`` None or
one axis, which is the vector 2-norm; a number ``p`` (None: 2) is a matrix norm over an ``axis``
of two entries and a vector norm otherwise (``axis`` None: x flattened; several axes: over them
together). As in paddle, ``p=None`` with two axes is the matrix 2-norm (the largest singular
value), not the Frobenius norm.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from pycoll import math_ops, shape_ops
from pycoll._fp_quiet import quiet as _quiet
from pycoll._param_aliases import param_aliases
from pycoll._tensor_ops import (as_tensor, delivered, normalize_axes, op_output, placed, reduction_axes,
                                require_floating)
from pycoll.device import array_module
from pycoll.math_ops import kept_shape
from pycoll.diag_ops import diagonal
from pycoll.math_ops import matmul
from pycoll.reshape_ops import matrix_transpose
from pycoll.matrix_ops import corrcoef, cov, det, inv, matrix_power, multi_dot, slogdet, solve
from pycoll.linalg_decomp import cholesky, eig, eigh, eigvals, eigvalsh, qr, svd, svdvals
from pycoll.linalg_matrix_functions import cond, matrix_exp, matrix_rank, pinv, vecdot
from pycoll.linalg_solve import cholesky_inverse, cholesky_solve, lstsq, lu, lu_solve, lu_unpack, triangular_solve
from pycoll.linalg_householder import householder_product, ormqr
from pycoll.linalg_lowrank import pca_lowrank, svd_lowrank
from pycoll._promotion import accumulates_in_float32
from pycoll.dtypes import DTypeLike
from pycoll.tensor import Tensor

__all__ = ["norm", "vector_norm", "matrix_norm", "inv", "det", "slogdet", "solve", "matrix_power",
           "multi_dot", "cov", "corrcoef", "cross"]
__all__ += ["svd", "svdvals", "qr", "eigh", "eigvalsh", "eig", "eigvals", "cholesky", "cholesky_solve",
            "triangular_solve", "lstsq", "lu", "lu_unpack", "pinv", "matrix_exp", "matrix_rank", "cond", "vecdot"]
__all__ += ["diagonal", "matmul", "matrix_transpose"]
__all__ += ["lu_solve", "cholesky_inverse", "householder_product", "ormqr", "svd_lowrank", "pca_lowrank"]

_EPS = 1e-12  # paddle's p_norm epsilon: its gradient divides by norm + eps


@param_aliases({"input": "x", "A": "x", "ord": "p", "dim": "axis"})
@accumulates_in_float32
def norm(x: Tensor, p: Union[float, str, None] = None, axis: Union[int, Sequence[int], None] = None,
         keepdim: bool = False, out: Optional[Tensor] = None, dtype: DTypeLike = None,
         name: Optional[str] = None) -> Tensor:
    """The norm of x (see the module's docstring for which one). `dtype` casts x first; `out`,
    if given, receives a copy of the result (its shape and dtype must match)."""
    x = _floating(x, dtype, "norm", complex_ok=True)
    if isinstance(axis, tuple):
        axis = list(axis)
    if isinstance(axis, list) and len(axis) == 1:
        axis = axis[0]
    if isinstance(p, str):
        if p not in ("fro", "nuc"):
            raise ValueError(f"norm: p must be a number, 'fro' or 'nuc', got {p!r}")
        if p == "fro" and (axis is None or isinstance(axis, int)):
            result = _vector_norm(x, 2.0, axis, keepdim)
        else:
            result = _matrix_norm(x, p, list(range(x.ndim)) if axis is None else axis, keepdim)
    else:
        p = 2.0 if p is None else p
        if isinstance(p, bool) or not isinstance(p, (int, float)):
            raise TypeError(f"norm: p must be a number, 'fro' or 'nuc', got {type(p).__name__}")
        if isinstance(axis, list) and len(axis) == 2:
            result = _matrix_norm(x, p, axis, keepdim)
        else:
            result = _vector_norm(x, float(p), axis, keepdim)
    return delivered(result, out)


@param_aliases({"ord": "p", "dim": "axis"})
@accumulates_in_float32
def vector_norm(x: Tensor, p: float = 2.0, axis: Union[int, Sequence[int], None] = None, keepdim: bool = False,
                name: Optional[str] = None, *, dtype: DTypeLike = None, out: Optional[Tensor] = None) -> Tensor:
    """The vector p-norm of x over `axis` (None: all of x; several axes: over them together,
    two included, where ``norm`` would take a matrix norm). p = 0 counts the non-zeros, p = +-inf
    is max/min |x|; `dtype` and `out` as for ``norm``."""
    x = _floating(x, dtype, "vector_norm", complex_ok=True)
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise TypeError(f"vector_norm: p must be a number, got {type(p).__name__}")
    return delivered(_vector_norm(x, float(p), axis, keepdim), out)


@accumulates_in_float32
def matrix_norm(x: Tensor, p: Union[float, str] = "fro", axis: Sequence[int] = (-2, -1), keepdim: bool = False,
                name: Optional[str] = None) -> Tensor:
    """The matrix norm of x over the two axes in `axis` (rows first): p 'fro', 'nuc', 1, -1,
    2, -2, inf or -inf."""
    x = _floating(x, None, "matrix_norm", complex_ok=True)
    if x.ndim < 2:
        raise ValueError(f"matrix_norm: x must have at least 2 dimensions (matrices), got shape {x.shape}")
    return _matrix_norm(x, p, axis, keepdim)


def _floating(x: Any, dtype: DTypeLike, fn: str, complex_ok: bool = False) -> Tensor:
    """x as a Tensor, cast to `dtype` when given; TypeError unless it holds floating-point numbers
    (or complex ones, where `complex_ok`)."""
    x = as_tensor(x)
    if dtype is not None:
        x = math_ops.cast(x, dtype)
    return require_floating(x, fn, complex_ok=complex_ok)


def _vector_norm(x: Tensor, p: float, axis: Any, keepdim: bool) -> Tensor:
    """(sum |x|^p)^(1/p) over `axis`; p = 0 counts the non-zeros, p = +-inf is max/min |x|."""
    axes = reduction_axes(axis, x.ndim, "norm")
    x, = placed("norm", x, axes=() if p == 1 else axes)  # auto-parallel: a 1-norm is a sum of the pieces'
    a = x._array
    xp = array_module(a)
    kept = kept_shape(a.shape, axes)
    mag = xp.abs(a)  # a complex x's norm is real, of its magnitudes (paddle's)
    if p == 0:
        full = (a != 0).sum(axis=axes, keepdims=True).astype(mag.dtype)
    elif math.isinf(p):
        full = (mag.max if p > 0 else mag.min)(axis=axes, keepdims=True)
    else:
        with _quiet():  # a negative p meets a zero: inf, whose inverse is 0; |x| ** p past the range: inf
            full = ((mag ** p).sum(axis=axes, keepdims=True) ** (1.0 / p)).astype(mag.dtype, copy=False)

    def backward(g: Any) -> tuple:
        g = g.reshape(kept)
        if p == 0:
            return (xp.zeros_like(a),)
        if math.isinf(p):  # every element at the max (min) gets the whole gradient, as in paddle
            return (g * xp.sign(a) * (mag == full),)
        # paddle's NaN where p < 1 meets a zero (the backward walk runs with NumPy's warnings off)
        return ((mag ** (p - 1) * xp.sign(a) * g * (full + _EPS) ** (1 - p)).astype(a.dtype, copy=False),)
    backward.__pycoll_op__ = {"name": "norm", "axes": axes, "p": p}  # type: ignore[attr-defined]  # for placements
    return op_output(full if keepdim else full.reshape(_dropped(a.shape, axes)), backward, x)


def _dropped(shape: Sequence[int], axes: Optional[Tuple[int, ...]]) -> Tuple[int, ...]:
    return tuple(n for i, n in enumerate(shape) if axes is not None and i not in axes)


def _matrix_norm(x: Tensor, p: Union[float, str], axis: Any, keepdim: bool) -> Tensor:
    """A matrix norm over the two axes in `axis` (the rows' axis first)."""
    axes = normalize_axes(axis, x.ndim) if isinstance(axis, (list, tuple)) else None
    if axes is None or len(axes) != 2 or axes[0] == axes[1]:
        raise ValueError(f"norm: a matrix norm needs two different axes, got axis={axis!r} for x of "
                         f"shape {x.shape}")
    rows, cols = axes
    if p == "fro":
        return _vector_norm(x, 2.0, list(axes), keepdim)
    if p in (1, -1, math.inf, -math.inf):
        # 1: the largest column sum of |x|, inf: the largest row sum (-1, -inf: the smallest)
        summed, picked = (rows, cols) if abs(p) == 1 else (cols, rows)
        sums = math_ops.sum(math_ops.abs(x), axis=summed, keepdim=True)
        full = (math_ops.max if p > 0 else math_ops.min)(sums, axis=picked, keepdim=True)
        return full if keepdim else shape_ops.reshape(full, list(_dropped(x.shape, axes)))
    if p in (2, -2, "nuc"):
        return _singular_norm(x, p, axes, keepdim)
    raise ValueError(f"norm: a matrix norm takes p 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {p!r}")


def _singular_norm(x: Tensor, p: Union[float, str], axes: Tuple[int, ...], keepdim: bool) -> Tensor:
    """The largest (p=2) or smallest (p=-2) singular value, or their sum ('nuc'); gradients
    u v^T of the singular vectors involved."""
    x, = placed("_singular_norm", x, axes=axes)  # auto-parallel: the matrices made whole
    a = x._array
    xp = array_module(a)
    rest = [i for i in range(a.ndim) if i not in axes]
    perm = rest + list(axes)
    inverse = list(np.argsort(perm))
    u, s, vh = xp.linalg.svd(a.transpose(perm), full_matrices=False)
    if p == "nuc":
        value, direction = s.sum(axis=-1), u @ vh
    else:
        k = 0 if p == 2 else s.shape[-1] - 1  # s comes sorted, largest first
        value, direction = s[..., k], u[..., :, k:k + 1] @ vh[..., k:k + 1, :]
    kept = kept_shape(a.shape, axes)
    value = value.astype(s.dtype, copy=False)  # a complex x's singular values are real (x's own dtype otherwise)

    def backward(g: Any) -> tuple:
        g = g.reshape(kept).transpose(perm)
        return ((g * direction).transpose(inverse).astype(a.dtype, copy=False),)
    return op_output(value.reshape(kept) if keepdim else value, backward, x)


Tensor.norm = norm


@param_aliases({"dim": "axis"})
def cross(x: Any, y: Any, axis: int = 9, name: Optional[str] = None) -> Tensor:
    """The 3-D cross product along `axis` (paddle's default 9: the first axis of size 3)."""
    x, y = as_tensor(x), as_tensor(y)
    if axis == 9:
        sizes = [i for i, n in enumerate(x.shape) if n == 3]
        if not sizes:
            raise ValueError(f"cross: x has no axis of size 3, got shape {x.shape}")
        ax = sizes[0]
    else:
        ax = normalize_axes(axis, x.ndim)[0]
    if x.shape[ax] != 3 or y.ndim != x.ndim or y.shape[ax] != 3:
        raise ValueError(f"cross: x and y need size 3 along axis {ax}, got shapes {x.shape} and {y.shape}")
    xa, ya = x._array, y._array
    xp = array_module(xa)

    def backward(g: Any) -> tuple:  # d(x × y) = dx × y + x × dy
        return (shape_ops.unbroadcast(xp.cross(ya, g, axis=ax), xa.shape), shape_ops.unbroadcast(xp.cross(g, xa, axis=ax), ya.shape))
    return op_output(xp.cross(xa, ya, axis=ax), backward, x, y)
