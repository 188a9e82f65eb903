"""Momentum SGD (paddle's rule)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Union

from pycoll.optimizer._checks import real
from pycoll.optimizer._groups import BASE_OPTIONS
from pycoll.optimizer.lr_scheduler import LRScheduler
from pycoll.optimizer.optimizer import Optimizer


class Momentum(Optimizer):
    """velocity = momentum * velocity + grad; param -= lr * velocity, or with use_nesterov
    param -= lr * (grad + momentum * velocity). Parameter groups may set 'momentum' and
    'use_nesterov' too."""

    _accumulator_names = ("velocity",)
    _group_options = {**BASE_OPTIONS, "momentum": lambda v, name: real(v, name, low=0.0),
                      "use_nesterov": lambda v, name: bool(v)}

    def __init__(self, learning_rate: Union[float, LRScheduler] = 0.001, momentum: float = 0.9,
                 parameters: Optional[Iterable[Any]] = None, use_nesterov: bool = False,
                 weight_decay: Optional[float] = None, grad_clip: Optional[Any] = None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip)
        self._momentum = real(momentum, "momentum", low=0.0)
        self._use_nesterov = bool(use_nesterov)

    def _update(self, key: str, param: Any, grad: Any, lr: float, options: Dict[str, Any]) -> None:
        momentum = options.get("momentum", self._momentum)
        velocity = self._array_acc("velocity", key, param)
        velocity *= momentum
        velocity += grad
        if options.get("use_nesterov", self._use_nesterov):
            param -= lr * (grad + momentum * velocity)
        else:
            param -= lr * velocity
