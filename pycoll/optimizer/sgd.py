"""Plain stochastic gradient descent."""
from __future__ import annotations

from typing import Any, Dict

from pycoll.optimizer.optimizer import Optimizer


class SGD(Optimizer):
    """param -= learning_rate * grad."""

    def _update(self, key: str, param: Any, grad: Any, lr: float, options: Dict[str, Any]) -> None:
        param -= lr * grad
