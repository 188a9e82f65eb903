"""paddle 3.3's torch-style constructor ``paddle.as_tensor`` (paddle's ``paddle.tensor``): ``to_tensor``
with ``device=`` and ``requires_grad=`` names."""
from __future__ import annotations

from typing import Any

from pycoll.dtypes import DTypeLike
from pycoll.tensor import Tensor, to_tensor

__all__ = ["as_tensor"]


def as_tensor(data: Any, dtype: DTypeLike = None, device: Any = None, requires_grad: bool = False,
              pin_memory: bool = False) -> Tensor:
    """A new Tensor from ``data`` (numbers, nested lists, arrays, Tensors), as ``to_tensor(data,
    dtype, place=device, stop_gradient=not requires_grad)``: the data is copied, as paddle's
    (``from_numpy`` and ``from_dlpack`` share an array's memory).
    ``pin_memory=True`` gives the tensor in host memory (``Tensor.pin_memory()``) and, as paddle's,
    is refused for a tensor created on the CPU."""
    out = to_tensor(data, dtype, place=device, stop_gradient=not requires_grad)
    if pin_memory:
        if out.place.is_cpu_place():
            raise RuntimeError("as_tensor: pinning memory is not supported for Place(cpu) "
                               "(pin_memory=True needs a GPU device)")
        out = out.pin_memory()
        out.stop_gradient = not requires_grad
    return out
