"""The Adam/AdamW step on CuPy arrays in one CUDA kernel (csrc/cuda_adam.cu), where CuPy's array
formula launches twelve kernels a parameter, each costing host time on a GPU that waits for it.

:func:`adam_step` is host_math.adam_step's device counterpart: the same arguments, the same
operations in the same order, each rounded to nearest in the arrays' dtype and never fused into a
multiply-add, so that a GPU gives the host kernel's bits (and the array formula's, but where
CuPy's own kernels flush float32 subnormals to zero, as they are compiled with -ftz). It returns
None where it does not serve the arrays: this build has no CUDA kernels, one is not a
``cupy.ndarray``, the dtypes or shapes differ, the dtype is not float32 or float64, an array
written in place is not C-contiguous, or they are not all on one device. The caller then runs its
array formula.
"""

from __future__ import annotations

import sys
from typing import Any, Optional

import numpy as np

from pycoll.kernels import compiled

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def adam_step(param: Any, grad: Any, moment1: Any, moment2: Any, moment2_max: Any, *, decay: float,
              beta1: float, beta2: float, epsilon: float, step: float) -> Optional[bool]:
    """One Adam step in place, enqueued on CuPy's current stream of the arrays' device: True, or
    None where the kernel does not serve the arrays (moment2_max may be None)."""
    cp = sys.modules.get("cupy")  # a device array exists only once CuPy is imported
    if cp is None or type(param) is not cp.ndarray or param.dtype not in _FLOATS:
        return None
    written = tuple(x for x in (param, moment1, moment2, moment2_max) if x is not None)
    if not all(type(x) is cp.ndarray and x.dtype == param.dtype and x.shape == param.shape
               and x._c_contiguous for x in written):
        return None
    if type(grad) is not cp.ndarray or grad.dtype != param.dtype or grad.shape != param.shape:
        return None
    device = param.data.device_id
    if any(x.data.device_id != device for x in written + (grad,)) or not compiled.cuda_built():
        return None
    C = compiled.ext()
    with cp.cuda.Device(device):
        grad = cp.ascontiguousarray(grad)
        stream = cp.cuda.get_current_stream().ptr
    C.cuda_adam_step(param.data.ptr, grad.data.ptr, moment1.data.ptr, moment2.data.ptr,
                     0 if moment2_max is None else moment2_max.data.ptr, param.size,
                     C.cuda_types[param.dtype.name], decay, beta1, 1 - beta1, beta2, 1 - beta2,
                     epsilon, step, device, stream)
    return True
