"""The callback protocol of paddle's high-level API: ``Callback`` (every hook a no-op) and the
``CallbackList`` through which ``Model`` calls all of a run's callbacks in order."""
from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Sequence

MODES = ("train", "eval", "predict")


def local_rank() -> int:
    """This process's rank on its node (0 outside a launched job): paddle's callbacks print and
    save on local rank 0 only."""
    from pycoll.distributed import ParallelEnv

    return ParallelEnv().local_rank


class Callback:
    """Base of the callbacks ``Model.fit``, ``evaluate`` and ``predict`` call: override the hooks
    you need. ``self.model`` is the running ``Model``; ``self.params`` holds ``batch_size``,
    ``epochs``, ``steps`` (per epoch; None when the data has no length), ``verbose`` and
    ``metrics`` (the names logged: 'loss' first when there is a loss). ``logs`` passed to the
    batch and epoch hooks map those names to their values, plus 'step' and 'batch_size'."""

    def __init__(self) -> None:
        self.model: Any = None
        self.params: Dict[str, Any] = {}

    def set_params(self, params: Dict[str, Any]) -> None:
        self.params = params

    def set_model(self, model: Any) -> None:
        self.model = model

    def on_train_begin(self, logs: Optional[Dict[str, Any]] = None) -> None:
        """Before the first epoch of ``fit``."""

    def on_train_end(self, logs: Optional[Dict[str, Any]] = None) -> None:
        """After the last epoch of ``fit``."""

    def on_eval_begin(self, logs: Optional[Dict[str, Any]] = None) -> None:
        """Before an evaluation; ``logs`` holds 'steps' and 'metrics'."""

    def on_eval_end(self, logs: Optional[Dict[str, Any]] = None) -> None:
        """After an evaluation; ``logs`` holds its loss and metrics."""

    def on_predict_begin(self, logs: Optional[Dict[str, Any]] = None) -> None:
        """Before ``predict`` runs; ``logs`` holds 'steps'."""

    def on_predict_end(self, logs: Optional[Dict[str, Any]] = None) -> None:
        """After ``predict`` ran."""

    def on_epoch_begin(self, epoch: int, logs: Optional[Dict[str, Any]] = None) -> None:
        """Before training epoch ``epoch`` (from 0)."""

    def on_epoch_end(self, epoch: int, logs: Optional[Dict[str, Any]] = None) -> None:
        """After training epoch ``epoch``; ``logs`` holds its last step's loss and the metrics."""

    def on_train_batch_begin(self, step: int, logs: Optional[Dict[str, Any]] = None) -> None:
        """Before training step ``step`` (from 0 in each epoch)."""

    def on_train_batch_end(self, step: int, logs: Optional[Dict[str, Any]] = None) -> None:
        """After training step ``step``."""

    def on_eval_batch_begin(self, step: int, logs: Optional[Dict[str, Any]] = None) -> None:
        """Before evaluation step ``step``."""

    def on_eval_batch_end(self, step: int, logs: Optional[Dict[str, Any]] = None) -> None:
        """After evaluation step ``step``."""

    def on_predict_batch_begin(self, step: int, logs: Optional[Dict[str, Any]] = None) -> None:
        """Before prediction step ``step``."""

    def on_predict_batch_end(self, step: int, logs: Optional[Dict[str, Any]] = None) -> None:
        """After prediction step ``step``."""


def _mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"mode={mode!r}; it must be one of {list(MODES)}")
    return mode


class CallbackList:
    """Several callbacks called as one, in order."""

    def __init__(self, callbacks: Sequence[Callback]) -> None:
        self.callbacks: List[Callback] = list(callbacks)

    def append(self, callback: Callback) -> None:
        self.callbacks.append(callback)

    def __iter__(self) -> Iterator[Callback]:
        return iter(self.callbacks)

    def set_params(self, params: Dict[str, Any]) -> None:
        for c in self.callbacks:
            c.set_params(params)

    def set_model(self, model: Any) -> None:
        for c in self.callbacks:
            c.set_model(model)

    def _call(self, hook: str, *args: Any) -> None:
        for c in self.callbacks:
            getattr(c, hook)(*args)

    def on_begin(self, mode: str, logs: Optional[Dict[str, Any]] = None) -> None:
        self._call(f"on_{_mode(mode)}_begin", logs)

    def on_end(self, mode: str, logs: Optional[Dict[str, Any]] = None) -> None:
        self._call(f"on_{_mode(mode)}_end", logs)

    def on_epoch_begin(self, epoch: Optional[int] = None, logs: Optional[Dict[str, Any]] = None) -> None:
        self._call("on_epoch_begin", epoch, logs)

    def on_epoch_end(self, epoch: Optional[int] = None, logs: Optional[Dict[str, Any]] = None) -> None:
        self._call("on_epoch_end", epoch, logs)

    def on_batch_begin(self, mode: str, step: Optional[int] = None, logs: Optional[Dict[str, Any]] = None) -> None:
        self._call(f"on_{_mode(mode)}_batch_begin", step, logs)

    def on_batch_end(self, mode: str, step: Optional[int] = None, logs: Optional[Dict[str, Any]] = None) -> None:
        self._call(f"on_{_mode(mode)}_batch_end", step, logs)
