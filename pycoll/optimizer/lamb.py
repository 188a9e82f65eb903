"""Lamb (paddle's update rule, defaults and accumulator names)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

import numpy as np

from pycoll.device import array_module, to_module
from pycoll.optimizer._groups import BASE_OPTIONS
from pycoll.optimizer._moments import average_, beta, non_negative, scalar_power, set_moment_options
from pycoll.optimizer.lr_scheduler import LRScheduler
from pycoll.optimizer.optimizer import Optimizer
from pycoll.tensor import Tensor

# this rank's squares of each parameter's value and update, one row each ([n, 2], the parameters
# named in order) -> the whole parameters' (see Lamb.complete_trust_norms_with)
TrustSums = Callable[[List[str], np.ndarray], np.ndarray]


def _exclude_fn(value: Any, name: str) -> Optional[Callable[[Tensor], bool]]:
    if value is not None and not callable(value):
        raise TypeError(f"{name} must be a callable taking a parameter, or None, got {type(value).__name__}")
    return value


def _trust_ratio(xp: Any, p_norm: Any, r_norm: Any) -> Any:
    """||param|| / ||r||, 1 where either is 0."""
    return xp.where((p_norm > 0) & (r_norm > 0), p_norm / xp.where(r_norm > 0, r_norm, 1), 1)


@dataclass
class _Waiting:
    """An update waiting for its parameter's whole norms (see Lamb.step)."""
    key: str
    target: Any  # the array updated: the parameter's, or its master copy
    r: Any
    lr: float
    written: Optional[Tuple[Tensor, Any]] = None  # _write_back's (p, param), once the base step got there


class Lamb(Optimizer):
    """m = b1*m + (1-b1)*g;  v = b2*v + (1-b2)*g^2;
    r = (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + epsilon) + lamb_weight_decay * param;
    param -= lr * (||param|| / ||r||) * r, the trust ratio being 1 where either norm is 0.

    The trust ratio is taken where the parameter's weight decay is above 0 or ``always_adapt``
    is set, 1 otherwise; ``exclude_from_weight_decay_fn(param)`` returning True sets that
    parameter's decay to 0. beta1_pow_acc / beta2_pow_acc are kept as Adam's (b^t during step t).
    Parameter groups may set 'beta1', 'beta2', 'epsilon', 'lamb_weight_decay' and
    'exclude_from_weight_decay_fn' too; a group's 'weight_decay' is L2 on the gradient.
    Stepping pieces of parameters (sharding's), the norms are still the whole parameter's:
    see ``complete_trust_norms_with``."""

    _accumulator_names = ("moment1", "moment2")
    _moments_in_float32 = True  # (paddle's, for a 16-bit parameter)
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
        if exclude is not None and exclude(self._parameter_of(key)):
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
            if self._trust_sums is not None:  # the norms are the whole parameter's: see step
                self._waiting.append(_Waiting(key, param, r, lr))
                return
            r *= lr * _trust_ratio(xp, xp.linalg.norm(param), xp.linalg.norm(r))
        else:
            r *= lr
        param -= r

    _trust_sums: Optional[TrustSums] = None  # see complete_trust_norms_with

    def complete_trust_norms_with(self, trust_sums: TrustSums) -> None:
        """Take each trust ratio from the norms of the whole parameter where this optimizer
        steps pieces of parameters (sharding's, of this rank's pieces): ``trust_sums(keys,
        sums)`` gets this rank's sums of squares of each adapted piece and of its update (one row
        per key, in order) and gives the whole parameters' rows. It is called once per ``step``
        on every rank, also with no rows, so it may be a collective."""
        self._trust_sums = trust_sums

    def step(self) -> None:
        """The base step; with ``complete_trust_norms_with`` set, the updates that take a trust
        ratio wait (moments already updated) until every piece's norms are summed, then apply."""
        if self._trust_sums is None:
            super().step()
            return
        self._waiting: List[_Waiting] = []
        super().step()
        waiting, self._waiting = self._waiting, []
        rows = [(w.target, w.r) for w in waiting]
        xp = array_module(rows[0][0]) if rows else np
        squares = [xp.vdot(a, a) for row in rows for a in (row[0].astype(np.float64).ravel(),
                                                           row[1].astype(np.float64).ravel())]
        sums = to_module(xp.stack(squares), np).reshape(-1, 2) if squares else np.zeros((0, 2))
        whole = self._trust_sums([w.key for w in waiting], sums)
        for w, (p_sq, r_sq) in zip(waiting, np.sqrt(whole)):
            w.r *= w.lr * float(_trust_ratio(np, p_sq, r_sq))
            w.target -= w.r
            super()._write_back(*w.written, w.target)

    def _write_back(self, p: Tensor, param: Any, target: Any) -> None:
        waiting = getattr(self, "_waiting", None)
        if waiting and waiting[-1].target is target and waiting[-1].written is None:
            waiting[-1].written = (p, param)  # written once its ratio is known (step)
            return
        super()._write_back(p, param, target)
