"""RAdam (paddle's update rule, defaults and accumulator names)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Union

import numpy as np

from pycoll.device import array_module
from pycoll.optimizer._groups import BASE_OPTIONS
from pycoll.optimizer._moments import attr, average_, beta, non_negative, non_negative_rate, set_moment_options
from pycoll.optimizer.lr_scheduler import LRScheduler
from pycoll.optimizer.optimizer import Optimizer
from pycoll.tensor import Tensor

_RECTIFY_FROM = 5.0  # the variance is rectified once rho_t exceeds this (paddle's and the paper's)


class RAdam(Optimizer):
    """m, v as Adam's;  m_hat = m / (1 - b1^t);  rho_inf = 2 / (1 - b2) - 1;
    rho_t = rho_inf - 2 t b2^t / (1 - b2^t).  Where rho_t > 5:
    param -= lr * m_hat * r_t * sqrt(1 - b2^t) / (sqrt(v) + epsilon), with
    r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t));
    otherwise param -= lr * m_hat.

    As in paddle, b1^t ('beta1_pow'), b2^t ('beta2_pow') and t b2^t / (1 - b2^t) ('rho') are
    kept as arrays of the parameter's shape, each holding one number, computed once ('rho' is
    carried from step to step as (rho * (b2 - b2^t) + b2^t) / (1 - b2^t)). A float weight_decay is
    L2 on the gradient. Parameter groups may set 'beta1', 'beta2' and 'epsilon' too."""

    _accumulator_names = ("beta1_pow", "beta2_pow", "rho", "moment1", "moment2")
    _group_options = {**BASE_OPTIONS, "beta1": beta, "beta2": beta, "epsilon": non_negative}

    def __init__(self, learning_rate: Union[float, LRScheduler] = 0.001, beta1: Union[float, Tensor] = 0.9,
                 beta2: Union[float, Tensor] = 0.999, epsilon: float = 1.0e-8,
                 parameters: Optional[Iterable[Any]] = None, weight_decay: Optional[Any] = None,
                 grad_clip: Optional[Any] = None, name: Optional[str] = None):
        super().__init__(non_negative_rate(learning_rate, "learning_rate"), parameters, weight_decay, grad_clip, name)
        set_moment_options(self, beta1, beta2, epsilon)

    def _update(self, key: str, param: Any, grad: Any, lr: float, options: Dict[str, Any]) -> None:
        b1, b2 = options.get("beta1", self._beta1), options.get("beta2", self._beta2)
        b1_pow = self._array_acc("beta1_pow", key, param, 1.0)
        b2_pow = self._array_acc("beta2_pow", key, param, 1.0)
        rho = self._array_acc("rho", key, param, 1.0)
        # every element of the three is the same number: computed once, on a one-element view
        # (a device array stays on the device), in paddle's order of the operations (float32
        # shows it), then written into the whole arrays
        b1_t = _first(b1_pow) * attr(b1, param)
        b2_t = _first(b2_pow) * attr(b2, param)
        rho_acc = (_first(rho) * (attr(b2, param) - b2_t) + b2_t) / (1 - b2_t)
        b1_pow[...], b2_pow[...], rho[...] = b1_t, b2_t, rho_acc
        m = average_(self._array_acc("moment1", key, param), grad, b1)
        v = average_(self._array_acc("moment2", key, param), grad * grad, b2)
        step = (lr / (1 - b1_t)) * m
        rho_inf = 2 / (1 - attr(b2, param)) - 1
        if rho_inf > _RECTIFY_FROM:  # else rho_t, which stays below rho_inf, never gets there
            xp = array_module(param)
            rho_t = rho_inf - 2 * rho_acc
            r = xp.sqrt(xp.maximum((rho_t - 4) * (rho_t - 2), 0) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            adaptive = xp.sqrt(v)
            adaptive += options.get("epsilon", self._epsilon)
            xp.divide(r * xp.sqrt(1 - b2_t), adaptive, out=adaptive)
            if xp is not np:  # (reading rho_t on the host would wait for the device)
                step *= xp.where(rho_t > _RECTIFY_FROM, adaptive, 1)
            elif rho_t[0] > _RECTIFY_FROM:
                step *= adaptive
        param -= step


def _first(acc: Any) -> Any:
    """A one-element view of ``acc``."""
    return acc.reshape(-1)[:1]
