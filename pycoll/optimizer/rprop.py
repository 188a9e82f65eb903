"""Rprop (paddle's update rule, defaults and accumulator names)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Tuple

from pycoll.device import array_module
from pycoll.optimizer._checks import real
from pycoll.optimizer.optimizer import Optimizer


def _pair(value: Any, name: str) -> Tuple[float, float]:
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise TypeError(f"{name} must be a tuple of two numbers, got {value!r}")
    return real(value[0], f"{name}[0]"), real(value[1], f"{name}[1]")


class Rprop(Optimizer):
    """Each element keeps its own step size ('learning_rates', starting at ``learning_rate``) and
    its last gradient ('prevs'). Where g * prev > 0 the step grows: min(step * etas[1],
    learning_rate_range[1]); where g * prev < 0 it shrinks: max(step * etas[0],
    learning_rate_range[0]) and g counts as 0; then param -= sign(g) * step and prev = g.

    As in paddle, ``learning_rate`` is only the initial step size (a number, not a scheduler),
    and a parameter group's 'learning_rate' changes nothing."""

    _accumulator_names = ("prevs", "learning_rates")

    def __init__(self, learning_rate: float = 0.001, learning_rate_range: Tuple[float, float] = (1e-5, 50),
                 parameters: Optional[Iterable[Any]] = None, etas: Tuple[float, float] = (0.5, 1.2),
                 grad_clip: Optional[Any] = None, multi_precision: bool = False, name: Optional[str] = None):
        lr = real(learning_rate, "learning_rate")
        low, high = _pair(learning_rate_range, "learning_rate_range")
        if not 0.0 < low <= lr <= high:
            raise ValueError(f"learning_rate_range and learning_rate must satisfy 0 < learning_rate_range[0] <= "
                             f"learning_rate <= learning_rate_range[1], got {learning_rate_range!r} and {lr!r}")
        shrink, grow = _pair(etas, "etas")
        if not 0.0 < shrink < 1.0 < grow:
            raise ValueError(f"etas must satisfy 0 < etas[0] < 1 < etas[1], got {etas!r}")
        super().__init__(lr, parameters, None, grad_clip, name, multi_precision=multi_precision)
        self._initial, self._range, self._etas = lr, (low, high), (shrink, grow)

    def _update(self, key: str, param: Any, grad: Any, lr: float, options: Dict[str, Any]) -> None:
        xp = array_module(param)
        prev = self._array_acc("prevs", key, param)
        steps = self._array_acc("learning_rates", key, param, self._initial)
        trend = prev * grad
        grown = xp.minimum(steps * self._etas[1], self._range[1])
        shrunk = xp.maximum(steps * self._etas[0], self._range[0])
        steps[...] = xp.where(trend > 0, grown, xp.where(trend < 0, shrunk, steps))
        prev[...] = xp.where(trend < 0, 0, grad)
        param -= xp.sign(prev) * steps
