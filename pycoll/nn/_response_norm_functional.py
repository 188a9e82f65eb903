"""paddle.nn.functional.local_response_norm: each value divided by (k + alpha * the mean of the
squares of its `size` neighbouring channels) ** beta, the window zero-padded at the channel ends
(size // 2 channels before, (size - 1) // 2 after) and always divided by `size`, as paddle's
average pooling over the padded squares does. One op; its backward sends each value's share of
its neighbours' denominators back through the adjoint window."""
from __future__ import annotations

from typing import Any, Optional

from pycoll._fp_quiet import quiet
from pycoll._tensor_ops import as_tensor, op_output, placed
from pycoll.device import array_module
from pycoll.dtypes import is_floating
from pycoll.tensor import Tensor

__all__ = ["local_response_norm"]

_FORMATS = ("NCL", "NLC", "NCHW", "NHWC", "NCDHW", "NDHWC")


def _window_sum(a: Any, axis: int, before: int, after: int) -> Any:
    """out[c] = sum of a[c - before .. c + after] along `axis` (zeros past the ends), one shifted
    add per offset: a running sum's differences would carry one channel's rounding (or inf) into
    every later channel's window."""
    xp = array_module(a)
    out = a.copy()
    n = a.shape[axis]

    def along(start: int, stop: int) -> tuple:
        return (slice(None),) * axis + (slice(start, stop),)
    for shift in range(1, min(before, n - 1) + 1):  # out[c] += a[c - shift]
        out[along(shift, n)] += a[along(0, n - shift)]
    for shift in range(1, min(after, n - 1) + 1):  # out[c] += a[c + shift]
        out[along(0, n - shift)] += a[along(shift, n)]
    return out


def local_response_norm(x: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0,
                        data_format: str = "NCHW", name: Optional[str] = None) -> Tensor:
    """x / (k + alpha / size * sum of x^2 over the channel window) ** beta, x of 3 to 5 dims."""
    fn = "local_response_norm"
    if data_format not in _FORMATS:
        raise ValueError(f"{fn}: data_format must be one of {', '.join(_FORMATS)}, got {data_format!r}")
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"{fn}: size must be a positive int, got {size!r}")
    x = as_tensor(x)
    x, = placed(fn, x, axes=(x.ndim - 1 if data_format[-1] == "C" else 1,))  # auto-parallel: the channels whole
    a = x._array
    if a.ndim < 3 or not is_floating(a.dtype):
        raise ValueError(f"{fn}: x must be a floating tensor of 3 or more dimensions, got shape {list(a.shape)} "
                         f"dtype {a.dtype}")
    axis = a.ndim - 1 if data_format[-1] == "C" else 1
    before, after = size // 2, (size - 1) // 2
    coef = alpha / size
    with quiet():  # a square past the dtype's range: inf, and 0 or NaN out, unwarned as paddle's
        denom = k + coef * _window_sum(a * a, axis, before, after)
        scale = denom ** -beta
        out = (a * scale).astype(a.dtype, copy=False)

    def backward(g: Any) -> tuple:
        with quiet():
            share = g * a * scale / denom  # d out[c'] / d denom[c'] per unit of -beta
            back = _window_sum(share, axis, after, before)  # every c' whose window holds c
            return ((g * scale - 2 * beta * coef * a * back).astype(a.dtype, copy=False),)
    return op_output(out, backward, x)
