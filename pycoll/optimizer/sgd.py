"""Plain stochastic gradient descent."""
from __future__ import annotations

from typing import Any

from pycoll.optimizer.optimizer import Optimizer


class SGD(Optimizer):
    """param -= learning_rate * grad."""

    def _update(self, key: str, param: Any, grad: Any) -> None:
        param -= self._learning_rate * grad
