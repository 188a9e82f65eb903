"""Adadelta (paddle's update rule, defaults and accumulator names)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Union

from pycoll.device import array_module
from pycoll.optimizer._checks import real
from pycoll.optimizer._groups import BASE_OPTIONS
from pycoll.optimizer._moments import attr, average_, non_negative
from pycoll.optimizer.lr_scheduler import LRScheduler
from pycoll.optimizer.optimizer import Optimizer


def _rate(value: Any, name: str) -> float:
    return real(value, name, low=0.0, high=1.0)


class Adadelta(Optimizer):
    """avg_g2 = rho*avg_g2 + (1-rho)*g^2;  update = -sqrt((avg_dx2 + epsilon) / (avg_g2 + epsilon)) * g;
    avg_dx2 = rho*avg_dx2 + (1-rho)*update^2;  param += lr * update.

    The accumulators are paddle's '_avg_squared_grad' and '_avg_squared_update' (so the state
    keys read '<param>__avg_squared_grad_0'). Parameter groups may set 'epsilon' and 'rho' too."""

    _accumulator_names = ("_avg_squared_grad", "_avg_squared_update")
    _group_options = {**BASE_OPTIONS, "epsilon": non_negative, "rho": _rate}

    def __init__(self, learning_rate: Union[float, LRScheduler] = 0.001, epsilon: float = 1.0e-6,
                 rho: float = 0.95, parameters: Optional[Iterable[Any]] = None, weight_decay: Optional[Any] = None,
                 grad_clip: Optional[Any] = None, name: Optional[str] = None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._epsilon = non_negative(epsilon, "epsilon")
        self._rho = _rate(rho, "rho")

    def _update(self, key: str, param: Any, grad: Any, lr: float, options: Dict[str, Any]) -> None:
        rho, epsilon = options.get("rho", self._rho), attr(options.get("epsilon", self._epsilon), param)
        avg_g2 = average_(self._array_acc("_avg_squared_grad", key, param), grad * grad, rho)
        avg_dx2 = self._array_acc("_avg_squared_update", key, param)
        xp = array_module(param)
        update = xp.sqrt(avg_dx2 + epsilon) / xp.sqrt(avg_g2 + epsilon) * grad
        average_(avg_dx2, update * update, rho)
        param -= lr * update
