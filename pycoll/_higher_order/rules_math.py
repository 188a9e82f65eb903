"""Rules for arithmetic, elementwise maths and reductions (`pycoll.math_ops`, `unary_ops`,
`elementwise_ops`, `search_ops`, `_promotion.cast_to`): each the op's backward written with
Tensor ops, reading what the backward closes over (`saved.Saved`)."""
from __future__ import annotations

import math
from typing import Any, Callable, Dict

import numpy as np

from pycoll import unary_ops
from pycoll._higher_order.saved import Saved, const, fit, rule, slope_of
from pycoll._py_layer_backward import user_backward
from pycoll.device import array_module
from pycoll.math_ops import base_grad_exponent, cast, exp, log, number_log, sqrt, sum as sum_
from pycoll.reshape_ops import broadcast_to
from pycoll.search_ops import where
from pycoll.shape_ops import reshape
from pycoll.tensor import Tensor


def _both(s: Saved, gx: Callable[[], Any], gy: Callable[[], Any]) -> tuple:
    return (fit(gx(), s["mx"]) if s.wants(0) else None, fit(gy(), s["my"]) if s.wants(1) else None)


@rule("add.<locals>.backward")
def _add(s: Saved, g: Tensor) -> tuple:
    return _both(s, lambda: g, lambda: g)


@rule("subtract.<locals>.backward")
def _subtract(s: Saved, g: Tensor) -> tuple:
    return _both(s, lambda: g, lambda: -g)


@rule("multiply.<locals>.backward")
def _multiply(s: Saved, g: Tensor) -> tuple:
    return _both(s, lambda: g * s.operand(1, s["ya"]), lambda: g * s.operand(0, s["xa"]))


@rule("divide.<locals>.backward")
def _divide(s: Saved, g: Tensor) -> tuple:
    x, y = s.operand(0, s["xa"]), s.operand(1, s["ya"])
    return _both(s, lambda: g / y, lambda: -(g * x) / (y * y))


@rule("pow.<locals>.backward")
def _pow(s: Saved, g: Tensor) -> tuple:
    x, y = s.operand(0, s["xa"]), s.operand(1, s["ya"])

    zero = const((s["out"] == 0) | ((s["xa"] == 0) & (s["ya"] == 0)))

    def exponent_grad() -> Any:  # a zero power, and 0 ** 0, add nothing (pow's rule): log(1) stands in for log 0
        log_x = log(where(zero, x * 0 + 1, x)) if isinstance(x, Tensor) else number_log(x)
        d = g * s.output(s["out"]) * log_x
        return where(zero, d * 0, d)

    def base_grad() -> Any:
        if isinstance(y, Tensor):
            return g * y * x ** where(const(s["ya"] == 0), y * 0 + 1, y - 1)
        return g * y * x ** base_grad_exponent(y)
    return _both(s, base_grad, exponent_grad)


@rule("neg.<locals>.<lambda>")
def _neg(s: Saved, g: Tensor) -> tuple:
    return (-g,)


@rule("tanh.<locals>.<lambda>")
def _tanh(s: Saved, g: Tensor) -> tuple:
    out = s.output(s["out"])
    return (g * (1 - out * out),)


@rule("exp.<locals>.<lambda>")
def _exp(s: Saved, g: Tensor) -> tuple:
    return (g * s.output(s["out"]),)


@rule("log.<locals>.<lambda>")
def _log(s: Saved, g: Tensor) -> tuple:
    return (g / s.operand(0, s["a"]),)


@rule("sqrt.<locals>.<lambda>")
def _sqrt(s: Saved, g: Tensor) -> tuple:
    return (g / (2 * s.output(s["out"])),)


@rule("square.<locals>.<lambda>")
def _square(s: Saved, g: Tensor) -> tuple:
    return (g * (2 * s.operand(0, s["a"])),)


