"""What a pycoll Tensor answers to paddle's questions about its kind and storage: it is always a
dense tensor (``is_dense()`` True, ``is_sparse()`` / ``is_sparse_coo()`` / ``is_sparse_csr()``
False, ``layout``, ``dense_dim()``, ``sparse_dim()`` 0, ``type`` DENSE_TENSOR, ``num_shard``
None; ``nnz()`` and ``values()`` are sparse tensors' and refused), ``offset`` (bytes from the
start of its memory), ``get_device()``, ``value()``, ``pin_memory()``, ``grad_fn`` / ``grad_``,
and paddle's ``apply`` / ``apply_`` (a function run on a tensor outside autograd)."""
from __future__ import annotations

import enum
from typing import Any, Callable

import numpy as np

from pycoll.device import place_of
from pycoll.inplace_ops import LeafInplaceError, in_place
from pycoll.tensor import Tensor


class VarType(enum.IntEnum):
    """paddle's ``VarDesc.VarType`` member that a dense tensor's ``type`` is (paddle's number)."""
    DENSE_TENSOR = 7

    def __str__(self) -> str:
        return f"VarType.{self.name}"


def _sparse_only(what: str) -> Callable[[Tensor], Any]:
    def refuse(x: Tensor) -> Any:
        raise TypeError(f"{what}() is a sparse tensor's (COO or CSR); this tensor is dense (make a sparse "
                        f"one with to_sparse_coo() / to_sparse_csr() or pycoll.sparse)")
    refuse.__name__ = refuse.__qualname__ = what
    return refuse


def offset(x: Tensor) -> int:
    """How many bytes x's first element lies past the start of the memory it views (0 unless x is
    a view such as ``y[1]``)."""
    a = x._array
    if isinstance(a, np.ndarray):
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
        return int(a.__array_interface__["data"][0] - root.__array_interface__["data"][0])
    return int(a.data.ptr - a.data.mem.ptr)


def get_device(x: Tensor) -> int:
    """The GPU's id for a GPU tensor, -1 for a host one (paddle's answer for CPU tensors)."""
    kind, index = place_of(x._array)
    return index if kind == "gpu" else -1


def pin_memory(x: Tensor, blocking: bool = True) -> Tensor:
    """x in host memory (a GPU tensor copied back; a host tensor itself). pycoll has no
    page-locked place of its own: NumPy arrays are ordinary host memory."""
    return x.cpu()


def _refuse_grad(x: Tensor, fn: str) -> None:
    if not x.stop_gradient:
        raise LeafInplaceError(f"{fn}: cannot apply a function on a tensor that takes a gradient "
                               f"(stop_gradient=False); detach it or set stop_gradient=True")


def apply(x: Tensor, func: Callable[[Tensor], Tensor]) -> Tensor:
    """``func(x)``, for a tensor that takes no gradient (as paddle refuses the others)."""
    _refuse_grad(x, "apply")
    return func(x)


def apply_(x: Tensor, func: Callable[[Tensor], Tensor]) -> Tensor:
    """x takes ``func(x)``, in place, for a tensor that takes no gradient; returns x."""
    _refuse_grad(x, "apply_")
    return in_place(x, "apply_", lambda: func(x), keep_shape=False)


for _name, _method in {
        "is_dense": lambda x: True, "is_selected_rows": lambda x: False, "is_sparse": lambda x: False, "is_sparse_coo": lambda x: False,
        "is_sparse_csr": lambda x: False, "dense_dim": lambda x: x._array.ndim, "sparse_dim": lambda x: 0,
        "nnz": _sparse_only("nnz"), "values": _sparse_only("values"), "value": lambda x: x,
        "get_device": get_device, "pin_memory": pin_memory, "apply": apply, "apply_": apply_}.items():
    setattr(Tensor, _name, _method)
del _name, _method
Tensor.layout = property(lambda x: "NCHW", doc="paddle's data layout of a dense tensor: 'NCHW'.")
Tensor.type = property(lambda x: VarType.DENSE_TENSOR, doc="VarType.DENSE_TENSOR, as every pycoll tensor is.")
Tensor.num_shard = property(lambda x: None, doc="None: a pycoll Tensor is not a sharded (dist) tensor.")
Tensor.offset = property(offset, doc=offset.__doc__)
Tensor.grad_fn = property(lambda x: x.grad_node, doc="The graph node that made x (None for a leaf).")
Tensor.grad_ = Tensor.grad  # paddle's other name of the grad property (read and written)
