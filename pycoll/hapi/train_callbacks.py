"""The callbacks that act on training: ``ModelCheckpoint`` (save every few epochs),
``LRScheduler`` (step the optimizer's scheduler), ``EarlyStopping`` and ``ReduceLROnPlateau``
(watch a value of each evaluation), with paddle's arguments and decisions.

Their messages go to stdout on local rank 0, as paddle prints them. On several ranks the watched
value (an evaluation's loss is each rank's own) is rank 0's on every rank, so that the ranks stop,
or lower the learning rate, together: paddle lets them decide apart, and a rank that stops alone
leaves the others waiting in their next all-reduce.
"""
from __future__ import annotations

import numbers
import os
import sys
import warnings
from typing import Any, Dict, Optional

import numpy as np

from pycoll.hapi.callback_base import Callback, local_rank
from pycoll.optimizer.lr import LRScheduler as _Scheduler


def _say(line: str) -> None:
    if local_rank() == 0:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def _watched(logs: Optional[Dict[str, Any]], monitor: str, who: str) -> Optional[float]:
    """The value ``monitor`` names in an evaluation's logs (the first of a list), rank 0's on every
    rank; None (with paddle's warning where it is missing) when there is none to watch."""
    if logs is None or monitor not in logs:
        warnings.warn(f"Monitor of {who} should be loss or metric name.")
        return None
    current = logs[monitor]
    if isinstance(current, (list, tuple)):
        current = current[0]
    elif not isinstance(current, numbers.Number):
        return None
    import pycoll.distributed as dist

    if dist.is_initialized() and dist.get_world_size() > 1:
        box = [float(current)]
        dist.broadcast_object_list(box, src=0)
        current = box[0]
    return current


def _direction(mode: str, monitor: str, who: str) -> str:
    """'max' or 'min': ``mode``, or for 'auto' 'max' when the monitor names an accuracy."""
    if mode not in ("auto", "min", "max"):
        warnings.warn(f"{who} mode {mode} is unknown, fallback to auto mode.")
        mode = "auto"
    if mode == "auto":
        return "max" if "acc" in monitor else "min"
    return mode


class ModelCheckpoint(Callback):
    """Save the model (``Model.save``: ``.pdparams`` and ``.pdopt``) to ``save_dir/<epoch>`` every
    ``save_freq`` epochs and to ``save_dir/final`` when training ends; nothing without ``save_dir``.
    ``Model.fit`` adds one with its own ``save_freq`` and ``save_dir``."""

    def __init__(self, save_freq: int = 1, save_dir: Optional[str] = None) -> None:
        super().__init__()
        self.save_freq = save_freq
        self.save_dir = save_dir

    def on_epoch_begin(self, epoch: Optional[int] = None, logs: Optional[Dict[str, Any]] = None) -> None:
        self.epoch = epoch

    def _is_save(self) -> bool:
        return bool(self.model and self.save_dir and local_rank() == 0)

    def _save(self, name: str) -> None:
        path = f"{self.save_dir}/{name}"
        _say(f"save checkpoint at {os.path.abspath(path)}")
        self.model.save(path)

    def on_epoch_end(self, epoch: int, logs: Optional[Dict[str, Any]] = None) -> None:
        if self._is_save() and self.epoch % self.save_freq == 0:
            self._save(str(epoch))

    def on_train_end(self, logs: Optional[Dict[str, Any]] = None) -> None:
        if self._is_save():
            self._save("final")


class LRScheduler(Callback):
    """Step the optimizer's learning-rate scheduler (when its learning rate is one) after every
    training step (``by_step``, the default) or every epoch (``by_epoch``)."""

    def __init__(self, by_step: bool = True, by_epoch: bool = False) -> None:
        super().__init__()
        if by_step and by_epoch:
            raise ValueError("by_step option is mutually exclusive with by_epoch")
        self.by_step = by_step
        self.by_epoch = by_epoch

    def _step(self) -> None:
        optimizer = getattr(self.model, "_optimizer", None)
        if optimizer is not None and isinstance(getattr(optimizer, "_learning_rate", None), _Scheduler):
            optimizer._learning_rate.step()

    def on_epoch_end(self, epoch: int, logs: Optional[Dict[str, Any]] = None) -> None:
        if self.by_epoch:
            self._step()

    def on_train_batch_end(self, step: int, logs: Optional[Dict[str, Any]] = None) -> None:
        if self.by_step:
            self._step()


