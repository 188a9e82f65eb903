"""Momentum SGD (paddle's rule)."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Union

from pycoll.optimizer._checks import real
from pycoll.optimizer._groups import BASE_OPTIONS
from pycoll.optimizer.lr_scheduler import LRScheduler
from pycoll.optimizer.optimizer import Optimizer
from pycoll.regularizer import L2Decay


class Momentum(Optimizer):
    """velocity = momentum * velocity + grad; param -= lr * velocity, or with use_nesterov
    param -= lr * (grad + momentum * velocity). Parameter groups may set 'momentum',
    'use_nesterov' and 'rescale_grad' too.

    ``rescale_grad`` multiplies the gradient first; an L2 weight decay is added after that (paddle
    fuses it into its kernel), an L1 one before. ``use_multi_tensor`` (paddle's fused update of
    all parameters at once) is accepted and changes nothing: pycoll updates parameter by parameter."""

    _accumulator_names = ("velocity",)
    _group_options = {**BASE_OPTIONS, "momentum": lambda v, name: real(v, name, low=0.0),
                      "use_nesterov": lambda v, name: bool(v), "rescale_grad": real}

    def __init__(self, learning_rate: Union[float, LRScheduler] = 0.001, momentum: float = 0.9,
                 parameters: Optional[Iterable[Any]] = None, use_nesterov: bool = False,
                 weight_decay: Optional[float] = None, grad_clip: Optional[Any] = None,
                 multi_precision: bool = False, rescale_grad: float = 1.0, use_multi_tensor: bool = False,
                 name: Optional[str] = None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name, multi_precision=multi_precision)
        self._momentum = real(momentum, "momentum", low=0.0)
        self._use_nesterov = bool(use_nesterov)
        self._rescale_grad = real(rescale_grad, "rescale_grad")

    def _with_decay(self, grad: Any, param: Any, term: Any, options: Dict[str, Any]) -> Any:
        rescale = options.get("rescale_grad", self._rescale_grad)
        if rescale == 1.0:
            return super()._with_decay(grad, param, term, options)
        if isinstance(term, L2Decay):
            return super()._with_decay(grad * rescale, param, term, options)
        return super()._with_decay(grad, param, term, options) * rescale

    def _update(self, key: str, param: Any, grad: Any, lr: float, options: Dict[str, Any]) -> None:
        momentum = options.get("momentum", self._momentum)
        velocity = self._array_acc("velocity", key, param)
        velocity *= momentum
        velocity += grad
        if options.get("use_nesterov", self._use_nesterov):
            param -= lr * (grad + momentum * velocity)
        else:
            param -= lr * velocity
