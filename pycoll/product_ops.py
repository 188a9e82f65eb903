"""Products and distances: mm, mv, dot, outer, inner, kron, tensordot, addmm, cdist, pdist, dist
and add_n (also Tensor methods, with pycoll.linalg's cross). They are compositions of differentiable
ops (matmul, multiply, reshape, transpose, vector norms), which give them their gradients."""
from __future__ import annotations

import itertools
from typing import Any, List, Optional, Sequence, Tuple

from pycoll import linalg
from pycoll._param_aliases import param_aliases
from pycoll.linalg import cross  # noqa: F401 - paddle.cross, and the Tensor method below
from pycoll._promotion import accumulates_in_float32, cast_to, common_half
from pycoll.dtypes import float32
from pycoll._tensor_ops import as_tensor, normalize_axes, untraced
from pycoll.device import array_module
from pycoll.math_ops import add, matmul, multiply, subtract, sum as _sum
from pycoll.shape_ops import reshape, transpose
from pycoll.tensor import Tensor, wrap


def _matrices(x: Any, y: Any) -> Tuple[Tensor, Tensor]:
    return as_tensor(x), as_tensor(y)


def mm(input: Any, mat2: Any, name: Optional[str] = None) -> Tensor:  # noqa: A002 - paddle's name
    """The matrix product (``matmul``, batched as NumPy's)."""
    return matmul(*_matrices(input, mat2))


def mv(x: Any, vec: Any, name: Optional[str] = None) -> Tensor:
    """A [m, n] matrix times a [n] vector."""
    x, vec = _matrices(x, vec)
    if x.ndim != 2 or vec.ndim != 1 or x.shape[1] != vec.shape[0]:
        raise ValueError(f"mv: x must be [m, n] and vec [n], got shapes {x.shape} and {vec.shape}")
    return matmul(x, vec)


