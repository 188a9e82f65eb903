"""Rules for the smooth activations of `nn._activation_functional._pointwise` (mish, selu, celu,
softsign, log_sigmoid, tanhshrink, hardswish) and prelu, the fused losses (binary cross-entropy
with or without logits, nll_loss, kl_div), the elementwise ops of two tensors (atan2, hypot,
logaddexp, fmax/fmin, heaviside, lerp, remainder), logit, and the reductions and scans
nanmean, logsumexp, cumsum, cumprod and prod."""
from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any, Callable, Dict

from pycoll._higher_order.recompute import recomputed
from pycoll._higher_order.rules_math import _both
from pycoll._higher_order.saved import Saved, const, rule
from pycoll.binary_ops import logaddexp
from pycoll.device import array_module, is_array
from pycoll.elementwise_ops import maximum, minimum
from pycoll.math_ops import abs as abs_, cast, clip, exp, sigmoid, sum as sum_, tanh
from pycoll.nn._class_losses import _nonzero
from pycoll.reduce_ops import cumsum, prod
from pycoll.reshape_ops import flip, moveaxis
from pycoll.search_ops import where
from pycoll.shape_ops import reshape, transpose, unsqueeze
from pycoll.tensor import Tensor
from pycoll.unary_ops import log1p

# ---- activations -----------------------------------------------------------------------------

# what a smooth activation's `derivative(xp, a)` calls (see `_pointwise`), as recorded Tensor ops
_TENSOR_XP = SimpleNamespace(exp=exp, tanh=tanh, log1p=log1p, abs=abs_, minimum=minimum, logaddexp=logaddexp,
                             where=where)


@rule(*(f"{n}.<locals>.backward" for n in ("mish", "selu", "celu", "softsign", "log_sigmoid", "tanhshrink",
                                            "hardswish")))
def _smooth_activation(s: Saved, g: Tensor) -> tuple:
    slope = s["derivative"](_TENSOR_XP, s.operand(0, s["a"]))
    return (g * (slope if slope._array.dtype == g._array.dtype else cast(slope, g._array.dtype)),)


@rule("prelu.<locals>.backward")
def _prelu(s: Saved, g: Tensor) -> tuple:
    pos, shape = const(s["pos"]), s["shape"]
    slope = reshape(s.operand(1, s["w"]), shape)
    gx = where(pos, g, g * slope) if s.wants(0) else None
    gw = None
    if s.wants(1):
        axes = [i for i, n in enumerate(shape) if n == 1]
        below = where(pos, 0.0, s.operand(0, s["a"]) * g)
        gw = reshape(sum_(below, axis=axes) if axes else below, list(s["w"].shape))
    return gx, gw


# ---- losses: the label takes no gradient, as in their backward ------------------------------

@rule("binary_cross_entropy.<locals>.backward")
def _bce(s: Saved, g: Tensor) -> tuple:
    x = s.operand(0, s["x"])
    return g * (x - const(s["y"])) / maximum(x * (1 - x), 1e-12), None


@rule("binary_cross_entropy_with_logits.<locals>.backward")
def _bce_with_logits(s: Saved, g: Tensor) -> tuple:
    y, pw, kept = s["y"], s["pw"], s["kept"]
    weighted = sigmoid(-s.operand(0, s["x"])) * (const(pw) if is_array(pw) else pw)
    return g * (const(1 - y) - weighted) * const(kept.astype(y.dtype)), None


@rule("kl_div.<locals>.backward")
def _kl_div(s: Saved, g: Tensor) -> tuple:
    d = g * const(s["slope"])  # the slope holds the label alone: no second derivative
    return (d if d._array.dtype == s["src"] else cast(d, s["src"])), None


@rule("nll_loss.<locals>.backward")
def _nll_loss(s: Saved, g: Tensor) -> tuple:
    xp, total, dtype = s["xp"], s["total"], s["dtype"]
    if total is not None:
        g = g / const(xp.asarray(_nonzero(total), dtype)) * const(xp.asarray(total != 0, dtype))
    hot = (xp.arange(s["classes"]) == s["safe"][..., None]).astype(dtype)
    return moveaxis(const(hot) * unsqueeze(-(const(s["weights"]) * g), -1), -1, 1), None


# ---- elementwise ops of two tensors -----------------------------------------------------------

# (d out / dx, d out / dy) from x, y and the output as graph Tensors (or numbers)
_PARTIALS: Dict[str, Callable[[Any, Any, Any], tuple]] = {
    "atan2": lambda x, y, o: (y / (x * x + y * y), -x / (x * x + y * y)),
    "hypot": lambda x, y, o: (x / o, y / o),
    "logaddexp": lambda x, y, o: (exp(x - o), exp(y - o)),
}


