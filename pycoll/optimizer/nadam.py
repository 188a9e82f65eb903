"""NAdam (paddle's update rule, defaults and accumulator names)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Union

from pycoll.device import array_module
from pycoll.optimizer._groups import BASE_OPTIONS
from pycoll.optimizer._moments import attr, average_, beta, non_negative, non_negative_rate, set_moment_options
from pycoll.optimizer.lr_scheduler import LRScheduler
from pycoll.optimizer.optimizer import Optimizer
from pycoll.tensor import Tensor

_MU_BASE = 0.96  # the base of NAdam's momentum schedule (paddle's and the paper's)


class NAdam(Optimizer):
    """At step t, with psi = momentum_decay:  mu_t = b1 * (1 - 0.5 * 0.96^(t*psi)),
    mu_{t+1} = b1 * (1 - 0.5 * 0.96^((t+1)*psi));  m, v as Adam's;
    m_hat = mu_{t+1} * m / (1 - mu_1...mu_{t+1}) + (1 - mu_t) * g / (1 - mu_1...mu_t);
    v_hat = v / (1 - b2^t);  param -= lr * m_hat / (sqrt(v_hat) + epsilon).

    As in paddle, the running 0.96^t ('momentum_decay_pow'), b2^t ('beta2_pow') and
    mu_1...mu_t ('mu_product') are kept as arrays of the parameter's shape, starting at 1.
    A float weight_decay is L2 on the gradient. Parameter groups may set 'beta1', 'beta2',
    'epsilon' and 'momentum_decay' too."""

    _accumulator_names = ("momentum_decay_pow", "beta2_pow", "mu_product", "moment1", "moment2")
    _group_options = {**BASE_OPTIONS, "beta1": beta, "beta2": beta, "epsilon": non_negative,
                      "momentum_decay": non_negative}

    def __init__(self, learning_rate: Union[float, LRScheduler] = 0.002, beta1: Union[float, Tensor] = 0.9,
                 beta2: Union[float, Tensor] = 0.999, epsilon: float = 1.0e-8, momentum_decay: float = 0.004,
                 parameters: Optional[Iterable[Any]] = None, weight_decay: Optional[Any] = None,
                 grad_clip: Optional[Any] = None, name: Optional[str] = None):
        super().__init__(non_negative_rate(learning_rate, "learning_rate"), parameters, weight_decay, grad_clip, name)
        set_moment_options(self, beta1, beta2, epsilon)
        self._momentum_decay = non_negative(momentum_decay, "momentum_decay")

    def _update(self, key: str, param: Any, grad: Any, lr: float, options: Dict[str, Any]) -> None:
        b1, b2 = options.get("beta1", self._beta1), options.get("beta2", self._beta2)
        psi, base = attr(options.get("momentum_decay", self._momentum_decay), param), attr(_MU_BASE, param)
        decay_pow = self._array_acc("momentum_decay_pow", key, param, 1.0)
        b2_pow = self._array_acc("beta2_pow", key, param, 1.0)
        mu_product = self._array_acc("mu_product", key, param, 1.0)
        decay_pow *= base
        b2_pow *= attr(b2, param)
        schedule = decay_pow ** psi  # 0.96^(t*psi)
        mu = attr(b1, param) * (1 - 0.5 * schedule)
        mu_next = attr(b1, param) * (1 - 0.5 * schedule * base ** psi)
        mu_product *= mu
        m = average_(self._array_acc("moment1", key, param), grad, b1)
        v = average_(self._array_acc("moment2", key, param), grad * grad, b2)
        m_hat = mu_next * m / (1 - mu_product * mu_next) + (1 - mu) * grad / (1 - mu_product)
        v_hat = v / (1 - b2_pow)
        param -= lr * m_hat / (array_module(param).sqrt(v_hat) + options.get("epsilon", self._epsilon))
