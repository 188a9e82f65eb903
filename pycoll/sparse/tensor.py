"""`SparseTensor`: a `pycoll.Tensor` whose storage is paddle's COO or CSR description.

COO: ``indices`` (int64, ``[sparse_dim, nnz]``) and ``values`` (``[nnz, *dense_dims]``).
CSR: ``crows`` (int64, ``rows + 1`` per batch, each batch starting at 0), ``cols`` (int64,
``[nnz]``) and ``values`` (``[nnz]``), for 2-D and batched 3-D shapes, as paddle's.

Autograd runs on the values: a sparse tensor takes part in the graph as its values array does
(`seed_grad` / `finish_grad` speak of values-shaped gradients), so a sparse op is a dense,
differentiable op on ``values()`` whose result is put back into a sparse description
(`with_values`, `new_coo`). A leaf's ``.grad`` is a sparse tensor of the leaf's own pattern,
as paddle's is.

A sparse tensor has no dense array: the dense ops, which all read ``x._array``, refuse it with a
TypeError that says so (use ``to_dense()`` or `pycoll.sparse`'s ops).
"""
from __future__ import annotations

from typing import Any, Optional, Tuple

import numpy as np

from pycoll._printing import format_body
from pycoll._tensor_ops import op_output
from pycoll.device import PlaceObject, array_module, place_of, to_module
from pycoll.size import Size, TensorSize, size_of, tensor_size
from pycoll.tensor import Tensor, run_grad_hooks

COO, CSR = "coo", "csr"


class SparseTensor(Tensor):
    """A sparse COO or CSR tensor (see the module docstring); made by `pycoll.sparse`'s
    creation functions and by ``Tensor.to_sparse_coo`` / ``to_sparse_csr``."""

    __slots__ = ("_format", "_indices", "_crows", "_cols", "_values", "_dense_shape", "_coalesced")

    @property
    def _array(self) -> Any:
        raise TypeError(f"this op takes dense tensors; it got a sparse {self._format.upper()} tensor of shape "
                        f"{list(self._dense_shape)}: convert it with to_dense(), or use pycoll.sparse's ops")

    # ---- what it is ----------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return size_of(self._dense_shape)

    @property
    def dtype(self) -> np.dtype:
        return self._values.dtype

    @property
    def ndim(self) -> int:
        return len(self._dense_shape)

    @property
    def size(self) -> TensorSize:
        """The number of elements of its dense shape (paddle's ``size``), stored or not."""
        return tensor_size(self._dense_shape, int(np.prod(self._dense_shape)))

    def is_contiguous(self) -> bool:
        return True  # (paddle's answer for a sparse tensor)

    def cpu(self) -> "SparseTensor":
        """On the host: itself, or a copy of its parts there (the values' gradient flows back)."""
        if isinstance(self._values, np.ndarray):
            return self
        values = self.values().cpu()
        t = _blank(self._format, self._dense_shape, values._array)
        t._indices, t._crows, t._cols = (None if a is None else to_module(a, np)
                                         for a in (self._indices, self._crows, self._cols))
        t._coalesced = self._coalesced
        return _adopt(t, values)

    @property
    def place(self) -> PlaceObject:
        return PlaceObject(place_of(self._values))

    def is_dense(self) -> bool:
        return False

    def is_sparse(self) -> bool:
        return True

    def is_sparse_coo(self) -> bool:
        return self._format == COO

    def is_sparse_csr(self) -> bool:
        return self._format == CSR

    def is_coalesced(self) -> bool:
        return self._format == CSR or self._coalesced

    def nnz(self) -> int:
        """How many entries are stored."""
        return int(self._values.shape[0])

    def sparse_dim(self) -> int:
        return int(self._indices.shape[0]) if self._format == COO else len(self._dense_shape)

    def dense_dim(self) -> int:
        return len(self._dense_shape) - self.sparse_dim()

    # ---- its parts -----------------------------------------------------------------------------
    def _need(self, fmt: str, what: str) -> None:
        if self._format != fmt:
            raise TypeError(f"{what}() is a sparse {fmt.upper()} tensor's; this one is {self._format.upper()}")

    def indices(self) -> Tensor:
        """The COO indices, ``[sparse_dim, nnz]`` int64 (no gradient)."""
        self._need(COO, "indices")
        return _plain(self._indices)

    def crows(self) -> Tensor:
        """The CSR row offsets (no gradient)."""
        self._need(CSR, "crows")
        return _plain(self._crows)

    def cols(self) -> Tensor:
        """The CSR column of each stored entry (no gradient)."""
        self._need(CSR, "cols")
        return _plain(self._cols)

    def values(self) -> Tensor:
        """The stored values, a dense tensor in the graph: its gradient is this tensor's."""
        return op_output(self._values, lambda g: (g,), self)

    def detach(self) -> "SparseTensor":
        return pattern_like(self, self._values)

    # ---- autograd (the graph's GraphTensor protocol, on values-shaped arrays) -------------------
    def seed_grad(self, grad_tensor: Any) -> Any:
        g = grad_tensor._values if isinstance(grad_tensor, SparseTensor) else grad_tensor
        return self._seed_like(self._values, g, f"grad_tensor must hold the sparse tensor's "
                                                f"{list(self._values.shape)} values")

    def finish_grad(self, grad: Any, owned: bool) -> None:
        """Accumulate a values-shaped gradient into ``.grad``, a sparse tensor of this pattern."""
        if grad is not None:
            hooks = self.__dict__.get("_grad_hooks")  # register_hook's, on the values' gradient
            if hooks:
                hooked = run_grad_hooks(hooks, grad)
                grad, owned = hooked, owned and hooked is grad
            if grad.dtype != self._values.dtype:
                grad = grad.astype(self._values.dtype)
            if self._grad is None:
                self._grad = pattern_like(self, grad if owned else grad.copy())
                self._grad.stop_gradient = False
            else:
                self._grad._values = self._grad._values + grad
        for hook in list((self._ready_hooks or {}).values()):
            hook(self)

    def clear_gradient(self, set_to_zero: bool = True) -> None:
        if self._grad is None:
            return
        if set_to_zero:
            self._grad._values = array_module(self._values).zeros_like(self._values)
        else:
            self._grad = None

    clear_grad = clear_gradient

    # ---- printing --------------------------------------------------------------------------------
    def __repr__(self) -> str:
        head = (f"Tensor(shape={list(self._dense_shape)}, dtype={self.dtype}, place={self.place}, "
                f"stop_gradient={self.stop_gradient}, \n")
        parts = (("indices", self._indices),) if self._format == COO else (("crows", self._crows),
                                                                           ("cols", self._cols))
        parts += (("values", self._values),)
        body = []
        for name, arr in parts:
            indent = 8 + len(name)
            body.append(" " * 7 + f"{name}=" + format_body(to_module(arr, np), indent))
        return head + ", \n".join(body) + ")"


