"""In-place ops (Tensor methods, paddle's names), each returning the tensor it changed:
``zero_``, ``fill_``, ``scale_``, ``add_``, ``subtract_``, ``multiply_``, ``divide_``, ``clip_``,
``exp_``, ``sqrt_``, ``uniform_``, ``normal_``, ``copy_`` and ``increment``.

Each but copy_ (paddle's storage copy, see there) runs its op as usual, the result then taking
x's place. paddle's rules for
autograd: a leaf that takes a gradient (a parameter) cannot be changed in place while the graph is
recorded (ValueError, as paddle's); an op's output can, and its gradient then flows through the
op (zero for zero_, fill_, uniform_ and normal_), to y too where y takes one. Such a tensor gets
the op's new array rather than being overwritten, so the backward functions that kept its old
values stay right. Everywhere else (no gradient, or under ``no_grad``) the values are written into
the tensor's memory, as ``x[...] = v`` writes them (an op that kept x for its backward sees the
new values then). As in paddle, a result of another dtype makes x that dtype (float32 x plus
float64 y is float64; an integer x divided is float32), and y may broadcast to x's shape but not
beyond it.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from pycoll import _graph, math_ops
from pycoll._tensor_ops import op_output
from pycoll.device import array_module, move, place_of, to_module
from pycoll.elementwise_ops import rounded_divide
from pycoll.random import get_rng
from pycoll.tensor import Tensor


def in_place(x: Tensor, op: str, compute: Callable[[], Tensor]) -> Tensor:
    """Make `x` hold ``compute()``, an op on x (and maybe others) recorded as usual (the rules are
    the module docstring's); returns x."""
    if _graph.is_grad_enabled() and not x.stop_gradient and x.grad_node is None:
        raise ValueError(f"{op}: leaf tensor {x.name or ''!s} takes a gradient (stop_gradient=False) and "
                         f"cannot be changed in place; do it under pycoll.no_grad()")
    out = compute()
    if out.shape != x.shape:
        raise ValueError(f"{op}: the result has shape {out.shape} and x has shape {x.shape}; an in-place op "
                         f"cannot change x's shape (y may broadcast to x's, not beyond it)")
    if out.grad_node is not None:
        x._array = out._array
        x.stop_gradient, x.grad_node, x.output_index = False, out.grad_node, out.output_index
    elif out.dtype == x.dtype:
        array_module(x._array).copyto(x._array, out._array)
    else:
        x._array = out._array
    return x


def _replaced(x: Tensor, values: Any) -> Tensor:
    """`values` (an array of x's shape) as an op on x whose gradient is zero."""
    xp = array_module(x._array)
    return op_output(values, lambda g: (xp.zeros_like(g),), x)


def zero_(x: Tensor) -> Tensor:
    """Set every element to 0."""
    return in_place(x, "zero_", lambda: _replaced(x, array_module(x._array).zeros_like(x._array)))


def fill_(x: Tensor, value: float) -> Tensor:
    """Set every element to `value` (a number; an integer tensor truncates it)."""
    if not isinstance(value, (int, float)):
        raise TypeError(f"fill_: value must be an int or a float, got {type(value).__name__}")
    return in_place(x, "fill_", lambda: _replaced(x, array_module(x._array).full_like(x._array, value)))


def scale_(x: Tensor, scale: float = 1.0, bias: float = 0.0, bias_after_scale: bool = True,
           act: Any = None, name: Any = None) -> Tensor:
    """x = scale * x + bias (``bias_after_scale=False``: scale * (x + bias)), as ``pycoll.scale``
    computes it; `act` must be None (paddle's in-place form applies no activation either)."""
    if act is not None:
        raise ValueError(f"scale_: act must be None, got {act!r}")
    return in_place(x, "scale_", lambda: math_ops.scale(x, scale, bias, bias_after_scale))


def _times(y: Any, alpha: float) -> Any:
    """add_'s and subtract_'s y * alpha (y itself for alpha 1)."""
    if alpha == 1:
        return y
    return math_ops.multiply(y, alpha) if isinstance(y, Tensor) else y * alpha


def add_(x: Tensor, y: Any, name: Optional[str] = None, *, alpha: float = 1) -> Tensor:
    """x = x + alpha * y."""
    return in_place(x, "add_", lambda: math_ops.add(x, _times(y, alpha)))


def subtract_(x: Tensor, y: Any, name: Optional[str] = None, *, alpha: float = 1) -> Tensor:
    """x = x - alpha * y."""
    return in_place(x, "subtract_", lambda: math_ops.subtract(x, _times(y, alpha)))


def multiply_(x: Tensor, y: Any, name: Optional[str] = None) -> Tensor:
    """x = x * y."""
    return in_place(x, "multiply_", lambda: math_ops.multiply(x, y))


def divide_(x: Tensor, y: Any, name: Optional[str] = None, *, rounding_mode: Optional[str] = None) -> Tensor:
    """x = x / y (an integer x becomes float32), or with rounding_mode 'floor' / 'trunc' the
    quotient rounded down / towards zero in x's dtype. The rounded quotients take no gradient
    (paddle passes x's gradient through them unchanged, as if x had not been divided)."""
    if rounding_mode not in (None, "floor", "trunc"):
        raise ValueError(f"divide_: rounding_mode must be None, 'trunc' or 'floor', got {rounding_mode!r}")
    if rounding_mode is None:
        return in_place(x, "divide_", lambda: math_ops.divide(x, y))
    return in_place(x, "divide_", lambda: rounded_divide(x, y, rounding_mode))


def clip_(x: Tensor, min: Optional[float] = None, max: Optional[float] = None,  # noqa: A002 - paddle's names
          name: Optional[str] = None) -> Tensor:
    """Clamp x to [min, max] in its own dtype (neither given: x stays as it is, as in paddle)."""
    if min is None and max is None:
        return x
    if min is not None and max is not None and min > max:
        raise ValueError(f"clip_: min must be <= max, got min={min} and max={max}")

    def clipped() -> Tensor:
        out = math_ops.clip(x, min, max)
        return out if out.dtype == x.dtype else math_ops.cast(out, x.dtype)
    return in_place(x, "clip_", clipped)


def increment(x: Tensor, value: float = 1.0, name: Optional[str] = None) -> Tensor:
    """x = x + value, in place, for an x of one element (paddle's loop counter); returns x."""
    if not isinstance(x, Tensor) or x.size != 1:
        raise ValueError(f"increment: x must be a Tensor of one element, got "
                         f"{'shape ' + str(x.shape) if isinstance(x, Tensor) else type(x).__name__}")
    return in_place(x, "increment", lambda: math_ops.add(x, value))


def exp_(x: Tensor, name: Optional[str] = None) -> Tensor:
    """x = e ** x (an integer x becomes float32)."""
    return in_place(x, "exp_", lambda: math_ops.exp(x))


def sqrt_(x: Tensor, name: Optional[str] = None) -> Tensor:
    """x = sqrt(x) (an integer x becomes float32)."""
    return in_place(x, "sqrt_", lambda: math_ops.sqrt(x))


def _random_fill(x: Tensor, op: str, draw: Callable[[np.random.Generator], Any], seed: int = 0) -> Tensor:
    """x filled with ``draw(generator)`` (float64 host values of x's shape), drawn from pycoll's
    generator, or, for a non-zero `seed`, from a generator of its own (paddle's seed argument)."""
    if x.dtype.kind in "biu":
        raise TypeError(f"{op}: x must hold floating-point numbers, got dtype {x.dtype}")
    a = x._array
    generator = get_rng() if seed == 0 else np.random.default_rng(seed)
    return in_place(x, op, lambda: _replaced(x, move(draw(generator).astype(a.dtype), place_of(a))))


def uniform_(x: Tensor, min: float = 0, max: float = 1.0, seed: int = 0,  # noqa: A002 - paddle's names
             name: Optional[str] = None) -> Tensor:
    """Fill x with values drawn uniformly from [min, max)."""
    if not min < max:
        raise ValueError(f"uniform_: min must be < max, got min={min} and max={max}")
    return _random_fill(x, "uniform_", lambda rng: rng.uniform(min, max, size=tuple(x.shape)), seed)


def normal_(x: Tensor, mean: float = 0.0, std: float = 1.0, name: Optional[str] = None) -> Tensor:
    """Fill x with values drawn from N(mean, std ** 2)."""
    return _random_fill(x, "normal_", lambda rng: rng.standard_normal(tuple(x.shape)) * std + mean)


def copy_(x: Tensor, src: Tensor, blocking: bool = True) -> Tensor:
    """paddle's storage copy: x takes src's values and shape (the dtypes must match). It records no
    op, so x keeps its place in the graph and a gradient flows on as if x held its old values
    (paddle's as well); a leaf that takes a gradient may be copied into (it is how weights are
    loaded). `blocking` is accepted for paddle compatibility (copies here are synchronous)."""
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_: src must be a Tensor, got {type(src).__name__}")
    if src.dtype != x.dtype:
        raise TypeError(f"copy_: src has dtype {src.dtype} and x {x.dtype}; they must match (cast src first)")
    xp = array_module(x._array)
    values = to_module(src._array, xp)
    if values.shape == x._array.shape and x.grad_node is None:
        xp.copyto(x._array, values)
    else:  # another shape, or an op's output whose old values a backward may hold
        x._array = xp.array(values, copy=True)
    return x


for _fn in (zero_, fill_, scale_, add_, subtract_, multiply_, divide_, clip_, exp_, sqrt_, uniform_, normal_,
            copy_, increment):
    setattr(Tensor, _fn.__name__, _fn)
del _fn
