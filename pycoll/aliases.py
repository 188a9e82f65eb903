"""paddle 3.3.1's other names of pycoll's ops and its constants: ``cat`` / ``concatenate``
(concat), the torch-style ``softmax`` (also ``Tensor.softmax``), the comparisons ``eq``, ``ne``,
``gt``, ``ge``, ``lt``, ``le``, and ``pi``, ``e``, ``inf``, ``nan``, ``newaxis``. Where paddle's
form takes ``out=``, the result is also written into that tensor (of the result's shape and
dtype) and that tensor returned.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional, Sequence

from pycoll._param_aliases import param_aliases
from pycoll._tensor_ops import delivered
from pycoll.dtypes import DTypeLike
from pycoll.elementwise_ops import equal
from pycoll.logic_ops import greater_equal, greater_than, less_equal, less_than, not_equal
from pycoll.nn._activation_functional import softmax as _softmax_along
from pycoll.shape_ops import concat
from pycoll.tensor import Tensor

pi = math.pi
e = math.e
inf = math.inf
nan = math.nan
newaxis = None


def _into(result: Tensor, out: Optional[Tensor], fn: str) -> Tensor:
    """`result`, copied into `out` (and `out` returned) when given."""
    delivered(result, out, fn)
    return result if out is None else out


@param_aliases({"tensors": "x", "dim": "axis"})
def cat(x: Sequence[Tensor], axis: Any = 0, name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """paddle's other name of ``concat``: the tensors of `x` joined along `axis`."""
    return _into(concat(x, axis), out, "cat")


@param_aliases({"tensors": "x", "dim": "axis"})
def concatenate(x: Sequence[Tensor], axis: Any = 0, name: Optional[str] = None, *,
                out: Optional[Tensor] = None) -> Tensor:
    """paddle's other name of ``concat``: the tensors of `x` joined along `axis`."""
    return _into(concat(x, axis), out, "concatenate")


def softmax(input: Tensor, dim: Optional[int] = None, dtype: DTypeLike = None, *,  # noqa: A002 - paddle's name
            out: Optional[Tensor] = None) -> Tensor:
    """paddle's top-level (torch-style) softmax along `dim`; without one, along dim 0 of a tensor of
    0, 1 or 3 dimensions and dim 1 otherwise (paddle's rule). `dtype` casts the input first."""
    if not isinstance(input, Tensor):
        raise TypeError(f"softmax: input must be a Tensor, got {type(input).__name__}")
    if dim is None:
        dim = 0 if input.ndim in (0, 1, 3) else 1
    return _into(_softmax_along(input, dim, dtype), out, "softmax")


def _comparison(short: str, op: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def compare(x: Any, y: Any, name: Optional[str] = None, *, out: Optional[Tensor] = None) -> Tensor:
        return _into(op(x, y), out, short)
    compare.__name__ = compare.__qualname__ = short
    compare.__doc__ = f"paddle's short name of ``{op.__name__}``: an elementwise bool tensor."
    return param_aliases({"input": "x", "other": "y"})(compare)


eq = _comparison("eq", equal)
ne = _comparison("ne", not_equal)
gt = _comparison("gt", greater_than)
ge = _comparison("ge", greater_equal)
lt = _comparison("lt", less_than)
le = _comparison("le", less_equal)

Tensor.softmax = softmax
