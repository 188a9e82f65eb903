"""RMSProp (paddle's update rule, defaults and accumulator names)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Union

from pycoll.device import array_module
from pycoll.optimizer._checks import real
from pycoll.optimizer._groups import BASE_OPTIONS
from pycoll.optimizer.lr_scheduler import LRScheduler
from pycoll.optimizer.optimizer import Optimizer


def _non_negative(value: Any, name: str) -> float:
    return real(value, name, low=0.0)


class RMSProp(Optimizer):
    """mean_square = rho * mean_square + (1 - rho) * g^2;
    momentum = momentum_coeff * momentum + lr * g / sqrt(mean_square + epsilon);  param -= momentum.

    With ``centered`` the denominator is sqrt(mean_square - mean_grad^2 + epsilon), mean_grad
    being rho * mean_grad + (1 - rho) * g. As in paddle all three accumulators ('momentum',
    'mean_square', 'mean_grad') are kept, mean_grad staying zero when not centered; epsilon sits
    inside the square root. Parameter groups may set 'rho', 'epsilon', 'momentum' and 'centered'."""

    _accumulator_names = ("momentum", "mean_square", "mean_grad")
    _group_options = {**BASE_OPTIONS, "rho": _non_negative, "epsilon": _non_negative, "momentum": _non_negative,
                      "centered": lambda v, name: bool(v)}

    def __init__(self, learning_rate: Union[float, LRScheduler], rho: float = 0.95, epsilon: float = 1.0e-6,
                 momentum: float = 0.0, centered: bool = False, parameters: Optional[Iterable[Any]] = None,
                 weight_decay: Optional[Any] = None, grad_clip: Optional[Any] = None, name: Optional[str] = None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._rho = _non_negative(rho, "rho")
        self._epsilon = _non_negative(epsilon, "epsilon")
        self._momentum = _non_negative(momentum, "momentum")
        self._centered = bool(centered)

    def _update(self, key: str, param: Any, grad: Any, lr: float, options: Dict[str, Any]) -> None:
        rho = options.get("rho", self._rho)
        momentum = self._array_acc("momentum", key, param)
        mean_square = self._array_acc("mean_square", key, param)
        mean_grad = self._array_acc("mean_grad", key, param)
        mean_square *= rho
        mean_square += (1 - rho) * (grad * grad)
        variance = mean_square
        if options.get("centered", self._centered):
            mean_grad *= rho
            mean_grad += (1 - rho) * grad
            variance = mean_square - mean_grad * mean_grad
        momentum *= options.get("momentum", self._momentum)
        momentum += lr * grad / array_module(param).sqrt(variance + options.get("epsilon", self._epsilon))
        param -= momentum
