"""Adam and AdamW (paddle's update rules)."""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Optional

from pycoll.device import array_module
from pycoll.optimizer.optimizer import Optimizer, _number
from pycoll.tensor import Tensor


class Adam(Optimizer):
    """m = b1*m + (1-b1)*g;  v = b2*v + (1-b2)*g^2;
    param -= lr * sqrt(1-b2^t)/(1-b1^t) * m / (sqrt(v) + epsilon*sqrt(1-b2^t)),
    which is lr * m_hat / (sqrt(v_hat) + epsilon). A float weight_decay is L2 on the gradient."""

    _accumulator_names = ("moment1", "moment2")
    _scalar_accumulators = ("beta1_pow_acc", "beta2_pow_acc")

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, parameters: Optional[Iterable[Tensor]] = None,
                 weight_decay: Optional[float] = None, grad_clip: Optional[Any] = None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip)
        self._beta1 = _number(beta1, "beta1")
        self._beta2 = _number(beta2, "beta2")
        self._epsilon = _number(epsilon, "epsilon")
        if not (self._beta1 < 1 and self._beta2 < 1):
            raise ValueError(f"beta1 and beta2 must be in [0, 1), got {beta1} and {beta2}")

    def _update(self, key: str, param: Any, grad: Any) -> None:
        b1, b2 = self._beta1, self._beta2
        m = self._array_acc("moment1", key, param)
        v = self._array_acc("moment2", key, param)
        b1_pow = self._accumulators["beta1_pow_acc"].get(key, 1.0) * b1
        b2_pow = self._accumulators["beta2_pow_acc"].get(key, 1.0) * b2
        self._accumulators["beta1_pow_acc"][key] = b1_pow
        self._accumulators["beta2_pow_acc"][key] = b2_pow
        m *= b1
        m += (1 - b1) * grad
        v *= b2
        v += (1 - b2) * (grad * grad)
        correction = math.sqrt(1 - b2_pow)
        denom = array_module(v).sqrt(v)
        denom += self._epsilon * correction
        param -= (self._learning_rate * correction / (1 - b1_pow)) * m / denom


class AdamW(Adam):
    """Adam with decoupled weight decay: param *= 1 - lr * weight_decay before the Adam step,
    for the parameters whose name apply_decay_param_fun accepts (all by default)."""

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, parameters: Optional[Iterable[Tensor]] = None,
                 weight_decay: float = 0.01, lr_ratio: Any = None,
                 apply_decay_param_fun: Optional[Callable[[str], bool]] = None,
                 grad_clip: Optional[Any] = None):
        if lr_ratio is not None:
            raise ValueError("AdamW: lr_ratio (a learning rate per parameter) is not in pycoll")
        super().__init__(learning_rate, beta1, beta2, epsilon, parameters, grad_clip=grad_clip)
        self._coeff = _number(weight_decay, "weight_decay")
        self._apply_decay = apply_decay_param_fun

    def _update(self, key: str, param: Any, grad: Any) -> None:
        if self._coeff and (self._apply_decay is None or self._apply_decay(key)):
            param *= 1 - self._learning_rate * self._coeff
        super()._update(key, param, grad)
