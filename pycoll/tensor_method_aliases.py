"""paddle 3.3.1's Tensor methods that are pycoll functions under the same name or another:
``argwhere``, ``as_complex``, ``as_real``, ``block_diag``, ``broadcast_shape``, ``combinations``,
``concat``, ``stack``, ``matrix_transpose``, ``take_along_dim``, ``is_tensor``,
``create_parameter``, ``create_tensor``, and the functions of paddle's other names ``reverse``
(``flip``), ``view_as_complex`` (``as_complex``) and ``view_as_real`` (``as_real``). As in
paddle, they are the functions themselves set on Tensor, so ``x.concat()`` passes x as the first
argument."""
from __future__ import annotations

from typing import Optional, Sequence, Union

from pycoll._tensor_ops import with_out
from pycoll.complex_ops import as_complex, as_real
from pycoll.creation import empty
from pycoll.dtypes import DTypeLike
from pycoll.index_ops import argwhere, take_along_axis
from pycoll.nn.layer import create_parameter
from pycoll.reshape_ops import broadcast_shape, flip, matrix_transpose
from pycoll.shape_ops import concat, is_tensor, stack
from pycoll.stack_ops import block_diag, combinations
from pycoll.tensor import Tensor


def reverse(x: Tensor, axis: Union[int, Sequence[int]], name: Optional[str] = None) -> Tensor:
    """x with the order of its elements reversed along `axis` (paddle's other name of ``flip``)."""
    return flip(x, axis)


def view_as_complex(input: Tensor) -> Tensor:  # noqa: A002 - paddle's name
    """A float tensor whose last dimension is 2 read as complex numbers (``as_complex``)."""
    return as_complex(input)


def view_as_real(input: Tensor) -> Tensor:  # noqa: A002 - paddle's name
    """A complex tensor as floats with a last dimension of 2, real then imaginary (``as_real``)."""
    return as_real(input)


def create_tensor(dtype: DTypeLike, name: Optional[str] = None, persistable: bool = False) -> Tensor:
    """An empty 0-d tensor of `dtype` for a value to be assigned later (paddle's uninitialised
    tensor, whose shape is [] too); `persistable` is kept on it."""
    out = empty([], dtype)
    out.persistable = persistable
    return out


for _name, _fn in {
        "argwhere": argwhere, "as_complex": as_complex, "as_real": as_real, "block_diag": block_diag,
        "broadcast_shape": broadcast_shape, "combinations": combinations, "concat": with_out(concat),
        "stack": with_out(stack), "matrix_transpose": matrix_transpose,
        "take_along_dim": with_out(take_along_axis), "is_tensor": is_tensor, "create_parameter": create_parameter,
        "create_tensor": create_tensor, "reverse": reverse, "view_as_complex": view_as_complex,
        "view_as_real": view_as_real}.items():
    setattr(Tensor, _name, _fn)
del _name, _fn
