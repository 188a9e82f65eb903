"""Adam (paddle's update rule; AdamW, its decoupled-decay form, is in ``adamw``)."""
from __future__ import annotations

import math
from typing import Any, Dict, Iterable, Optional, Union

import numpy as np

from pycoll.device import array_module
from pycoll.kernels import device_math, host_math
from pycoll.optimizer._checks import real
from pycoll.optimizer._groups import BASE_OPTIONS
from pycoll.optimizer._moments import beta, double_power, set_moment_options
from pycoll.optimizer.lr_scheduler import LRScheduler
from pycoll.optimizer.optimizer import Optimizer
from pycoll.tensor import Tensor


class Adam(Optimizer):
    """m = b1*m + (1-b1)*g;  v = b2*v + (1-b2)*g^2;
    param -= lr * sqrt(1-b2^t)/(1-b1^t) * m / (sqrt(v) + epsilon*sqrt(1-b2^t)),
    which is lr * m_hat / (sqrt(v_hat) + epsilon). A float weight_decay is L2 on the gradient.

    beta1_pow_acc / beta2_pow_acc hold paddle's values: b^t while step t runs, b^(t+1) after it
    (they start at b and are multiplied by b after each update), so a state moves between paddle
    and pycoll unchanged. Parameter groups may set 'beta1', 'beta2' and 'epsilon' too.

    ``amsgrad``: the denominator uses the largest v so far (accumulator 'moment2_max') instead of
    v. ``lazy_mode``: a parameter with a sparse gradient (an ``Embedding(sparse=True)`` weight)
    has only the rows that gradient touched updated, moments included; the other rows keep their
    values and moments that step, while the beta powers advance once per step for the whole
    parameter (paddle's GPU kernel and documentation; paddle 3.3.1's CPU sparse kernel uses step
    t+1's bias correction, a bug pycoll does not copy). Dense gradients update every row, lazy or
    not (paddle's too). ``use_multi_tensor`` (paddle's fused update of all
    parameters at once) is accepted and changes nothing either."""

    _accumulator_names = ("moment1", "moment2")
    _scalar_accumulators = ("beta1_pow_acc", "beta2_pow_acc")
    _moments_in_float32 = True
    _group_options = {**BASE_OPTIONS, "beta1": beta, "beta2": beta,
                      "epsilon": lambda v, name: real(v, name, low=0.0), "lazy_mode": lambda v, name: bool(v)}

    def __init__(self, learning_rate: Union[float, LRScheduler] = 0.001, beta1: Union[float, Tensor] = 0.9,
                 beta2: Union[float, Tensor] = 0.999, epsilon: Union[float, Tensor] = 1e-8, parameters: Optional[Iterable[Any]] = None,
                 weight_decay: Optional[float] = None, grad_clip: Optional[Any] = None, lazy_mode: bool = False,
                 multi_precision: bool = False, use_multi_tensor: bool = False, amsgrad: bool = False,
                 name: Optional[str] = None):
        self._amsgrad = bool(amsgrad)
        self._lazy_mode = bool(lazy_mode)
        if self._amsgrad:
            self._accumulator_names = Adam._accumulator_names + ("moment2_max",)
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name, multi_precision=multi_precision)
        set_moment_options(self, beta1, beta2, epsilon)

    def _update(self, key: str, param: Any, grad: Any, lr: float, options: Dict[str, Any]) -> None:
        moments = [self._array_acc(name, key, param) for name in self._accumulator_names]
        self._adam(key, param, grad, *moments, lr=lr, options=options)

    def _update_rows(self, key: str, param: Any, grad_rows: Any, lr: float, options: Dict[str, Any],
                     rows: Any) -> None:
        """lazy_mode's update: `rows` of the parameter and of its moments alone (`grad_rows`,
        their gradient)."""
        whole = [param] + [self._array_acc(name, key, param) for name in self._accumulator_names]
        parts = [a[rows] for a in whole]
        self._adam(key, parts[0], grad_rows, *parts[1:], lr=lr, options=options)
        for a, part in zip(whole, parts):
            a[rows] = part

    def _adam(self, key: str, param: Any, grad: Any, m: Any, v: Any, v_max: Any = None, *, lr: float,
              options: Dict[str, Any], decay: Optional[float] = None) -> None:
        """One step of `param` (the parameter or some of its rows) and its moments, in place;
        `param` multiplied by `decay` first if given (AdamW's). Host arrays take one pass of the
        C++ kernel and device arrays one CUDA kernel, each rounding every operation as the array
        formula below does (the same bits)."""
        b1, b2 = options.get("beta1", self._beta1), options.get("beta2", self._beta2)
        pows1, pows2 = self._accumulators["beta1_pow_acc"], self._accumulators["beta2_pow_acc"]
        b1_pow, b2_pow = pows1.get(key, b1), pows2.get(key, b2)  # b^t at step t, in double: the
        # results of paddle's kernels are closer to it than to powers kept in float32
        correction = math.sqrt(1 - b2_pow)  # Python floats (set_lr takes numpy's too), so that
        epsilon = float(options.get("epsilon", self._epsilon) * correction)  # both paths round
        step = float(lr * correction / (1 - b1_pow))  # them to the parameter's dtype
        pows1[key], pows2[key] = b1_pow * b1, b2_pow * b2
        scalars = dict(decay=1.0 if decay is None else decay, beta1=b1, beta2=b2, epsilon=epsilon, step=step)
        if host_math.adam_step(param, grad, m, v, v_max, **scalars) or \
                device_math.adam_step(param, grad, m, v, v_max, **scalars):
            return
        if decay is not None:
            param *= decay
        m *= b1  # in the parameter's dtype, 1 - b from the float (paddle's adam kernels; not _moments.average_)
        m += (1 - b1) * grad
        v *= b2
        v += (1 - b2) * (grad * grad)
        xp = array_module(v)
        if v_max is not None:
            xp.maximum(v_max, v, out=v_max)
            v = v_max
        denom = xp.sqrt(v)
        denom += epsilon
        param -= step * m / denom

    def _scalar_from(self, name: str, saved: float, param: Tensor) -> float:
        """The beta powers are kept in double and saved in paddle's float32 (float64 for float64
        parameters, which is exact): the double power they were rounded from is found again."""
        if param.array.dtype == np.float64:
            return saved
        options = self._options_of(param)
        which = "beta1" if name == "beta1_pow_acc" else "beta2"
        return double_power(options.get(which, getattr(self, f"_{which}")), saved)
