"""paddle.sparse's elementwise unary ops: each is pycoll's dense op on the stored values, the
pattern kept (so f(0) is never stored, as paddle's kernels do), plus `cast`, `pow` and `isnan`."""
from __future__ import annotations

from typing import Any, Callable, Optional

from pycoll import elementwise_ops, math_ops, unary_ops
from pycoll.dtypes import DTypeLike, convert_dtype
from pycoll.sparse.convert import coalesced_any
from pycoll.sparse.tensor import SparseTensor, pattern_like, sparse_arg, with_values
from pycoll.tensor import Tensor


def on_each_value(x: Any, fn: str, compute: Callable[[Tensor], Tensor]) -> SparseTensor:
    """``compute`` of x's stored values, x's pattern kept: repeated positions summed first (as
    to_dense sums them), so that f is taken of each position's one value."""
    x = coalesced_any(sparse_arg(x, fn))
    return with_values(x, compute(x.values()))


def _on_values(name: str, dense: Callable[[Tensor], Tensor]) -> Callable[..., SparseTensor]:
    def op(x: SparseTensor, name: Optional[str] = None) -> SparseTensor:
        return on_each_value(x, op.__name__, dense)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"{name} of each stored value of a sparse COO or CSR tensor (the pattern kept)."
    return op


sin = _on_values("sin", unary_ops.sin)
tan = _on_values("tan", unary_ops.tan)
asin = _on_values("asin", unary_ops.asin)
atan = _on_values("atan", unary_ops.atan)
sinh = _on_values("sinh", unary_ops.sinh)
tanh = _on_values("tanh", math_ops.tanh)
asinh = _on_values("asinh", unary_ops.asinh)
atanh = _on_values("atanh", unary_ops.atanh)
sqrt = _on_values("sqrt", math_ops.sqrt)
square = _on_values("square", math_ops.square)
log1p = _on_values("log1p", unary_ops.log1p)
abs = _on_values("abs", math_ops.abs)  # noqa: A001 - paddle's name
neg = _on_values("neg", math_ops.neg)
deg2rad = _on_values("deg2rad", unary_ops.deg2rad)
rad2deg = _on_values("rad2deg", unary_ops.rad2deg)
expm1 = _on_values("expm1", unary_ops.expm1)


def pow(x: SparseTensor, factor: float, name: Optional[str] = None) -> SparseTensor:  # noqa: A001
    """Each stored value to the power `factor` (a number)."""
    x = sparse_arg(x, "pow")
    if isinstance(factor, bool) or not isinstance(factor, (int, float)):
        raise TypeError(f"pow: factor must be a number, got {type(factor).__name__}")
    x = coalesced_any(x)
    return with_values(x, math_ops.pow(x.values(), float(factor)))


def isnan(x: SparseTensor, name: Optional[str] = None) -> SparseTensor:
    """Whether each stored value is NaN (a bool sparse tensor of x's pattern, no gradient)."""
    x = sparse_arg(x, "isnan")
    return pattern_like(x, elementwise_ops.isnan(x.values())._array)


def cast(x: SparseTensor, index_dtype: DTypeLike = None, value_dtype: DTypeLike = None,
         name: Optional[str] = None) -> SparseTensor:
    """x with its indices (COO indices, CSR crows and cols) as `index_dtype` and its values as
    `value_dtype` (None keeps either); the values' gradient flows back through the cast."""
    x = sparse_arg(x, "cast")
    idt = convert_dtype(index_dtype)
    if idt is not None and idt.kind not in "iu":
        raise TypeError(f"cast: index_dtype must be an integer dtype, got {idt}")
    vdt = convert_dtype(value_dtype)
    out = with_values(x, x.values() if vdt is None else math_ops.cast(x.values(), vdt))
    if idt is not None:
        conv: Callable[[Any], Any] = lambda a: None if a is None else a.astype(idt)  # noqa: E731
        out._indices, out._crows, out._cols = conv(x._indices), conv(x._crows), conv(x._cols)
    return out
