"""paddle.optimizer.lr's older function forms (documented, outside its ``__all__``): in dynamic
mode each makes the scheduler of its name, as paddle 3.3.1's does. Their step-counting arguments
(``step_each_epoch``, ``decay_steps`` of the exponential forms, ``staircase``) drive only
paddle's static-graph form and are accepted and unused, as there."""
from __future__ import annotations

from typing import Any, Sequence

from pycoll.optimizer.lr_decay import (CosineAnnealingDecay, ExponentialDecay, InverseTimeDecay, LinearWarmup,
                                       NaturalExpDecay, NoamDecay, PiecewiseDecay, PolynomialDecay)


def cosine_decay(learning_rate: float, step_each_epoch: int, epochs: int) -> CosineAnnealingDecay:
    return CosineAnnealingDecay(learning_rate, epochs)


def polynomial_decay(learning_rate: float, decay_steps: int, end_learning_rate: float = 0.0001,
                     power: float = 1.0, cycle: bool = False) -> PolynomialDecay:
    return PolynomialDecay(learning_rate, decay_steps, end_learning_rate, power, cycle)


def noam_decay(d_model: int, warmup_steps: int, learning_rate: float = 1.0) -> NoamDecay:
    return NoamDecay(d_model, warmup_steps, learning_rate=learning_rate)


def piecewise_decay(boundaries: Sequence[int], values: Sequence[float]) -> PiecewiseDecay:
    return PiecewiseDecay(boundaries, values)


def exponential_decay(learning_rate: float, decay_steps: int, decay_rate: float,
                      staircase: bool = False) -> ExponentialDecay:
    return ExponentialDecay(learning_rate, decay_rate)


def natural_exp_decay(learning_rate: float, decay_steps: int, decay_rate: float,
                      staircase: bool = False) -> NaturalExpDecay:
    return NaturalExpDecay(learning_rate, decay_rate)


def inverse_time_decay(learning_rate: float, decay_steps: int, decay_rate: float,
                       staircase: bool = False) -> InverseTimeDecay:
    return InverseTimeDecay(learning_rate, decay_rate)


def linear_lr_warmup(learning_rate: Any, warmup_steps: int, start_lr: float, end_lr: float) -> LinearWarmup:
    return LinearWarmup(learning_rate, warmup_steps, start_lr, end_lr)