def _plain(array: Any) -> Tensor:
    from pycoll.tensor import wrap
    return wrap(array)


def _blank(fmt: str, shape: Tuple[int, ...], values: Any) -> SparseTensor:
    t = object.__new__(SparseTensor)
    t.stop_gradient = True
    t._grad = None
    t.grad_node = None
    t.output_index = 0
    t._ready_hooks = None
    t.name = None
    t._inplace_version = 0
    t._format = fmt
    t._indices = t._crows = t._cols = None
    t._values = values
    t._dense_shape = tuple(int(s) for s in shape)
    t._coalesced = False
    return t


def pattern_like(x: SparseTensor, values: Any) -> SparseTensor:
    """x's pattern with other values (an array), outside the graph."""
    t = _blank(x._format, x._dense_shape, values)
    t._indices, t._crows, t._cols, t._coalesced = x._indices, x._crows, x._cols, x._coalesced
    return t


def _adopt(t: SparseTensor, values: Tensor) -> SparseTensor:
    """t takes the graph position of `values` (the dense tensor its values were computed as)."""
    t.stop_gradient = values.stop_gradient
    t.grad_node = values.grad_node
    t.output_index = values.output_index
    return t


def with_values(x: SparseTensor, values: Tensor) -> SparseTensor:
    """x's pattern holding `values` (a dense Tensor of x's values' leading length), in its graph."""
    return _adopt(pattern_like(x, values._array), values)


def new_coo(indices: Any, values: Tensor, shape: Tuple[int, ...], coalesced: bool = False) -> SparseTensor:
    """A COO tensor over the int64 array `indices` and the dense Tensor `values`, in its graph."""
    t = _blank(COO, shape, values._array)
    t._indices = indices
    t._coalesced = coalesced
    return _adopt(t, values)


def new_csr(crows: Any, cols: Any, values: Tensor, shape: Tuple[int, ...]) -> SparseTensor:
    """A CSR tensor over int64 `crows` / `cols` arrays and the dense Tensor `values`, in its graph."""
    t = _blank(CSR, shape, values._array)
    t._crows, t._cols = crows, cols
    return _adopt(t, values)


def sparse_arg(x: Any, fn: str, arg: str = "x", fmt: Optional[str] = None) -> SparseTensor:
    """x, checked to be a sparse tensor (of format `fmt` when given)."""
    if not isinstance(x, SparseTensor):
        raise TypeError(f"{fn}: {arg} must be a sparse tensor (COO or CSR), got "
                        f"{'a dense Tensor' if isinstance(x, Tensor) else type(x).__name__}")
    if fmt is not None and x._format != fmt:
        raise TypeError(f"{fn}: {arg} must be a sparse {fmt.upper()} tensor, got a {x._format.upper()} one")
    return x