class EarlyStopping(Callback):
    """Stop ``fit`` (``model.stop_training = True``) once ``monitor`` (a name in the evaluation's
    logs) has not improved by more than ``min_delta`` for ``patience`` evaluations in a row.
    ``mode`` 'min', 'max', or 'auto' ('max' for a monitor naming an accuracy); ``baseline`` is
    the value to beat at first. With ``save_best_model`` each best model is saved to
    ``<fit's save_dir>/best_model`` (when fit has a save_dir)."""

    def __init__(self, monitor: str = "loss", mode: str = "auto", patience: int = 0, verbose: int = 1,
                 min_delta: float = 0, baseline: Optional[float] = None, save_best_model: bool = True) -> None:
        super().__init__()
        self.monitor = monitor
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.wait_epoch = 0
        self.best_weights = None
        self.stopped_epoch = 0
        self.save_best_model = save_best_model
        self.save_dir: Optional[str] = None  # Model.fit sets it to its save_dir
        if _direction(mode, monitor, "EarlyStopping") == "max":
            self.monitor_op, self.min_delta = np.greater, abs(min_delta)
        else:
            self.monitor_op, self.min_delta = np.less, -abs(min_delta)

    def on_train_begin(self, logs: Optional[Dict[str, Any]] = None) -> None:
        self.wait_epoch = 0
        if self.baseline is not None:
            self.best_value = self.baseline
        else:
            self.best_value = np.inf if self.monitor_op is np.less else -np.inf
            self.best_weights = None

    def on_eval_end(self, logs: Optional[Dict[str, Any]] = None) -> None:
        current = _watched(logs, self.monitor, "EarlyStopping")
        if current is None:
            return
        best_path = os.path.join(self.save_dir, "best_model") if self.save_dir is not None else None
        if self.monitor_op(current - self.min_delta, self.best_value):
            self.best_value = current
            self.wait_epoch = 0
            if self.save_best_model and best_path is not None:
                self.model.save(best_path)
        else:
            self.wait_epoch += 1
        if self.wait_epoch >= self.patience:
            self.model.stop_training = True
            if self.verbose > 0:
                _say(f"Epoch {self.stopped_epoch + 1}: Early stopping.")
                if self.save_best_model and best_path is not None:
                    _say(f"Best checkpoint has been saved at {os.path.abspath(best_path)}")
        self.stopped_epoch += 1


class ReduceLROnPlateau(Callback):
    """Multiply the learning rate by ``factor`` (not below ``min_lr``) once ``monitor`` has not
    improved by more than ``min_delta`` for ``patience`` evaluations; then wait ``cooldown``
    evaluations before counting again. Works where the optimizer's learning rate is a float (a
    scheduler drives its own). ``mode`` as in ``EarlyStopping``."""

    def __init__(self, monitor: str = "loss", factor: float = 0.1, patience: int = 10, verbose: int = 1,
                 mode: str = "auto", min_delta: float = 1e-4, cooldown: int = 0, min_lr: float = 0) -> None:
        super().__init__()
        if factor >= 1.0:
            raise ValueError(f"ReduceLROnPlateau does not support a factor >= 1.0 (got factor={factor!r}).")
        self.monitor = monitor
        self.factor = factor
        self.min_lr = min_lr
        self.min_delta = min_delta
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        self.mode = mode
        self.epoch = 0
        self._reset()

    def _reset(self) -> None:
        self.mode = _direction(self.mode, self.monitor, "Learning rate reduction")
        self._maximize = self.mode == "max"
        self.best = -np.inf if self._maximize else np.inf
        self.cooldown_counter = 0
        self.wait = 0

    def monitor_op(self, current: float, best: float) -> bool:
        if self._maximize:
            return bool(np.greater(current, best + self.min_delta))
        return bool(np.less(current, best - self.min_delta))

    def in_cooldown(self) -> bool:
        return self.cooldown_counter > 0

    def on_train_begin(self, logs: Optional[Dict[str, Any]] = None) -> None:
        self._reset()

    def on_eval_end(self, logs: Optional[Dict[str, Any]] = None) -> None:
        if logs is not None and self.monitor in logs:
            lr = getattr(getattr(self.model, "_optimizer", None), "_learning_rate", None)
            if not isinstance(lr, float):
                warnings.warn(f"Expected learning_rate be float, bug got {type(lr)}.")
                return
        current = _watched(logs, self.monitor, "ReduceLROnPlateau")
        if current is None:
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self.monitor_op(current, self.best):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                optimizer = self.model._optimizer
                old_lr = optimizer.get_lr()
                if old_lr > np.float32(self.min_lr):
                    new_lr = max(old_lr * self.factor, self.min_lr)
                    optimizer.set_lr(new_lr)
                    if self.verbose > 0:
                        _say(f"\nEpoch {self.epoch + 1}: ReduceLROnPlateau reducing learning rate to {new_lr}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0
        self.epoch += 1
