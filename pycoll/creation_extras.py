"""paddle 3.3's further creation functions: ``asarray``, ``from_numpy`` and ``range`` (the old,
end-inclusive one).

Memory follows pycoll's contract (DESIGN.md: a Tensor wraps an array zero-copy), not paddle's
CPU build, which copies: ``from_numpy(a)`` and ``asarray(a)`` of a NumPy array of the wanted
dtype and place share ``a``'s memory (``copy=True`` copies), unless ``a`` is read-only: that one is
copied, so that the tensor takes in-place ops as paddle's does. A Tensor given to ``asarray`` is
copied, as paddle documents, into a new tensor outside the graph.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from pycoll._tensor_ops import delivered
from pycoll.device import device_place, module_for
from pycoll.dtypes import DTypeLike, convert_dtype, default_float
from pycoll.tensor import Tensor, to_tensor, wrap
from pycoll.tensor_data import array_from, writeable


def asarray(obj: Any, *, dtype: DTypeLike = None, device: Any = None, copy: Optional[bool] = None,
            requires_grad: bool = False) -> Tensor:
    """A Tensor of `obj` (a number, nested list or tuple, array or Tensor). Python floats take the
    default dtype, NumPy scalars and arrays keep theirs. A Tensor `obj` is always copied (paddle's
    rule); an array is wrapped without a copy where dtype and place allow, unless ``copy=True``.
    ``requires_grad=True`` gives a tensor that takes a gradient (stop_gradient False)."""
    if copy not in (None, True, False):
        raise TypeError(f"asarray: copy must be None, True or False, got {copy!r}")
    place = None if device is None else device_place(device)
    out = to_tensor(obj, dtype, place) if isinstance(obj, Tensor) else wrap(array_from(obj, dtype, place, bool(copy)))
    out.stop_gradient = not requires_grad
    return out


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A CPU Tensor over the NumPy array `ndarray` itself, of its dtype (no copy: writing one
    writes the other), or over a copy of a read-only one (`pycoll.tensor_data.writeable`)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy: ndarray must be a numpy.ndarray, got {type(ndarray).__name__} "
                        f"(use pycoll.to_tensor for other data)")
    return wrap(writeable(ndarray))


def _bound(v: Any, name: str) -> float:
    if isinstance(v, Tensor):
        if v.size != 1:
            raise ValueError(f"range: {name} must be a number or a one-element Tensor, got shape {v.shape}")
        return v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"range: {name} must be a number or a Tensor, got {type(v).__name__}")
    return v


def range(start: Any = 0, end: Any = None, step: Any = 1, dtype: DTypeLike = None, *,  # noqa: A001
          out: Optional[Tensor] = None, device: Any = None, requires_grad: bool = False,
          name: Optional[str] = None) -> Tensor:
    """paddle's (deprecated) ``range``: start, start + step, ... up to and including `end`, i.e.
    floor((end - start) / step) + 1 values (``range(5)`` is 0..5), counted in the dtype as paddle
    counts (``range(0, 0.9, 0.3)`` has 3 values in float32). The dtype is the default float
    dtype unless `dtype` is given, whatever the bounds' types; values are start + i * step computed
    in that dtype."""
    if end is None:
        start, end = 0, start
    start, end, step = _bound(start, "start"), _bound(end, "end"), _bound(step, "step")
    if step == 0:
        raise ValueError("range: step must be nonzero, got 0")
    dt = convert_dtype(dtype) or default_float()
    with np.errstate(all="ignore"):  # the count in the dtype, as paddle's kernel counts (float32 rounding)
        span = np.divide(dt.type(end) - dt.type(start), dt.type(step), dtype=np.result_type(dt, np.float32))
    count = int(np.floor(span)) + 1
    if count < 0:
        raise ValueError(f"range: end={end} cannot be reached from start={start} by step={step}")
    xp = module_for(None if device is None else device_place(device))
    values = xp.arange(count, dtype=dt) * xp.asarray(step, dtype=dt) + xp.asarray(start, dtype=dt)
    result = wrap(values.astype(dt, copy=False))
    result.stop_gradient = not requires_grad
    return delivered(result, out, "range")
