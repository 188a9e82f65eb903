"""The strong-Wolfe line search L-BFGS uses (paddle's ``line_search_fn='strong_wolfe'``, itself
torch's): bracket a step that satisfies the strong Wolfe conditions, then zoom into the bracket
with safeguarded cubic interpolation (Nocedal & Wright, Numerical Optimization, 2nd ed.,
Algorithms 3.5 and 3.6, formula 3.59).

Steps, losses and directional derivatives are Python floats; gradients are arrays of the
parameters' module (NumPy or CuPy), never written in place.
"""
from __future__ import annotations

import math
from typing import Any, Callable, List, NamedTuple, Optional, Tuple

# evaluate(t) -> (the loss at x + t * d, its flat gradient there)
Evaluate = Callable[[float], Tuple[float, Any]]


def dot(x: Any, y: Any) -> float:
    """The inner product of two flat arrays, as paddle's L-BFGS takes it: sum(x * y)."""
    return float((x * y).sum())


def cubic_minimum(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                  bounds: Optional[Tuple[float, float]] = None) -> float:
    """Where the cubic through (x1, f1) and (x2, f2) with slopes g1 and g2 has its minimum,
    clamped into ``bounds`` (default: between x1 and x2); the middle of the bounds when the cubic
    has no minimum. A zero denominator gives an infinite position, clamped to a bound, as
    paddle's tensor arithmetic does (a quadratic or linear piece: the step runs to the bound);
    where paddle would get NaN (the points coincide, 0 / 0) this gives the middle instead."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - _divide(3 * (f1 - f2), x1 - x2)
    d2_square = d1 * d1 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = math.sqrt(d2_square)
    if x1 <= x2:
        position = x2 - (x2 - x1) * _divide(g2 + d2 - d1, g2 - g1 + 2 * d2)
    else:
        position = x1 - (x1 - x2) * _divide(g1 + d2 - d1, g1 - g2 + 2 * d2)
    if math.isnan(position):
        return (low + high) / 2.0
    return min(max(position, low), high)


def _divide(a: float, b: float) -> float:
    """a / b with IEEE's answer for b == 0 (a signed infinity, NaN for 0 / 0), as tensors give."""
    if b != 0:
        return a / b
    if a == 0 or math.isnan(a):
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


class _Point(NamedTuple):
    """A trial step: its length, the loss there, the gradient there, the slope along d there."""
    t: float
    f: float
    g: Any
    gtd: float


def strong_wolfe(evaluate: Evaluate, t: float, d: Any, loss: float, grad: Any, gtd: float,
                 c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                 max_ls: int = 25) -> Tuple[float, Any, float, int]:
    """A step along ``d`` from the point with ``loss``, ``grad`` and slope ``gtd`` (< 0), first
    trying ``t``: returns (the loss there, its gradient, the step, how many evaluations it took).

    The sufficient-decrease constant is ``c1``, the curvature one ``c2``; the search gives up
    after ``max_ls`` further trials, or when the bracket is narrower than ``tolerance_change``
    (measured in parameter change, |dt| * max|d|), returning the best step found."""
    d_norm = float(abs(d).max())
    start = _Point(0.0, loss, grad, gtd)

    def sufficient(p: _Point) -> bool:  # the Armijo condition
        return p.f <= loss + c1 * p.t * gtd

    def curved(p: _Point) -> bool:  # the strong curvature condition
        return abs(p.gtd) <= -c2 * gtd

    def trial(step: float) -> _Point:
        f, g = evaluate(step)
        return _Point(step, f, g, dot(g, d))

    # bracketing: grow the step until an interval holds a point that satisfies both conditions
    new = trial(t)
    evals, ls_iter = 1, 0
    prev = start
    bracket: List[_Point] = []
    done = False
    while ls_iter < max_ls:
        if not sufficient(new) or (ls_iter > 1 and new.f >= prev.f):
            bracket = [prev, new]
            break
        if curved(new):
            bracket, done = [new], True
            break
        if new.gtd >= 0:
            bracket = [prev, new]
            break
        step = cubic_minimum(prev.t, prev.f, prev.gtd, new.t, new.f, new.gtd,
                             bounds=(new.t + 0.01 * (new.t - prev.t), new.t * 10))
        prev, new = new, trial(step)
        evals += 1
        ls_iter += 1
    if ls_iter == max_ls:
        bracket = [start, new]

    # zoom: shrink the bracket, keeping its low end the best point that satisfies Armijo
    low, high = (0, 1) if bracket[0].f <= bracket[-1].f else (1, 0)
    insufficient_progress = False
    while not done and ls_iter < max_ls:
        if abs(bracket[1].t - bracket[0].t) * d_norm < tolerance_change:
            break
        step = cubic_minimum(bracket[0].t, bracket[0].f, bracket[0].gtd,
                             bracket[1].t, bracket[1].f, bracket[1].gtd)
        step, insufficient_progress = _away_from_ends(step, bracket[0].t, bracket[1].t, insufficient_progress)
        new = trial(step)
        evals += 1
        ls_iter += 1
        if not sufficient(new) or new.f >= bracket[low].f:
            bracket[high] = new
            low, high = (0, 1) if bracket[0].f <= bracket[1].f else (1, 0)
            continue
        if curved(new):
            done = True
        elif new.gtd * (bracket[high].t - bracket[low].t) >= 0:
            bracket[high] = bracket[low]
        bracket[low] = new
    best = bracket[low]
    return best.f, best.g, best.t, evals


def _away_from_ends(step: float, a: float, b: float, insufficient: bool) -> Tuple[float, bool]:
    """Keep a zoom trial off the bracket [a, b]'s ends: a step within a tenth of the bracket of an
    end is moved a tenth of the bracket inside it when the last trial was also that close, or when
    it lies on or outside the end. Returns the step and whether this one was too close."""
    low, high = min(a, b), max(a, b)
    margin = 0.1 * (high - low)
    if min(high - step, step - low) >= margin:
        return step, False
    if not (insufficient or step >= high or step <= low):
        return step, True
    return (high - margin if abs(step - high) < abs(step - low) else low + margin), False
