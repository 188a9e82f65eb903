"""AdamW (paddle's update rule: Adam with decoupled weight decay)."""
from __future__ import annotations

from typing import Any, Callable, Dict, Iterable, Optional, Union

from pycoll.optimizer._groups import check_rate
from pycoll.optimizer._moments import non_negative
from pycoll.optimizer.adam import Adam
from pycoll.optimizer.lr_scheduler import LRScheduler
from pycoll.tensor import Tensor


class AdamW(Adam):
    """Adam with decoupled weight decay: param *= 1 - lr * weight_decay before the Adam step,
    for the parameters whose name apply_decay_param_fun accepts (all by default). A parameter
    group's 'weight_decay' is this coefficient for its parameters (paddle's meaning), and its
    'learning_rate' multiplier scales the decay as it scales the step; so does ``lr_ratio(param)``
    (layer-wise rates), when given."""

    # a group's weight_decay is the decoupled coefficient: a number
    _group_options = {**Adam._group_options, "weight_decay": check_rate}

    def __init__(self, learning_rate: Union[float, LRScheduler] = 0.001, beta1: Union[float, Tensor] = 0.9,
                 beta2: Union[float, Tensor] = 0.999, epsilon: Union[float, Tensor] = 1e-8, parameters: Optional[Iterable[Any]] = None,
                 weight_decay: Union[float, Tensor] = 0.01, use_lowprecision_moment: bool = False, lr_ratio: Any = None,
                 apply_decay_param_fun: Optional[Callable[[str], bool]] = None,
                 grad_clip: Optional[Any] = None, lazy_mode: bool = False, multi_precision: bool = False,
                 amsgrad: bool = False, name: Optional[str] = None):
        if lr_ratio is not None and not callable(lr_ratio):
            raise TypeError(f"AdamW: lr_ratio must be a function of a parameter giving its learning rate's ratio, "
                            f"got {type(lr_ratio).__name__}")
        if use_lowprecision_moment:
            raise ValueError("AdamW: use_lowprecision_moment (float16 moments) is not in pycoll")
        super().__init__(learning_rate, beta1, beta2, epsilon, parameters, grad_clip=grad_clip, lazy_mode=lazy_mode,
                         multi_precision=multi_precision, amsgrad=amsgrad, name=name)
        self._coeff = non_negative(weight_decay, "weight_decay")  # a number or a one-element Tensor
        self._apply_decay = apply_decay_param_fun
        self._lr_ratio = lr_ratio

    def _rate_factor(self, p: Tensor, options: Dict[str, Any]) -> float:
        """lr_ratio(p) scales the parameter's rate, its step and its decay both (paddle's GPU
        kernel; its CPU build refuses lr_ratio)."""
        factor = super()._rate_factor(p, options)
        return factor if self._lr_ratio is None else factor * float(self._lr_ratio(p))

    _groups_set_regularizer = False  # paddle's AdamW groups set the learning rate only

    def _l2_coeff(self, options: Dict[str, Any]) -> Optional[float]:
        return None  # the weight decay is decoupled: applied to the parameter in _update

    def _adam(self, key: str, param: Any, grad: Any, m: Any, v: Any, v_max: Any = None, *, lr: float,
              options: Dict[str, Any], decay: Optional[float] = None) -> None:
        coeff = options.get("weight_decay", self._coeff)  # in lazy_mode, on the rows updated alone (paddle's)
        if coeff and (self._apply_decay is None or self._apply_decay(key)):
            decay = 1 - lr * coeff
        super()._adam(key, param, grad, m, v, v_max, lr=lr, options=options, decay=decay)
