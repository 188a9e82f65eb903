"""paddle's experiment-tracking callbacks: ``VisualDL`` (scalars to a VisualDL log directory) and
``WandbCallback`` (a Weights & Biases run). Each needs its package (``visualdl`` / ``wandb``), which
pycoll does not depend on: as paddle's, VisualDL imports it at its first write and WandbCallback
when it is built, raising paddle's ImportError when it is missing. Only local rank 0 writes.

Both log, at the end of every training batch, the logs' values of the model's metrics under
``train/<name>`` against the training step, and at the end of an evaluation under ``eval/<name>``
against the epoch (a list's first value; values that are not numbers are skipped).
"""
from __future__ import annotations

import numbers
import warnings
from typing import Any, Dict, Optional

from pycoll.hapi.callback_base import Callback, local_rank
from pycoll.utils import try_import

__all__ = ["VisualDL", "WandbCallback"]


class _MetricsLogger(Callback):
    """The bookkeeping both share: which metrics, which step; subclasses write ``_write``."""

    def on_train_begin(self, logs: Optional[Dict[str, Any]] = None) -> None:
        self.epochs = self.params["epochs"]
        self.train_metrics = self.params["metrics"]
        if not self.epochs or not self.train_metrics:
            raise ValueError(f"{type(self).__name__}: the model's fit must give epochs and metrics to log, got "
                             f"epochs={self.epochs!r}, metrics={self.train_metrics!r}")
        self._is_fit = True
        self.train_step = 0

    def on_epoch_begin(self, epoch: Optional[int] = None, logs: Optional[Dict[str, Any]] = None) -> None:
        self.steps = self.params["steps"]
        self.epoch = epoch

    def on_eval_begin(self, logs: Optional[Dict[str, Any]] = None) -> None:
        logs = logs or {}
        self.eval_steps = logs.get("steps")
        self.eval_metrics = logs.get("metrics", [])
        self.eval_step = 0

    def on_train_batch_end(self, step: int, logs: Optional[Dict[str, Any]] = None) -> None:
        self.train_step += 1
        if local_rank() == 0:
            self._write(self._scalars(logs or {}, "train"), "train", self.train_step)

    def on_eval_end(self, logs: Optional[Dict[str, Any]] = None) -> None:
        if local_rank() == 0:
            self._write(self._scalars(logs or {}, "eval"), "eval", self.epoch)
            if not hasattr(self, "_is_fit"):  # an evaluation on its own: the log ends with it
                self._close()

    def _scalars(self, logs: Dict[str, Any], mode: str) -> Dict[str, Any]:
        found = {}
        for name in getattr(self, f"{mode}_metrics"):
            value = logs.get(name)
            if isinstance(value, (list, tuple)):
                value = value[0]
            if isinstance(value, numbers.Number):
                found[f"{mode}/{name}"] = value
        return found

    def _write(self, scalars: Dict[str, Any], mode: str, step: Any) -> None:
        raise NotImplementedError

    def _close(self) -> None:
        raise NotImplementedError


class VisualDL(_MetricsLogger):
    """paddle's ``callbacks.VisualDL(log_dir)``: scalars to a ``visualdl.LogWriter(log_dir)``,
    opened at the first write (ImportError then if ``visualdl`` is not installed)."""

    def __init__(self, log_dir: str) -> None:
        super().__init__()
        if not isinstance(log_dir, str):
            raise TypeError(f"VisualDL: log_dir must be a str, got {type(log_dir).__name__}")
        self.log_dir = log_dir
        self.epochs = self.steps = None
        self.epoch = 0

    def _write(self, scalars: Dict[str, Any], mode: str, step: Any) -> None:
        if not hasattr(self, "writer"):
            self.writer = try_import("visualdl").LogWriter(self.log_dir)
        for tag, value in scalars.items():
            self.writer.add_scalar(tag=tag, step=step, value=value)

    def _close(self) -> None:
        if hasattr(self, "writer"):
            self.writer.close()
            del self.writer

    def on_train_end(self, logs: Optional[Dict[str, Any]] = None) -> None:
        self._close()


class WandbCallback(_MetricsLogger):
    """paddle's ``callbacks.WandbCallback``: a ``wandb.init(project=..., entity=..., name=..., dir=...,
    mode=..., job_type=..., **kwargs)`` run (or the run already in progress, with paddle's warning),
    started when built on local rank 0; train scalars against ``train/step``, eval ones against
    ``epoch``; the run finishes with the training."""

    def __init__(self, project: Optional[str] = None, entity: Optional[str] = None, name: Optional[str] = None,
                 dir: Optional[str] = None, mode: Optional[str] = None, job_type: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__()
        self.wandb = try_import("wandb", "You want to use `wandb` which is not installed yet install it with "
                                         "`pip install wandb`")
        self.wandb_args = {"project": project, "name": name, "entity": entity, "dir": dir, "mode": mode,
                           "job_type": job_type, **kwargs}
        self._run = None
        _ = self.run

    @property
    def run(self) -> Any:
        if local_rank() == 0 and self._run is None:
            if self.wandb.run is not None:
                warnings.warn("There is a wandb run already in progress and newly created instances of "
                              "`WandbCallback` will reuse this run. If this is not desired, call `wandb.finish()` "
                              "before instantiating `WandbCallback`.")
                self._run = self.wandb.run
            else:
                self._run = self.wandb.init(**self.wandb_args)
        return self._run

    def on_train_begin(self, logs: Optional[Dict[str, Any]] = None) -> None:
        super().on_train_begin(logs)
        if local_rank() == 0:
            self.run.define_metric("train/step")
            self.run.define_metric("train/*", step_metric="train/step")
            self.run.define_metric("epoch")
            self.run.define_metric("eval/*", step_metric="epoch")

    def _write(self, scalars: Dict[str, Any], mode: str, step: Any) -> None:
        self.run.log({"train/step" if mode == "train" else "epoch": step, **scalars})

    def _close(self) -> None:
        if self._run is not None:
            self._run.finish()
            self._run = None

    def on_train_end(self, logs: Optional[Dict[str, Any]] = None) -> None:
        if local_rank() == 0:
            self._close()
