"""paddle.optimizer.lr: learning-rate schedulers, for an optimizer's ``learning_rate``.

A scheduler is stepped by the training loop (``scheduler.step()``, usually once per epoch or
batch); the optimizer reads its current value at each update."""
from pycoll.optimizer.lr_cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from pycoll.optimizer.lr_decay import (CosineAnnealingDecay, ExponentialDecay, InverseTimeDecay, LambdaDecay,
                                       LinearLR, LinearWarmup, MultiplicativeDecay, MultiStepDecay, NaturalExpDecay,
                                       NoamDecay, PiecewiseDecay, PolynomialDecay, StepDecay)
from pycoll.optimizer.lr_functions import (cosine_decay, exponential_decay, inverse_time_decay,  # noqa: F401
                                           linear_lr_warmup, natural_exp_decay, noam_decay, piecewise_decay,
                                           polynomial_decay)
from pycoll.optimizer.lr_plateau import ReduceOnPlateau
from pycoll.optimizer.lr_scheduler import LRScheduler

__all__ = ["LRScheduler", "NoamDecay", "PiecewiseDecay", "NaturalExpDecay", "InverseTimeDecay",
           "PolynomialDecay", "LinearWarmup", "ExponentialDecay", "MultiStepDecay", "StepDecay",
           "LambdaDecay", "ReduceOnPlateau", "CosineAnnealingDecay", "MultiplicativeDecay", "OneCycleLR",
           "CyclicLR", "LinearLR", "CosineAnnealingWarmRestarts"]
