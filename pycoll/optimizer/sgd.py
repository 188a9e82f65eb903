"""Plain stochastic gradient descent."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Union

from pycoll.optimizer.lr_scheduler import LRScheduler
from pycoll.optimizer.optimizer import Optimizer


class SGD(Optimizer):
    """param -= learning_rate * grad."""

    def __init__(self, learning_rate: Union[float, LRScheduler] = 0.001, parameters: Optional[Iterable[Any]] = None,
                 weight_decay: Optional[float] = None, grad_clip: Optional[Any] = None,
                 multi_precision: bool = False, name: Optional[str] = None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name, multi_precision=multi_precision)

    _rows_equal_dense = True  # a row whose gradient is zero stays as it is

    def _update(self, key: str, param: Any, grad: Any, lr: float, options: Dict[str, Any]) -> None:
        param -= lr * grad

    def _update_rows(self, key: str, param: Any, grad_rows: Any, lr: float, options: Dict[str, Any],
                     rows: Any) -> None:
        param[rows] -= lr * grad_rows
