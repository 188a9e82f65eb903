"""paddle.optimizer.lr.ReduceOnPlateau: the one schedule driven by a metric, not the step."""
from __future__ import annotations

import numbers
from typing import Any, Optional

import numpy as np

from pycoll.optimizer._checks import integer, real
from pycoll.optimizer.lr_scheduler import LRScheduler
from pycoll.tensor import Tensor


def _metric(metrics: Any) -> float:
    """A number, or a one-element Tensor or ndarray (a Tensor's value read as paddle reads it)."""
    if isinstance(metrics, (Tensor, np.ndarray)):
        if metrics.size != 1:
            raise ValueError(f"metrics must hold one number, got {metrics.size} (take its mean first)")
        return float(metrics.reshape([-1])[0]) if isinstance(metrics, np.ndarray) else float(metrics)
    if isinstance(metrics, bool) or not isinstance(metrics, numbers.Real):
        raise TypeError(f"metrics must be a number, a one-element numpy.ndarray or a one-element Tensor, "
                        f"got {type(metrics).__name__}")
    return float(metrics)


class ReduceOnPlateau(LRScheduler):
    """Multiplies the learning rate by ``factor`` (not below ``min_lr``) once the metric passed to
    ``step(metrics)`` has not improved (by ``threshold``, relative or absolute) for more than
    ``patience`` steps, then waits ``cooldown`` steps before counting again. A change smaller
    than ``epsilon`` is not made. Unlike the other schedules, construction takes no step."""

    def __init__(self, learning_rate: float, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0, min_lr: float = 0,
                 epsilon: float = 1e-8, verbose: bool = False) -> None:
        mode, threshold_mode = str(mode).lower(), str(threshold_mode).lower()
        if mode not in ("min", "max"):
            raise ValueError(f"mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}")
        self.mode, self.threshold_mode = mode, threshold_mode
        self.factor = real(factor, "factor", high=1.0, high_open=True)
        self.patience = integer(patience, "patience", low=0)
        self.threshold = real(threshold, "threshold")
        self.cooldown = integer(cooldown, "cooldown", low=0)
        self.min_lr = real(min_lr, "min_lr")
        self.epsilon = real(epsilon, "epsilon")
        self.cooldown_counter = 0
        self.best: Optional[float] = None
        self.num_bad_epochs = 0
        self.base_lr = self.last_lr = real(learning_rate, "learning_rate", low=0.0)
        self.last_epoch = 0
        self.verbose = bool(verbose)

    def state_keys(self) -> None:
        self.keys = ["cooldown_counter", "best", "num_bad_epochs", "last_epoch", "last_lr"]

    def step(self, metrics: Any, epoch: Optional[int] = None) -> None:  # type: ignore[override]
        """Count step ``epoch`` (default: the next one) with the metric ``metrics``."""
        self.last_epoch = self.last_epoch + 1 if epoch is None else integer(epoch, "epoch")
        current = _metric(metrics)
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            return
        if self.best is None or self._is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.num_bad_epochs > self.patience:
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
            new_lr = max(self.last_lr * self.factor, self.min_lr)
            if self.last_lr - new_lr > self.epsilon:
                self.last_lr = new_lr
                self._announce()

    def _is_better(self, current: float, best: float) -> bool:
        if self.mode == "min":
            return current < (best - best * self.threshold if self.threshold_mode == "rel" else best - self.threshold)
        return current > (best + best * self.threshold if self.threshold_mode == "rel" else best + self.threshold)