def _binary_rule(name: str) -> Callable[[Saved, Tensor], tuple]:
    partials = _PARTIALS[name]

    def binary(s: Saved, g: Tensor) -> tuple:
        dx, dy = partials(s.operand(0, s["xa"]), s.operand(1, s["ya"]), s.output(s["out"]))
        return _both(s, lambda: g * dx, lambda: g * dy)
    return binary


for _name in _PARTIALS:
    rule(f"{_name}.<locals>.backward")(_binary_rule(_name))


@rule(*(f"{n}.<locals>.backward" for n in ("fmax", "fmin", "heaviside")))
def _piecewise_binary(s: Saved, g: Tensor) -> tuple:
    dx, dy = s["partials"](s["xp"], s["xa"], s["ya"], s["out"])  # constants: which operand was picked
    dtype = g._array.dtype
    return _both(s, lambda: g * const(dx.astype(dtype)), lambda: g * const(dy.astype(dtype)))


@rule("lerp.<locals>.backward")
def _lerp(s: Saved, g: Tensor) -> tuple:
    w = s["w"]
    return _both(s, lambda: g * (1 - w), lambda: g * w)


@rule("remainder.<locals>.backward")
def _remainder(s: Saved, g: Tensor) -> tuple:
    quotient = s["xp"].floor_divide(s["xa"], s["ya"]).astype(g._array.dtype)
    return _both(s, lambda: g, lambda: -g * const(quotient))


@rule("logit.<locals>.backward")
def _logit(s: Saved, g: Tensor) -> tuple:
    a, eps = s["a"], s["eps"]
    x = s.operand(0, a)
    if eps is None:
        return (g / (x * (1 - x)),)
    c = clip(x, eps, 1 - eps)
    return (g / (c * (1 - c)) * const(((a >= eps) & (a <= 1 - eps)).astype(g._array.dtype)),)


# ---- reductions and scans -------------------------------------------------------------------

@rule("nanmean.<locals>.<lambda>")
def _nanmean(s: Saved, g: Tensor) -> tuple:
    ok, count = s["ok"], s["count"]
    share = ok / s["xp"].maximum(count, 1)  # 1 / count where not NaN, else 0
    return (reshape(g, list(s["kept"])) * const(share.astype(g._array.dtype)),)


@rule("logsumexp.<locals>.<lambda>")
def _logsumexp(s: Saved, g: Tensor) -> tuple:
    kept, full = list(s["kept"]), s["full"]
    lse = reshape(s.output(full.reshape(g._array.shape)), kept)
    return (reshape(g, kept) * exp(s.operand(0, s["a"]) - lse),)


@rule("cumsum.<locals>.backward")
def _cumsum(s: Saved, g: Tensor) -> tuple:
    ax = s["ax"]
    return (reshape(flip(cumsum(flip(g, ax), axis=ax), ax), list(s["src"])),)


@rule("cumprod.<locals>.backward")
def _cumprod(s: Saved, g: Tensor) -> tuple:
    a, ax, src = s["a"], s["ax"], list(s["src"])
    xp = s["xp"]
    if not bool((a == 0).any()):
        x = reshape(s.operand(0, a.reshape(src)), list(a.shape))
        return (reshape(flip(cumsum(flip(g * s.output(s["out"]), ax), axis=ax), ax) / x, src),)
    n = a.shape[ax]
    upto = const(xp.arange(n)[None, :] <= xp.arange(n)[:, None])  # [j, k]: k <= j

    def forward(x: Tensor) -> Tensor:  # out_j = prod_k (a_k where k <= j, else 1), with no division
        line = moveaxis(reshape(x, list(a.shape)), ax, -1)
        return moveaxis(prod(where(upto, unsqueeze(line, -2), 1.0), axis=-1), -1, ax)
    return recomputed(s, g, forward, [a.reshape(src)])


@rule("prod.<locals>.<lambda>")
def _prod(s: Saved, g: Tensor) -> tuple:
    a, axes = s["a"], s["axes"]
    x = s.operand(0, a)
    g = reshape(g, list(s["kept"]))
    if not bool((a == 0).any()):
        return (g * prod(x, axis=axes, keepdim=True) / x,)
    # the product of the others, with no division: each element's group with it set to 1
    axes = tuple(range(a.ndim)) if axes is None else axes
    rest = [i for i in range(a.ndim) if i not in axes]
    perm = rest + list(axes)
    moved = [a.shape[i] for i in perm]
    n = math.prod(a.shape[i] for i in axes)
    line = reshape(transpose(x, perm), moved[:len(rest)] + [n])
    others = prod(where(const(array_module(a).eye(n, dtype=bool)), 1.0, unsqueeze(line, -2)), axis=-1)
    return (g * transpose(reshape(others, moved), [perm.index(i) for i in range(a.ndim)]),)