@param_aliases({"input": "x"})
@accumulates_in_float32
def dot(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """The dot product of two 1-D tensors, or of the rows of two 2-D ones, in their dtype (an
    int32 one's too, where a sum would widen it: paddle's)."""
    x, y = _matrices(x, y)
    if x.shape != y.shape or x.ndim not in (1, 2):
        raise ValueError(f"dot: x and y must be 1-D or 2-D of one shape, got {x.shape} and {y.shape}")
    products = multiply(x, y)
    return _sum(products, axis=-1, dtype=products.dtype)


@param_aliases({"input": "x", "vec2": "y"})
def outer(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """x[i] * y[j] for x and y flattened: a [x.size, y.size] tensor."""
    x, y = _matrices(x, y)
    return multiply(reshape(x, [-1, 1]), reshape(y, [1, -1]))


def _axes_pair(axes: Any, xdim: int, ydim: int) -> Tuple[List[int], List[int]]:
    """tensordot's axes: an int n (x's last n with y's first n), a flat list (the same axes of
    both), or a pair of lists."""
    if hasattr(axes, "tolist"):
        axes = axes.tolist()
    if isinstance(axes, int):
        if not 0 <= axes <= min(xdim, ydim):
            raise ValueError(f"tensordot: axes must be in [0, {min(xdim, ydim)}], got {axes}")
        return list(range(xdim - axes, xdim)), list(range(axes))
    axes = list(axes)
    if axes and all(isinstance(a, int) for a in axes):
        xa, ya = axes, axes
    elif len(axes) in (1, 2) and all(isinstance(a, (list, tuple)) for a in axes):
        xa = list(axes[0])
        ya = list(axes[1]) if len(axes) == 2 else xa
        if len(ya) < len(xa):  # paddle pairs the extra axes of x with the same axes of y
            ya = ya + xa[len(ya):]
    else:
        raise ValueError(f"tensordot: axes must be an int, a list of ints or two lists of ints, got {axes!r}")
    return list(normalize_axes(xa, xdim) or ()), list(normalize_axes(ya, ydim) or ())


def tensordot(x: Any, y: Any, axes: Any = 2, name: Optional[str] = None) -> Tensor:
    """The sum over the paired `axes` of x and y of their product; the result has x's other
    dimensions, then y's."""
    x, y = _matrices(x, y)
    xa, ya = _axes_pair(axes, x.ndim, y.ndim)
    for i, j in zip(xa, ya):
        if x.shape[i] != y.shape[j]:
            raise ValueError(f"tensordot: x's axis {i} (size {x.shape[i]}) and y's axis {j} (size {y.shape[j]}) "
                             f"must have the same size")
    xr = [i for i in range(x.ndim) if i not in xa]
    yr = [j for j in range(y.ndim) if j not in ya]
    k = 1
    for i in xa:
        k *= x.shape[i]
    left = reshape(transpose(x, xr + xa), [-1, k])
    right = reshape(transpose(y, ya + yr), [k, -1])
    return reshape(matmul(left, right), [x.shape[i] for i in xr] + [y.shape[j] for j in yr])


def inner(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """The sum over the last dimension of x times y: x's other dimensions, then y's."""
    x, y = _matrices(x, y)
    if x.ndim == 0 or y.ndim == 0:
        return multiply(x, y)
    return tensordot(x, y, [[x.ndim - 1], [y.ndim - 1]])


def kron(x: Any, y: Any, name: Optional[str] = None) -> Tensor:
    """The Kronecker product: block (i, j, ...) is x[i, j, ...] * y."""
    x, y = _matrices(x, y)
    n = max(x.ndim, y.ndim)
    xs = [1] * (n - x.ndim) + x.shape
    ys = [1] * (n - y.ndim) + y.shape
    spread_x = reshape(x, [d for s in xs for d in (s, 1)])
    spread_y = reshape(y, [d for s in ys for d in (1, s)])
    return reshape(multiply(spread_x, spread_y), [a * b for a, b in zip(xs, ys)])


def addmm(input: Any, x: Any, y: Any, beta: float = 1.0, alpha: float = 1.0,  # noqa: A002
          name: Optional[str] = None) -> Tensor:
    """beta * input + alpha * (x @ y), input broadcast to the product's shape."""
    x, y = _matrices(x, y)
    if x.ndim != 2 or y.ndim != 2:
        raise ValueError(f"addmm: x and y must be 2-D, got shapes {x.shape} and {y.shape}")
    return add(multiply(as_tensor(input), beta), multiply(matmul(x, y), alpha))


@accumulates_in_float32
def cdist(x: Any, y: Any, p: float = 2.0, compute_mode: str = "use_mm_for_euclid_dist_if_necessary",
          name: Optional[str] = None) -> Tensor:
    """The p-norm distances between the rows of x [..., m, d] and of y [..., n, d]: [..., m, n]
    (computed directly, whatever `compute_mode` says)."""
    x, y = _matrices(x, y)
    if x.ndim < 2 or y.ndim < 2 or x.shape[-1] != y.shape[-1]:
        raise ValueError(f"cdist: x and y must be [..., m, d] and [..., n, d], got {x.shape} and {y.shape}")
    rows = reshape(x, x.shape[:-1] + [1, x.shape[-1]])
    cols = reshape(y, y.shape[:-2] + [1] + y.shape[-2:])
    return linalg.vector_norm(subtract(rows, cols), p=float(p), axis=-1)


def pdist(x: Any, p: float = 2.0, name: Optional[str] = None) -> Tensor:
    """The p-norm distances between every pair of rows i < j of x [N, M], in row-major order:
    a 1-D tensor of N (N - 1) / 2 entries."""
    x = as_tensor(x)
    if x.ndim != 2:
        raise ValueError(f"pdist: x must be 2-D [N, M], got shape {x.shape}")
    if isinstance(p, bool) or not isinstance(p, (int, float)) or p < 0:
        raise ValueError(f"pdist: p must be a non-negative number, got {p!r}")
    n = x.shape[0]
    first, second = (list(ix) for ix in zip(*itertools.combinations(range(n), 2))) if n > 1 else ([], [])
    xp = array_module(x._array)
    rows = subtract(x[xp.asarray(first, dtype="int64")], x[xp.asarray(second, dtype="int64")])
    return linalg.vector_norm(rows, p=float(p), axis=-1)


@accumulates_in_float32
def dist(x: Any, y: Any, p: float = 2, name: Optional[str] = None) -> Tensor:
    """The p-norm of x - y (broadcast): p = 0 counts the non-zeros, +-inf is max/min |x - y|."""
    return linalg.vector_norm(subtract(as_tensor(x), as_tensor(y)), p=float(p))


def add_n(inputs: Any, name: Optional[str] = None) -> Tensor:
    """The sum of a tensor or a list of tensors of one shape. float16 and bfloat16 tensors are
    summed in float32 and rounded once, as paddle's kernel does (in their own precision a running
    sum stalls: 2048 + 1 is 2048 in float16)."""
    items: Sequence[Any] = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if not items:
        raise ValueError("add_n: inputs must hold at least one tensor")
    half = common_half(tuple(items))
    if half is not None and len(items) > 1:
        return cast_to(add_n([cast_to(t, float32) for t in items]), half)
    summed = _summed_alone(items)
    if summed is not None:
        return summed
    total = as_tensor(items[0])
    for t in items[1:]:
        total = add(total, as_tensor(t))
    return total if len(items) > 1 else multiply(total, 1)


def _summed_alone(items: Sequence[Any]) -> Optional[Tensor]:
    """add_n of Tensors of one shape, dtype and array module that take no gradient, summed in one
    buffer (no op per pair: 1000 small tensors went 17x slower than paddle); None otherwise."""
    if len(items) < 3 or not all(isinstance(t, Tensor) for t in items) or not untraced(items):
        return None
    first = items[0]._array
    xp = array_module(first)
    device = getattr(first, "device", None)
    if any(t._array.shape != first.shape or t._array.dtype != first.dtype or array_module(t._array) is not xp
           or getattr(t._array, "device", None) != device for t in items):
        return None
    total = first + items[1]._array
    for t in items[2:]:
        total += t._array
    return wrap(total)


for _fn in (mm, mv, dot, outer, inner, kron, cross, tensordot, addmm, cdist, dist, add_n):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
