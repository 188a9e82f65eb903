"""Momentum SGD (paddle's rule)."""
from __future__ import annotations

from typing import Any, Iterable, Optional

from pycoll.optimizer.optimizer import Optimizer, _number
from pycoll.tensor import Tensor


class Momentum(Optimizer):
    """velocity = momentum * velocity + grad; param -= lr * velocity, or with use_nesterov
    param -= lr * (grad + momentum * velocity)."""

    _accumulator_names = ("velocity",)

    def __init__(self, learning_rate: float = 0.001, momentum: float = 0.9,
                 parameters: Optional[Iterable[Tensor]] = None, use_nesterov: bool = False,
                 weight_decay: Optional[float] = None, grad_clip: Optional[Any] = None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip)
        self._momentum = _number(momentum, "momentum")
        self._use_nesterov = bool(use_nesterov)

    def _update(self, key: str, param: Any, grad: Any) -> None:
        velocity = self._array_acc("velocity", key, param)
        velocity *= self._momentum
        velocity += grad
        if self._use_nesterov:
            param -= self._learning_rate * (grad + self._momentum * velocity)
        else:
            param -= self._learning_rate * velocity