@rule("abs.<locals>.<lambda>")
def _abs(s: Saved, g: Tensor) -> tuple:
    if s["a"].dtype.kind == "c":
        raise NotImplementedError("grad(create_graph=True) does not support complex tensors yet (abs of one)")
    return (g * slope_of(s, 0, s["xp"].sign(s["a"]).astype(g._array.dtype)),)  # 0 at 0, as the op's


@rule("relu.<locals>.<lambda>")
def _relu(s: Saved, g: Tensor) -> tuple:
    return (g * slope_of(s, 0, (s["out"] > 0).astype(g._array.dtype)),)


@rule("sigmoid.<locals>.<lambda>")
def _sigmoid(s: Saved, g: Tensor) -> tuple:
    out = s.output(s["out"])
    return (g * out * (1 - out),)


@rule("clip.<locals>.backward")
def _clip(s: Saved, g: Tensor) -> tuple:
    a, lo, hi = s["a"], s["lo"], s["hi"]
    inside = s["xp"].ones(a.shape, dtype=bool)
    if lo is not None:
        inside &= a >= lo
    if hi is not None:
        inside &= a <= hi
    return (g * const(inside.astype(g._array.dtype)),)


@rule("scale.<locals>.<lambda>")
def _scale(s: Saved, g: Tensor) -> tuple:
    return (g * s["factor"],)


@rule("cast_to.<locals>.<lambda>")
def _cast(s: Saved, g: Tensor) -> tuple:
    return (cast(g, s["src"]),)


@rule("sum.<locals>.backward")
def _sum(s: Saved, g: Tensor) -> tuple:
    return (broadcast_to(reshape(g, list(s["kept"])), list(s["shape"])),)


@rule("mean.<locals>.backward")
def _mean(s: Saved, g: Tensor) -> tuple:
    return (broadcast_to(reshape(g, list(s["kept"])) / s["count"], list(s["shape"])),)


@rule("_extreme.<locals>.backward")
def _extreme(s: Saved, g: Tensor) -> tuple:
    mask = s["a"] == s["full"]  # ties share the gradient, as the op's
    share = mask / mask.sum(axis=s["axes"], keepdims=True)
    return (reshape(g, list(s["kept"])) * const(share.astype(g._array.dtype)),)


@rule("_pick.<locals>.backward")
def _pick(s: Saved, g: Tensor) -> tuple:
    xa, ya = s["xa"], s["ya"]
    share = s["xp"].where(xa == ya, 0.5, s["take_x"](xa, ya)).astype(g._array.dtype)
    return _both(s, lambda: g * const(share), lambda: g * const(1 - share))


@rule("where.<locals>.backward")
def _where(s: Saved, g: Tensor) -> tuple:
    keep = const(s["c"])
    zero = g * 0
    return _both(s, lambda: where(keep, g, zero), lambda: where(keep, zero, g))


def _masked(g: Tensor, mask: Any) -> Tensor:
    """g where ``mask`` (an array broadcasting with g) holds, 0 elsewhere (also where g is inf or
    NaN, as the ops' own backward gives it)."""
    shape = np.broadcast_shapes(mask.shape, tuple(g.shape))
    return where(const(mask), g, const(array_module(mask).zeros(shape, g._array.dtype)))


@rule("masked_fill.<locals>.<lambda>")
def _masked_fill(s: Saved, g: Tensor) -> tuple:
    return (fit(_masked(g, ~s["m"]), s["meta"]),)


@rule("masked_fill.<locals>.backward")
def _masked_fill_value(s: Saved, g: Tensor) -> tuple:
    gx = fit(_masked(g, ~s["m"]), s["meta"]) if s.wants(0) else None
    gv = cast(reshape(sum_(_masked(g, s["m"])), list(s["shape"])), s["value"]._array.dtype) if s.wants(1) else None
    return gx, gv


@rule("nan_to_num.<locals>.<lambda>")
def _nan_to_num(s: Saved, g: Tensor) -> tuple:
    return (_masked(g, s["finite"]) if "finite" in s else g,)  # an integer x: its gradient as it is


