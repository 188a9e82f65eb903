"""Adagrad (paddle's update rule, defaults and accumulator name)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Union

from pycoll.device import array_module
from pycoll.optimizer._checks import real
from pycoll.optimizer._groups import BASE_OPTIONS
from pycoll.optimizer.lr_scheduler import LRScheduler
from pycoll.optimizer.optimizer import Optimizer


class Adagrad(Optimizer):
    """moment += g^2;  param -= lr * g / (sqrt(moment) + epsilon), the accumulator 'moment'
    starting at ``initial_accumulator_value``. Parameter groups may set 'epsilon' and
    'initial_accumulator_value' too."""

    _accumulator_names = ("moment",)
    _group_options = {**BASE_OPTIONS, "epsilon": lambda v, name: real(v, name, low=0.0),
                      "initial_accumulator_value": lambda v, name: real(v, name)}

    def __init__(self, learning_rate: Union[float, LRScheduler], epsilon: float = 1.0e-6,
                 parameters: Optional[Iterable[Any]] = None, weight_decay: Optional[Any] = None,
                 grad_clip: Optional[Any] = None, name: Optional[str] = None, initial_accumulator_value: float = 0.0):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        self._epsilon = real(epsilon, "epsilon", low=0.0)
        self._initial = real(initial_accumulator_value, "initial_accumulator_value")

    _rows_equal_dense = True  # a row whose gradient is zero keeps its moment and its value

    def _update(self, key: str, param: Any, grad: Any, lr: float, options: Dict[str, Any]) -> None:
        moment = self._array_acc("moment", key, param, options.get("initial_accumulator_value", self._initial))
        scratch = grad * grad
        moment += scratch
        denominator = array_module(param).sqrt(moment, out=scratch)  # (in place: a pass and an array fewer)
        denominator += options.get("epsilon", self._epsilon)
        step = lr * grad
        step /= denominator
        param -= step

    def _update_rows(self, key: str, param: Any, grad_rows: Any, lr: float, options: Dict[str, Any],
                     rows: Any) -> None:
        moment = self._array_acc("moment", key, param, options.get("initial_accumulator_value", self._initial))
        part = moment[rows]
        part += grad_rows * grad_rows
        moment[rows] = part
        param[rows] -= lr * grad_rows / (array_module(param).sqrt(part) + options.get("epsilon", self._epsilon))
