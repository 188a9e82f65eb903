"""ASGD, the stochastic average gradient (paddle's update rule, defaults and accumulator names)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Union

import numpy as np

from pycoll.device import array_module, is_array, to_module
from pycoll.optimizer._checks import integer
from pycoll.optimizer.lr_scheduler import LRScheduler
from pycoll.optimizer.optimizer import Optimizer
from pycoll.tensor import Tensor


class ASGD(Optimizer):
    """Keeps the last ``batch_num`` gradients of each parameter ('y', shape [batch_num, *param])
    and their sum ('d'). At step m (counting from 0; the count is 'm', int64 of shape [1]) with
    i = m % batch_num:  d = d - y[i] + g;  y[i] = g;  param -= lr * d / min(m + 1, batch_num).

    A float weight_decay is L2 on the gradient (so it enters the stored gradients too)."""

    _accumulator_names = ("d", "y", "m")

    def __init__(self, learning_rate: Union[float, LRScheduler] = 0.001, batch_num: int = 1,
                 parameters: Optional[Iterable[Any]] = None, weight_decay: Optional[Any] = None,
                 grad_clip: Optional[Any] = None, multi_precision: bool = False, name: Optional[str] = None):
        self._n = integer(batch_num, "batch_num", low=1)
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name, multi_precision=multi_precision)

    def _update(self, key: str, param: Any, grad: Any, lr: float, options: Dict[str, Any]) -> None:
        xp = array_module(param)
        d = self._array_acc("d", key, param)
        ys = self._accumulators["y"].setdefault(key, xp.zeros((self._n,) + param.shape, param.dtype))
        count = self._accumulators["m"].setdefault(key, xp.zeros(1, np.int64))
        seen = int(count[0])  # the steps before this one
        i = seen % self._n
        count += 1
        d -= ys[i]
        d += grad
        ys[i] = grad
        param -= (lr / min(seen + 1, self._n)) * d

    def _accumulator_from(self, entry: str, name: str, value: Any, param: Tensor) -> Any:
        if name == "d":
            return super()._accumulator_from(entry, name, value, param)
        array = value.array if isinstance(value, Tensor) else value
        if not is_array(array):
            raise TypeError(f"state_dict[{entry}] must be a Tensor or an array, got {type(value).__name__}")
        shape = (self._n,) + tuple(param.array.shape) if name == "y" else (1,)
        if tuple(array.shape) != shape:
            raise ValueError(f"state_dict[{entry}] has shape {list(array.shape)}, this ASGD (batch_num="
                             f"{self._n}) keeps {list(shape)}")
        xp = np if self._state_on_host else array_module(param.array)
        dtype = np.int64 if name == "m" else (np.float32 if self._mastered(param) else param.dtype)
        return to_module(array, xp).astype(dtype, copy=True)
