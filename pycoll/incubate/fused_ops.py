"""paddle.incubate's fused attention helpers and ``identity_loss``, composed of pycoll's ops
(paddle fuses them into one GPU kernel; the values and gradients are the same):
``softmax_mask_fuse(x, mask)`` is softmax(x + mask) over the last axis,
``softmax_mask_fuse_upper_triangle(x)`` the causal softmax (row i sees columns 0..i).
A row hidden whole is NaN, as paddle's, and NumPy warns of nothing (the library prints nothing)."""
from __future__ import annotations

from typing import Optional, Union

from pycoll._fp_quiet import quiet as fp_quiet
from pycoll._tensor_ops import as_tensor
from pycoll.device import array_module
from pycoll.math_ops import add, mean, sum
from pycoll.nn.functional import softmax
from pycoll.search_ops import triu
from pycoll.tensor import Tensor, wrap


def softmax_mask_fuse(x: Tensor, mask: Tensor, name: Optional[str] = None) -> Tensor:
    """softmax(x + mask) over the last axis; mask (large negatives where a position is hidden)
    broadcasts to x ([batch, 1, rows, cols] against x's [batch, heads, rows, cols])."""
    x, mask = as_tensor(x), as_tensor(mask)
    if x.ndim != 4 or mask.ndim != 4:
        raise ValueError(f"softmax_mask_fuse: x and mask must be 4-D, got shapes {x.shape} and {mask.shape}")
    with fp_quiet():
        return softmax(add(x, mask), axis=-1)


def softmax_mask_fuse_upper_triangle(x: Tensor) -> Tensor:
    """softmax over the last axis of x with every column past the row's index hidden (a causal
    attention mask): row i of each [rows, cols] matrix spreads over columns 0..i."""
    x = as_tensor(x)
    if x.ndim != 4:
        raise ValueError(f"softmax_mask_fuse_upper_triangle: x must be 4-D, got shape {x.shape}")
    a = x._array
    hidden = triu(wrap(array_module(a).full(a.shape[-2:], float("-inf"), dtype=a.dtype)), diagonal=1)  # on x's place
    with fp_quiet():
        return softmax(add(x, hidden), axis=-1)


_REDUCTIONS = {"sum": 0, "mean": 1, "none": 2}


def identity_loss(x: Tensor, reduction: Union[str, int] = "none") -> Tensor:
    """x marked as a loss (for IPU programs in paddle): its sum ('sum' or 0), mean ('mean' or 1),
    or x itself ('none' or 2)."""
    code = _REDUCTIONS.get(reduction, reduction) if isinstance(reduction, str) else reduction
    if isinstance(code, bool) or code not in (0, 1, 2):
        raise TypeError(f"identity_loss: reduction must be 'sum', 'mean', 'none' or 0, 1, 2, got {reduction!r}")
    x = as_tensor(x)
    with fp_quiet():  # a sum past the dtype's range is inf, unwarned
        return sum(x) if code == 0 else mean(x) if code == 1 else x
