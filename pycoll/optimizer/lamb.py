"""Lamb (paddle's update rule, defaults and accumulator names)."""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, Optional, Union

from pycoll.device import array_module
from pycoll.optimizer._groups import BASE_OPTIONS
from pycoll.optimizer._moments import average_, beta, non_negative, scalar_power, set_moment_options
from pycoll.optimizer.lr_scheduler import LRScheduler
from pycoll.optimizer.optimizer import Optimizer
from pycoll.tensor import Tensor


def _exclude_fn(value: Any, name: str) -> Optional[Callable[[Tensor], bool]]:
    if value is not None and not callable(value):
        raise TypeError(f"{name} must be a callable taking a parameter, or None, got {type(value).__name__}")
    return value


class Lamb(Optimizer):
    """m = b1*m + (1-b1)*g;  v = b2*v + (1-b2)*g^2;
    r = (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + epsilon) + lamb_weight_decay * param;
    param -= lr * (||param|| / ||r||) * r, the trust ratio being 1 where either norm is 0.

    The trust ratio is taken where the parameter's weight decay is above 0 or ``always_adapt``
    is set, 1 otherwise; ``exclude_from_weight_decay_fn(param)`` returning True sets that
    parameter's decay to 0. beta1_pow_acc / beta2_pow_acc are kept as Adam's (b^t during step t).
    Parameter groups may set 'beta1', 'beta2', 'epsilon', 'lamb_weight_decay' and
    'exclude_from_weight_decay_fn' too; a group's 'weight_decay' is L2 on the gradient."""

    _accumulator_names = ("moment1", "moment2")
    _scalar_accumulators = ("beta1_pow_acc", "beta2_pow_acc")
    _group_options = {**BASE_OPTIONS, "beta1": beta, "beta2": beta, "epsilon": non_negative,
                      "lamb_weight_decay": non_negative, "exclude_from_weight_decay_fn": _exclude_fn}

    def __init__(self, learning_rate: Union[float, LRScheduler] = 0.001, lamb_weight_decay: float = 0.01,
                 beta1: Union[float, Tensor] = 0.9, beta2: Union[float, Tensor] = 0.999,
                 epsilon: Union[float, Tensor] = 1e-6, parameters: Optional[Iterable[Any]] = None,
                 grad_clip: Optional[Any] = None,
                 exclude_from_weight_decay_fn: Optional[Callable[[Tensor], bool]] = None,
                 multi_precision: bool = False, always_adapt: bool = False, name: Optional[str] = None):
        super().__init__(learning_rate, parameters, None, grad_clip, name, multi_precision=multi_precision)
        self._lamb_weight_decay = non_negative(lamb_weight_decay, "lamb_weight_decay")
        set_moment_options(self, beta1, beta2, epsilon)
        self._exclude = _exclude_fn(exclude_from_weight_decay_fn, "exclude_from_weight_decay_fn")
        self._always_adapt = bool(always_adapt)

    def _decay_of(self, key: str, options: Dict[str, Any]) -> float:
        exclude = options.get("exclude_from_weight_decay_fn", self._exclude)
        if exclude is not None and exclude(self._parameter_list[self._keys.index(key)]):
            return 0.0
        return options.get("lamb_weight_decay", self._lamb_weight_decay)

    def _update(self, key: str, param: Any, grad: Any, lr: float, options: Dict[str, Any]) -> None:
        b1, b2 = options.get("beta1", self._beta1), options.get("beta2", self._beta2)
        m = average_(self._array_acc("moment1", key, param), grad, b1)
        v = average_(self._array_acc("moment2", key, param), grad * grad, b2)
        b1_pow = scalar_power(self._accumulators["beta1_pow_acc"], key, b1, param)
        b2_pow = scalar_power(self._accumulators["beta2_pow_acc"], key, b2, param)
        xp = array_module(param)
        decay = self._decay_of(key, options)
        r = (m / (1 - b1_pow)) / (xp.sqrt(v / (1 - b2_pow)) + options.get("epsilon", self._epsilon))
        if decay:
            r += decay * param
        if decay > 0 or self._always_adapt:
            p_norm, r_norm = xp.linalg.norm(param), xp.linalg.norm(r)
            ratio = xp.where((p_norm > 0) & (r_norm > 0), p_norm / xp.where(r_norm > 0, r_norm, 1), 1)
            r *= lr * ratio
        else:
            r *= lr
        param -= r
