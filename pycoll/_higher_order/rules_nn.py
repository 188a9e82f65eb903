"""Rules for linear algebra and the neural-network ops: linear, matmul, inv, det, solve, cross, the
activations of `pycoll.nn.functional` (maxout too), softmax/log_softmax, vector norms and
cross-entropy."""
from __future__ import annotations

import math

from pycoll._higher_order.saved import Saved, const, fit, rule, slope_of
from pycoll.linalg import _EPS as NORM_EPS, cross
from pycoll.math_ops import abs as abs_, exp, matmul, sigmoid, sum as sum_, tanh
from pycoll.nn._activation_functional import softmax
from pycoll.nn._channel_activation_functional import first_largest
from pycoll.matrix_ops import inv, solve
from pycoll.reshape_ops import moveaxis
from pycoll.shape_ops import reshape, transpose, unsqueeze
from pycoll.tensor import Tensor
from pycoll.unary_ops import erf


@rule("linear.<locals>.backward")
def _linear(s: Saved, g: Tensor) -> tuple:
    xa, wa = s["xa"], s["wa"]
    gb = fit(g, (s["bias"]._array.shape, g._array.dtype)) if s.wants(2) else None  # any bias that broadcasts
    g = fit(g, (s["product"], g._array.dtype))  # x @ weight's part of an output a bias grew
    g2 = reshape(g, [-1, g.shape[-1]])
    gx = matmul(g, s.operand(1, wa), transpose_y=True) if s.wants(0) else None
    gw = matmul(reshape(s.operand(0, xa), [-1, xa.shape[-1]]), g2, transpose_x=True) if s.wants(1) else None
    return gx, gw, gb


@rule("matmul.<locals>.backward")
def _matmul(s: Saved, g: Tensor) -> tuple:
    xa, ya = s["xa"], s["ya"]
    swap_x, swap_y = s["swap_x"], s["swap_y"]  # the operands' arrays are the inputs' transposes
    x = swapped_last(s.operand(0, xa.swapaxes(-1, -2))) if swap_x else s.operand(0, xa)
    y = swapped_last(s.operand(1, ya.swapaxes(-1, -2))) if swap_y else s.operand(1, ya)
    a = x if xa.ndim > 1 else unsqueeze(x, 0)
    b = y if ya.ndim > 1 else unsqueeze(y, -1)
    if ya.ndim == 1:
        g = unsqueeze(g, -1)
    if xa.ndim == 1:
        g = unsqueeze(g, -2)
    dtype = g._array.dtype
    gx = reshape(fit(matmul(g, b, transpose_y=True), (a.shape, dtype)), list(xa.shape)) if s.wants(0) else None
    gy = reshape(fit(matmul(a, g, transpose_x=True), (b.shape, dtype)), list(ya.shape)) if s.wants(1) else None
    return (swapped_last(gx) if swap_x and gx is not None else gx,
            swapped_last(gy) if swap_y and gy is not None else gy)


def swapped_last(t: Tensor) -> Tensor:
    """t with its last two axes swapped."""
    perm = list(range(t.ndim))
    perm[-2:] = perm[:-3:-1]
    return transpose(t, perm)


@rule("leaky_relu.<locals>.<lambda>")
def _leaky_relu(s: Saved, g: Tensor) -> tuple:
    slope = s["xp"].where(s["nonneg"], 1, s["slope"]).astype(g._array.dtype)
    return (g * slope_of(s, 0, slope),)


@rule("silu.<locals>.<lambda>")
def _silu(s: Saved, g: Tensor) -> tuple:
    x = s.operand(0, s["a"])
    sig = sigmoid(x)
    return (g * (sig * (1 + x * (1 - sig))),)


@rule("elu.<locals>.<lambda>")
def _elu(s: Saved, g: Tensor) -> tuple:
    pos = s["pos"].astype(g._array.dtype)
    x = s.operand(0, s["a"])
    # exp of x where x <= 0 only (exp(0) elsewhere: no overflow where the mask drops it)
    return (g * (const(pos) + const(1 - pos) * s["alpha"] * exp(x * const(1 - pos))),)


@rule("softplus.<locals>.backward")
def _softplus(s: Saved, g: Tensor) -> tuple:
    a, beta = s["a"], s["beta"]
    linear = (a * beta > s["threshold"]).astype(g._array.dtype)
    curve = sigmoid(s.operand(0, a) * beta)
    return (g * (const(linear) + const(1 - linear) * curve),)


@rule("gelu.<locals>.backward")
def _gelu(s: Saved, g: Tensor) -> tuple:
    x = s.operand(0, s["a"])
    if "t" in s:  # the tanh approximation
        t = tanh((x + 0.044715 * x ** 3) * math.sqrt(2 / math.pi))
        du = (1 + 3 * 0.044715 * x * x) * math.sqrt(2 / math.pi)
        return (g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du),)
    cdf = 0.5 * (1 + erf(x / math.sqrt(2.0)))
    pdf = exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    return (g * (cdf + x * pdf),)


@rule("softmax.<locals>.<lambda>")
def _softmax(s: Saved, g: Tensor) -> tuple:
    out, axis = s.output(s["out"]), s["axis"]
    return (out * (g - sum_(g * out, axis=axis, keepdim=True)),)


