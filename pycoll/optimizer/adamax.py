"""Adamax (paddle's update rule, defaults and accumulator names)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Union

from pycoll.device import array_module
from pycoll.optimizer._groups import BASE_OPTIONS
from pycoll.optimizer._moments import attr, average_, beta, non_negative, scalar_power, set_moment_options
from pycoll.optimizer.lr_scheduler import LRScheduler
from pycoll.optimizer.optimizer import Optimizer
from pycoll.tensor import Tensor


class Adamax(Optimizer):
    """moment = b1*moment + (1-b1)*g;  inf_norm = max(b2*inf_norm + epsilon, |g|);
    param -= lr / (1-b1^t) * moment / inf_norm.

    beta1_pow_acc is kept as Adam's (b1^t during step t). A float weight_decay is L2 on the
    gradient. Parameter groups may set 'beta1', 'beta2' and 'epsilon' too."""

    _accumulator_names = ("moment", "inf_norm")
    _moments_in_float32 = True  # (paddle's, for a 16-bit parameter)
    _scalar_accumulators = ("beta1_pow_acc",)
    _group_options = {**BASE_OPTIONS, "beta1": beta, "beta2": beta, "epsilon": non_negative}

    def __init__(self, learning_rate: Union[float, LRScheduler] = 0.001, beta1: Union[float, Tensor] = 0.9,
                 beta2: Union[float, Tensor] = 0.999, epsilon: Union[float, Tensor] = 1e-8,
                 parameters: Optional[Iterable[Any]] = None, weight_decay: Optional[Any] = None,
                 grad_clip: Optional[Any] = None, name: Optional[str] = None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name)
        set_moment_options(self, beta1, beta2, epsilon)

    def _update(self, key: str, param: Any, grad: Any, lr: float, options: Dict[str, Any]) -> None:
        b1 = options.get("beta1", self._beta1)
        moment = average_(self._array_acc("moment", key, param), grad, b1)
        inf_norm = self._array_acc("inf_norm", key, param)
        inf_norm *= attr(options.get("beta2", self._beta2), param)
        inf_norm += options.get("epsilon", self._epsilon)
        array_module(param).maximum(inf_norm, abs(grad), out=inf_norm)
        b1_pow = scalar_power(self._accumulators["beta1_pow_acc"], key, b1, param)
        param -= (lr / (1 - b1_pow)) * moment / inf_norm
