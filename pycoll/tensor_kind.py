"""What a pycoll Tensor answers to paddle's questions about its kind and storage: it is always a
dense tensor (``is_dense()`` True, ``is_sparse()`` / ``is_sparse_coo()`` / ``is_sparse_csr()``
False, ``layout``, ``dense_dim()``, ``sparse_dim()`` 0, ``type`` DENSE_TENSOR, ``num_shard``
None; ``nnz()`` and ``values()`` are sparse tensors' and refused), ``offset`` (bytes from the
start of its memory), ``get_device()``, ``value()``, ``get_tensor()``, ``pin_memory()``, ``grad_fn``
/ ``grad_``, and paddle's ``apply`` / ``apply_`` (a function run on a tensor outside autograd), and the
private storage calls paddle's own libraries make (``_is_initialized``, ``_numel``,
``_copy_to``, ``_share_buffer_to``, ``_md5sum``)."""
from __future__ import annotations

import enum
import hashlib
from typing import Any, Callable

import numpy as np

from pycoll.dense_tensor import get_tensor
from pycoll.device import get_device, move, parse_place, to_module
from pycoll.inplace_ops import LeafInplaceError, in_place
from pycoll.tensor import Tensor, wrap


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


def _is_initialized(x: Tensor) -> bool:
    """paddle's: whether x holds memory (an empty tensor, or one whose ``_clear_data`` let its
    memory go, holds none)."""
    return x._array.size > 0


def _copy_to(x: Tensor, place: Any, blocking: bool = True) -> Tensor:
    """paddle's: a copy of x on ``place`` (a new tensor that takes no gradient, even on x's
    own place). A copy to the host is complete when this returns, whatever ``blocking``."""
    array = move(x._array, parse_place(place))
    return wrap(array.copy() if array is x._array else array)


def _share_buffer_to(x: Tensor, other: Tensor) -> None:
    """paddle's: ``other`` takes x's memory (and here its shape and dtype): writes to one show
    in the other."""
    if not isinstance(other, Tensor):
        raise TypeError(f"_share_buffer_to: other must be a Tensor, got {type(other).__name__}")
    other._array = x._array


def _md5sum(x: Tensor) -> str:
    """paddle's: the MD5 digest (hex) of x's elements' bytes, in row-major order."""
    return hashlib.md5(np.ascontiguousarray(to_module(x._array, np)).tobytes()).hexdigest()


for _name, _method in {
        "_is_initialized": _is_initialized, "_numel": lambda x: int(x._array.size), "_copy_to": _copy_to,
        "_share_buffer_to": _share_buffer_to, "_md5sum": _md5sum,
        "is_dense": lambda x: True, "is_selected_rows": lambda x: False, "is_sparse": lambda x: False, "is_sparse_coo": lambda x: False,
        "is_sparse_csr": lambda x: False, "dense_dim": lambda x: x._array.ndim, "sparse_dim": lambda x: 0,
        "nnz": _sparse_only("nnz"), "values": _sparse_only("values"), "value": lambda x: x,
        "get_device": get_device, "get_tensor": get_tensor, "pin_memory": pin_memory, "apply": apply,
        "apply_": apply_}.items():
    setattr(Tensor, _name, _method)
del _name, _method
Tensor.layout = property(lambda x: "NCHW", doc="paddle's data layout of a dense tensor: 'NCHW'.")
Tensor.type = property(lambda x: VarType.DENSE_TENSOR, doc="VarType.DENSE_TENSOR, as every pycoll tensor is.")
Tensor.num_shard = property(lambda x: None, doc="None: a pycoll Tensor is not a sharded (dist) tensor.")
Tensor.offset = property(offset, doc=offset.__doc__)
Tensor.grad_fn = property(lambda x: x.grad_node, doc="The graph node that made x (None for a leaf).")
Tensor.grad_ = Tensor.grad  # paddle's other name of the grad property (read and written)