@rule("nansum.<locals>.<lambda>")
def _nansum(s: Saved, g: Tensor) -> tuple:
    return (_masked(reshape(g, list(s["kept"])), s["ok"]),)


# ---- the elementwise families of unary_ops -------------------------------------------------

# d out / d x for each _float_op, from the input x and the output o as graph Tensors
_FLOAT_DERIVATIVES: Dict[str, Callable[[Any, Any], Any]] = {
    "sin": lambda x, o: unary_ops.cos(x),
    "cos": lambda x, o: -unary_ops.sin(x),
    "tan": lambda x, o: 1 + o * o,
    "asin": lambda x, o: 1 / sqrt(1 - x * x),
    "acos": lambda x, o: -1 / sqrt(1 - x * x),
    "atan": lambda x, o: 1 / (1 + x * x),
    "sinh": lambda x, o: unary_ops.cosh(x),
    "cosh": lambda x, o: unary_ops.sinh(x),
    "asinh": lambda x, o: 1 / sqrt(x * x + 1),
    "acosh": lambda x, o: 1 / sqrt(x * x - 1),
    "atanh": lambda x, o: 1 / (1 - x * x),
    "sinc": lambda x, o: _sinc_derivative(x, o),
    "log1p": lambda x, o: 1 / (1 + x),
    "log2": lambda x, o: 1 / (x * math.log(2)),
    "log10": lambda x, o: 1 / (x * math.log(10)),
    "expm1": lambda x, o: o + 1,
    "rsqrt": lambda x, o: -0.5 * o * o * o,
    "reciprocal": lambda x, o: -o * o,
    "deg2rad": lambda x, o: math.pi / 180,
    "rad2deg": lambda x, o: 180 / math.pi,
    "erf": lambda x, o: 2 / math.sqrt(math.pi) * exp(-x * x),
    "erfinv": lambda x, o: math.sqrt(math.pi) / 2 * exp(o * o),
}


def _sinc_derivative(x: Tensor, o: Tensor) -> Tensor:
    """(cos(pi x) - sinc(x)) / x, 0 at x = 0 (where x is replaced by 1 in the unused branch, so
    that no 0 / 0 enters the graph)."""
    at_zero = const(x._array == 0)
    safe = where(at_zero, x * 0 + 1, x)
    return where(at_zero, x * 0, (unary_ops.cos(math.pi * safe) - o) / safe)


def _float_op_rule(name: str) -> Callable[[Saved, Tensor], tuple]:
    derivative = _FLOAT_DERIVATIVES[name]

    def float_op(s: Saved, g: Tensor) -> tuple:
        x, o = s["held_x"], s["held_out"]
        d = derivative(None if x is None else s.operand(0, x), None if o is None else s.output(o))
        return (cast(g * d, g._array.dtype) if isinstance(d, Tensor) else g * d,)
    return float_op


for _name in _FLOAT_DERIVATIVES:
    rule(f"{_name}.<locals>.backward")(_float_op_rule(_name))


@rule(*(f"{n}.<locals>.backward" for n in ("ceil", "floor", "sign", "round")))
def _flat(s: Saved, g: Tensor) -> tuple:
    return (g * 0,)


@rule("trunc.<locals>.backward")
def _zero(s: Saved, g: Tensor) -> tuple:
    return (const(s["xp"].zeros_like(g._array)),)


@rule("frac.<locals>.backward")
def _frac(s: Saved, g: Tensor) -> tuple:
    return (g * 1,)



# ---- user-defined ops ----------------------------------------------------------------------

@rule("PyLayer.apply.<locals>.fn")
def _py_layer(s: Saved, grads: Any) -> tuple:
    """The user's backward, run on the recorded gradients with recording on: built from pycoll's
    ops, it is differentiated like any other code (paddle's PyLayer under create_graph)."""
    return tuple(user_backward(s["cls"], s["ctx"], s["metas"], s["wanted"], s["tensor_args"], s["shapes"], grads,
                                recording=True))
