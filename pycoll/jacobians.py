"""``pycoll.autograd.jacobian`` and ``hessian`` (paddle.autograd's): Jacobian and Hessian matrices
evaluated lazily, a row at a time, when indexed.

A `Jacobian` of ys [M] by xs [N] is the matrix [M, N] (``batch_axis=0``: [B, M, N] for ys [B, M]
and xs [B, N]; a 0-D ys or xs counts as one element, a 1-D batched one as one feature). Indexing
it with ints and slices (no Ellipsis) computes only the rows it needs — each one
``pycoll.grad(row, xs, create_graph=True)``, so the results can be differentiated again — and
keeps them for later indexing. Any other use (``J.numpy()``, ``J + 1``, ``J.shape`` aside)
works on the whole matrix. A `Hessian` is the Jacobian of the Jacobian of a one-element ys.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple, Union

from pycoll.grad_ops import grad
from pycoll.creation import zeros_like
from pycoll.shape_ops import concat, reshape, squeeze, stack
from pycoll.tensor import Tensor

TensorOrTensors = Union[Tensor, Sequence[Tensor]]


class Jacobian:
    """The Jacobian of `ys` by `xs` (Tensors, or a sequence of xs whose flattened Jacobians are
    side by side); ``is_batched``: axis 0 of both is a batch axis. See the module docstring."""

    def __init__(self, ys: Any, xs: TensorOrTensors, is_batched: bool = False, any_shape: bool = False):
        """`any_shape`: ys and xs of any shape, flattened (paddle.incubate.autograd's Jacobian);
        else paddle.autograd's rule, 0-D or 1-D (1-D or 2-D batched)."""
        if isinstance(ys, Jacobian):  # a Hessian's rows: the Jacobian as its shape says
            ys = reshape(ys._whole(), ys.shape)
        self.is_batched = is_batched
        first = xs[0] if isinstance(xs, (list, tuple)) else xs
        low, high = (1, 2) if is_batched else (0, 1)
        for name, t in (("xs", first), ("ys", ys)) if not any_shape else ():  # xs first, as paddle checks
            if not low <= t.ndim <= high:
                raise ValueError(f"jacobian: {name}.ndim should be {low} or {high} when "
                                 f"{'batch_axis=0' if is_batched else 'batch_axis is None'}, but got {t.ndim}")
        self._xs = xs
        self._ys_shape = list(ys.shape)
        self._xs_shape = list(first.shape)
        self._rows = _flat(ys, is_batched)
        cols = sum(_flat(x, is_batched).shape[-1] for x in (xs if isinstance(xs, (list, tuple)) else [xs]))
        if is_batched:
            self._inner = [self._rows.shape[0], self._rows.shape[1], cols]
            self.shape = list(self._inner) if any_shape else [self._inner[0]] + self._ys_shape[1:2] + self._xs_shape[1:2]
        else:
            self._inner = [self._rows.shape[0], cols]
            self.shape = list(self._inner) if any_shape else self._ys_shape[0:1] + self._xs_shape[0:1]
        self._lazy_axis = 1 if is_batched else 0
        self._cache: Dict[int, Tensor] = {}

    def _row(self, k: int) -> Tensor:
        """Row k of the inner matrix: the gradient of output k (of every batch entry) by xs."""
        if k not in self._cache:
            y = self._rows[:, k] if self.is_batched else self._rows[k]
            xs = list(self._xs) if isinstance(self._xs, (list, tuple)) else [self._xs]
            grads = grad(y, xs, create_graph=True, retain_graph=True, allow_unused=True)
            grads = [_zeros_as(x) if g is None else g for g, x in zip(grads, xs)]
            parts = [_flat(g, self.is_batched) for g in grads]
            self._cache[k] = parts[0] if len(parts) == 1 else concat(parts, axis=-1)
        return self._cache[k]

    def __getitem__(self, index: Any) -> Tensor:
        index = self._full_index(index)
        before, lazy, after = index[:self._lazy_axis], index[self._lazy_axis], index[self._lazy_axis + 1:]
        if isinstance(lazy, int):
            return self._row(lazy)[before + after]
        rows = range(*lazy.indices(self._inner[self._lazy_axis]))
        if not rows:
            raise IndexError(f"jacobian: the index selects no rows along axis {self._lazy_axis}")
        part = stack([self._row(k) for k in rows], axis=self._lazy_axis)
        out = part[before + (slice(None),) + after]
        while out.ndim > len(self.shape) and out.shape[-1] == 1:  # a 0-D xs is one column of the inner matrix
            out = squeeze(out, -1)
        return out

    def _full_index(self, index: Any) -> Tuple[Any, ...]:
        """`index` as one int or slice per axis of the inner matrix (paddle's rules for 0-D and
        1-D shapes), negative ints counted from the end."""
        if len(self.shape) == 0:
            raise IndexError("jacobian: the Jacobian of a 0-D ys by a 0-D xs has no axis to index; "
                             "read it whole (J.numpy(), J + 0)")
        if not self.is_batched and len(self.shape) == 1:
            index = (0, index) if len(self._ys_shape) == 0 else (index, 0)
        elif self.is_batched and len(self.shape) == 1:
            index = (index, 0, 0)
        elif self.is_batched and len(self.shape) == 2:
            if isinstance(index, slice):  # paddle's: J[:] keeps the one-element axis, [B, 1, N] or [B, M, 1]
                index = (index, slice(None))
            else:
                index = (index[0], 0, index[1]) if len(self._ys_shape) == 1 else (index[0], index[1], 0)
        index = index if isinstance(index, tuple) else (index,)
        if any(i is Ellipsis for i in index):
            raise IndexError("jacobian: Ellipsis indexing is not supported (nor by paddle)")
        if len(index) > len(self._inner):
            raise IndexError(f"jacobian: too many indices ({len(index)}) for a matrix of shape {self.shape}")
        index = index + (slice(None),) * (len(self._inner) - len(index))
        out = []
        for i, n in zip(index, self._inner):
            if isinstance(i, bool) or not isinstance(i, (int, slice)):
                raise TypeError(f"jacobian: indices must be ints or slices, got {i!r}")
            if isinstance(i, int):
                if not -n <= i < n:
                    raise IndexError(f"jacobian: index {i} is out of range for an axis of size {n}")
                i %= n
            out.append(i)
        return tuple(out)

    def _whole(self) -> Tensor:
        if len(self.shape) == 0:
            return reshape(self._row(0), [])
        return self[:]

    def numpy(self) -> Any:
        return self._whole().numpy()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._whole(), name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(shape={self.shape}, rows evaluated={len(self._cache)})"


def _binary(op: str) -> Any:
    def method(self: Jacobian, other: Any) -> Any:
        return getattr(self._whole(), op)(other._whole() if isinstance(other, Jacobian) else other)
    method.__name__ = op
    return method


for _op in ("__add__", "__sub__", "__mul__", "__truediv__", "__pow__", "__mod__", "__floordiv__", "__matmul__",
            "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__radd__", "__rsub__", "__rmul__",
            "__rtruediv__", "__neg__"):
    setattr(Jacobian, _op, _binary(_op) if _op != "__neg__" else (lambda self: -self._whole()))
del _op
Jacobian.__hash__ = object.__hash__  # type: ignore[assignment]  # __eq__ compares values


class Hessian(Jacobian):
    """The Jacobian of a one-element ys' Jacobian (see `hessian`)."""


def _zeros_as(x: Tensor) -> Tensor:
    """The gradient of an input a row does not reach: zeros taking x's stop_gradient (paddle's),
    so a loss built of such entries still backpropagates (to nothing)."""
    z = zeros_like(x)
    z.stop_gradient = x.stop_gradient
    return z


def _flat(t: Tensor, batched: bool) -> Tensor:
    """t as a vector, or [B, -1] when batched (a 1-D batched t is B entries of one feature)."""
    return reshape(t, [t.shape[0], -1] if batched else [-1])


def _batch_axis(batch_axis: Optional[int]) -> bool:
    if batch_axis is not None and (isinstance(batch_axis, bool) or batch_axis != 0):
        raise ValueError(f"batch_axis should be None or 0, but got {batch_axis!r}")
    return batch_axis is not None


def jacobian(ys: Any, xs: TensorOrTensors, batch_axis: Optional[int] = None) -> Any:
    """The Jacobian(s) of ys by xs (paddle.autograd.jacobian): one `Jacobian` for a Tensor ys and
    a Tensor xs, a tuple over whichever of them is a sequence, a tuple of tuples (ys outer) when
    both are."""
    batched = _batch_axis(batch_axis)
    many_ys, many_xs = isinstance(ys, (list, tuple)), isinstance(xs, (list, tuple))
    if many_ys and many_xs:
        return tuple(tuple(Jacobian(y, x, batched) for x in xs) for y in ys)
    if many_ys:
        return tuple(Jacobian(y, xs, batched) for y in ys)
    if many_xs:
        return tuple(Jacobian(ys, x, batched) for x in xs)
    return Jacobian(ys, xs, batched)


def hessian(ys: Tensor, xs: TensorOrTensors, batch_axis: Optional[int] = None) -> Any:
    """The Hessian(s) of a one-element ys (one per batch entry with ``batch_axis=0``) by xs
    (paddle.autograd.hessian): a `Hessian` [N, N] ([B, N, N]), or for a sequence of xs the tuple of
    tuples of every pair's block."""
    batched = _batch_axis(batch_axis)
    if not isinstance(ys, Tensor):
        raise TypeError(f"hessian: ys must be a Tensor, got {type(ys).__name__}")
    if batched:
        if ys.ndim == 0 or ys[0].size > 1:
            raise ValueError(f"hessian: ys must hold one element per batch entry when batch_axis=0, got "
                             f"shape {ys.shape}")
        ys = reshape(ys, [-1])
    else:
        if ys.size > 1:
            raise ValueError(f"hessian: ys must hold one element when batch_axis is None, got shape {ys.shape}")
        ys = reshape(ys, [])
    first = jacobian(ys, xs, batch_axis)
    if not isinstance(xs, (list, tuple)):
        out = Jacobian(first, xs, batched)
        out.__class__ = Hessian
        return out
    blocks = tuple(tuple(Jacobian(j, x, batched) for x in xs) for j in first)
    for row in blocks:
        for block in row:
            block.__class__ = Hessian
    return blocks