@rule("log_softmax.<locals>.<lambda>")
def _log_softmax(s: Saved, g: Tensor) -> tuple:
    out, axis = s.output(s["out"]), s["axis"]
    return (g - exp(out) * sum_(g, axis=axis, keepdim=True),)


@rule("_vector_norm.<locals>.backward")
def _vector_norm(s: Saved, g: Tensor) -> tuple:
    p, a, kept = s["p"], s["a"], list(s["kept"])
    xp = s["xp"]
    norm = reshape(s.output(s["full"].reshape(g._array.shape)), kept) + NORM_EPS
    g = reshape(g, kept)
    if p == 0:
        return (g * const(xp.zeros_like(a)),)
    sign = const(xp.sign(a))
    if math.isinf(p):
        return (g * sign * const((s["mag"] == s["full"]).astype(a.dtype)),)
    x = s.operand(0, a)
    if p == 2:
        return (g * x / norm,)
    return (g * abs_(x) ** (p - 1) * sign * norm ** (1 - p),)


@rule("cross_entropy.<locals>.backward")
def _cross_entropy(s: Saved, g: Tensor) -> tuple:
    xp, ax, logp = s["xp"], s["ax"], s["logp"]
    if s["reduction"] == "none":
        g = unsqueeze(g, -1) if s["squeeze"] else moveaxis(g, ax, -1)
    elif s["denom"] is not None:
        g = g / const(xp.asarray(s["denom"], dtype=g._array.dtype))
    if s["weights"] is not None:
        g = g * const(s["weights"])
    if s["use_softmax"]:
        # softmax is unchanged by a shift along the classes: the kept log-probabilities stand in
        # for the logits
        probs = softmax(moveaxis(s.operand(0, xp.moveaxis(logp, -1, ax)), ax, -1), axis=-1)
    else:  # the input holds probabilities: the loss is -label . log(input)
        probs = moveaxis(s.operand(0, xp.moveaxis(s["z"], -1, ax)), ax, -1)
    if s["soft"]:
        lab = const(s["lab"])
        d = probs - lab if s["use_softmax"] else -lab / probs
    else:
        hot = (xp.arange(s["classes"]) == s["safe"]).astype(logp.dtype)
        valid = const(s["valid"].astype(logp.dtype))
        d = (probs - const(hot)) * valid if s["use_softmax"] else -const(hot) * valid / probs
    return moveaxis(d * g, -1, ax), None


# the piecewise-linear activations of _activation_functional._pointwise: the slope is a constant
@rule(*(f"{n}.<locals>.backward" for n in ("relu6", "hardtanh", "hardshrink", "softshrink", "thresholded_relu",
                                            "hardsigmoid")))
def _piecewise_linear(s: Saved, g: Tensor) -> tuple:
    return (g * slope_of(s, 0, s["slope"]),)


@rule("dropout.<locals>.<lambda>")
def _dropout(s: Saved, g: Tensor) -> tuple:
    return (g * const(s["mask"]),)


def _swap_last(t: Tensor) -> Tensor:
    perm = list(range(t.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(t, perm)


@rule("inv.<locals>.<lambda>")
def _inv(s: Saved, g: Tensor) -> tuple:
    out = _swap_last(s.output(s["out"]))
    return (-(out @ g @ out),)


@rule("det.<locals>.backward")
def _det(s: Saved, g: Tensor) -> tuple:  # d det / dA = det * A^-T
    scale = unsqueeze(g * s.output(s["d"]), [-1, -2])
    return (scale * _swap_last(inv(s.operand(0, s["a"]))),)


@rule("cross.<locals>.backward")
def _cross(s: Saved, g: Tensor) -> tuple:  # d(x × y) = dx × y + x × dy
    x, y, ax = s.operand(0, s["xa"]), s.operand(1, s["ya"]), s["ax"]
    dtype = g._array.dtype
    return (fit(cross(y, g, axis=ax), (s["xa"].shape, dtype)) if s.wants(0) else None,
            fit(cross(g, x, axis=ax), (s["ya"].shape, dtype)) if s.wants(1) else None)


@rule("maxout.<locals>.backward")
def _maxout(s: Saved, g: Tensor) -> tuple:
    pick = first_largest(s["xp"], s["members"], s["out"], s["ax"])
    return (reshape(unsqueeze(g, s["ax"] + 1) * const(pick.astype(g._array.dtype)), list(s["a"].shape)),)


@rule("_solve_left.<locals>.backward")
def _solve(s: Saved, g: Tensor) -> tuple:  # A X = B: dB = A^-T g, dA = -dB X^T
    a, b, vector = s["a"], s["b"], s["vector"]
    out = s["out"]
    x = s.output(out[..., 0] if vector else out)
    if vector:
        x, g = unsqueeze(x, -1), unsqueeze(g, -1)
    gb = solve(_swap_last(s.operand(0, a)), g)
    dtype = g._array.dtype
    ga = fit(-(gb @ _swap_last(x)), (a.shape, dtype)) if s.wants(0) else None
    if not s.wants(1):
        return ga, None
    return ga, reshape(gb, [-1]) if vector else fit(gb, (b.shape, dtype))
