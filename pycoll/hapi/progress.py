"""What ``Model.fit`` / ``evaluate`` / ``predict`` print as they run: paddle's ``ProgressBar``
(one line per logged step at verbose 2, an updating bar at verbose 1) and the ``ProgBarLogger``
callback that drives it.

Writing these lines to standard output is the job of this callback (paddle's users read them, and
``verbose=0`` turns them off), so here, unlike the rest of pycoll, the output goes to stdout and not
to the ``pycoll`` logger. Only local rank 0 prints, as in paddle.
"""
from __future__ import annotations

import shutil
import sys
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from pycoll.hapi.callback_base import Callback, local_rank

NOTICE = ("The loss value printed in the log is the current step, and the metric is the average value of "
          "previous steps.")


def _number(value: Any) -> str:
    """One logged value as paddle prints it: floats with 4 decimals (or 4 significant digits in
    e-notation at or below 1e-3), anything else as str."""
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype in (np.float32, np.float64):
        value = value.item()
    if isinstance(value, (float, np.floating)):
        return f"{value:.4f}" if abs(value) > 1e-3 else f"{value:.4e}"
    return str(value)


def _values_text(values: Sequence[Tuple[str, Any]]) -> str:
    text = ""
    for key, value in values:
        text += f" - {key}:" + "".join(" " + _number(v) for v in (value if isinstance(value, list) else [value]))
    return text


def _rate(seconds: float, name: str) -> str:
    if seconds >= 1 or seconds == 0:
        return f" - {seconds:.0f}s/{name}"
    if seconds >= 1e-3:
        return f" - {seconds * 1e3:.0f}ms/{name}"
    return f" - {seconds * 1e6:.0f}us/{name}"


def _eta(seconds: int) -> str:
    if seconds > 3600:
        return f"{seconds // 3600}:{(seconds % 3600) // 60:02}:{seconds % 60:02}"
    if seconds > 60:
        return f"{seconds // 60}:{seconds % 60:02}"
    return f"{seconds}s"


class ProgressBar:
    """paddle's progress display over ``num`` steps (None: unknown). ``update(step, values)``
    writes ``step  3/10 - loss: 0.9974 - acc: 0.5833 - 7ms/step`` (verbose 2 and 3) or redraws
    ``step 3/10 [=========>....] - loss: ... - ETA: 0s - 7ms/step`` in place (verbose 1)."""

    def __init__(self, num: Optional[int] = None, width: int = 30, verbose: int = 1, start: bool = True,
                 file: Any = None, name: str = "step"):
        if isinstance(num, int) and num <= 0:
            raise TypeError("num should be None or integer (> 0)")
        columns = shutil.get_terminal_size().columns or 80
        self._num = num
        self._width = min(width, min(int(columns * 0.6), columns - 50))
        self._total_width = 0
        self._verbose = verbose
        self._file = file
        self._start = time.time()
        self.name = name

    @property
    def file(self) -> Any:
        return self._file if self._file is not None else sys.stdout  # looked up when written: redirects work

    def start(self) -> None:
        self.file.flush()
        self._start = time.time()

    def _counter(self, current: int) -> str:
        if self._num:
            return f"{self.name} {current:{len(str(self._num))}d}/{self._num}"
        return f"{self.name} {current:3}"

    def update(self, current_num: int, values: Sequence[Tuple[str, Any]] = ()) -> None:
        per_step = (time.time() - self._start) / current_num if current_num else 0
        if self._verbose == 1:
            self._redraw(current_num, values, per_step)
        elif self._verbose in (2, 3):
            self.file.write(self._counter(current_num) + _values_text(values) + _rate(per_step, self.name) + "\n")
            self.file.flush()

    def _redraw(self, current: int, values: Sequence[Tuple[str, Any]], per_step: float) -> None:
        previous = self._total_width
        out = self.file
        out.write("\b" * previous + "\r")
        bar = self._counter(current)
        if self._num is not None:
            filled = int(self._width * current / self._num)
            bar += " ["
            if filled > 0:
                bar += "=" * (filled - 1) + (">" if current < self._num else "=")
            bar += "." * (self._width - filled) + "]"
        self._total_width = len(bar)
        info = _values_text(values)
        if self._num is not None and current < self._num:
            info += f" - ETA: {_eta(int(per_step * (self._num - current)))}"
        info += _rate(per_step, self.name)
        self._total_width += len(info)
        if previous > self._total_width:
            info += " " * (previous - self._total_width)
        if self._num is None or current >= self._num:
            info += "\n"
        out.write(bar + info)
        out.flush()


class _Timer:
    """Reading and computing time of one mode's steps, for verbose 3's extra columns."""

    def __init__(self) -> None:
        self.data_time = self.batch_time = 0.0
        self.count = self.samples = 0
        self.batch_start = self.data_end = time.time()

    def data_ready(self) -> None:
        self.data_end = time.time()
        self.data_time += self.data_end - self.batch_start

    def batch_done(self, samples: int) -> None:
        self.batch_time += time.time() - self.data_end
        self.count += 1
        self.samples += samples
        self.batch_start = time.time()

    def columns(self) -> List[Tuple[str, str]]:
        """The averages since the last call (then reset), as paddle prints them."""
        count = self.count or 1.0
        samples = self.samples or 1.0
        spent = self.data_time + self.batch_time
        out = [("avg_reader_cost", f"{self.data_time / count:.5f} sec"),
               ("avg_batch_cost", f"{self.batch_time / count:.5f} sec"),
               ("ips", f"{samples / spent if spent else 0.0:.5f} samples/sec")]
        self.data_time = self.batch_time = 0.0
        self.count = self.samples = 0
        return out


class ProgBarLogger(Callback):
    """Print the loss and metrics every ``log_freq`` steps (paddle's callback; ``Model`` adds one
    when ``verbose`` is not 0). verbose: 0 silent, 1 a progress bar, 2 a line per logged step, 3 as
    2 plus the reading time, step time and samples per second. The last step of an epoch (or of
    an evaluation) is always printed, at its end."""

    def __init__(self, log_freq: int = 1, verbose: int = 2) -> None:
        super().__init__()
        self.epochs: Optional[int] = None
        self.steps: Optional[int] = None
        self.verbose = verbose
        self.log_freq = log_freq
        self._bars: Dict[str, ProgressBar] = {}
        self._metrics: Dict[str, List[str]] = {}
        self._steps: Dict[str, Optional[int]] = {}
        self._done: Dict[str, int] = {}
        self._samples: Dict[str, int] = {}
        self._timers: Dict[str, _Timer] = {}

    def _is_print(self) -> bool:
        return bool(self.verbose) and local_rank() == 0

    def _say(self, line: str) -> None:
        if self._is_print():
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def _begin(self, mode: str, steps: Optional[int], metrics: List[str]) -> None:
        self._steps[mode], self._metrics[mode] = steps, metrics
        self._done[mode] = self._samples[mode] = 0
        self._bars[mode] = ProgressBar(num=steps, verbose=self.verbose)
        self._timers[mode] = _Timer()

    def _update(self, logs: Dict[str, Any], mode: str) -> None:
        values: List[Tuple[str, Any]] = [(k, logs[k]) for k in self._metrics[mode] if k in logs]
        if self.verbose == 3:
            values += self._timers[mode].columns()
        self._bars[mode].update(self._done[mode], values)

    def _batch_end(self, mode: str, logs: Optional[Dict[str, Any]]) -> None:
        logs = logs or {}
        self._done[mode] += 1
        samples = logs.get("batch_size", 1)
        self._samples[mode] += samples
        self._timers[mode].batch_done(samples)
        steps = self._steps[mode]
        if self._is_print() and self._done[mode] % self.log_freq == 0 and (steps is None or self._done[mode] < steps):
            self._update(logs, mode)

    # -- training ---------------------------------------------------------------------------
    def on_train_begin(self, logs: Optional[Dict[str, Any]] = None) -> None:
        self.epochs = self.params["epochs"]
        self._say(NOTICE)

    def on_epoch_begin(self, epoch: Optional[int] = None, logs: Optional[Dict[str, Any]] = None) -> None:
        self.steps = self.params["steps"]
        self.epoch = epoch
        if self.epochs:
            self._say(f"Epoch {epoch + 1}/{self.epochs}")
        self._begin("train", self.steps, self.params["metrics"])

    def on_train_batch_begin(self, step: int, logs: Optional[Dict[str, Any]] = None) -> None:
        self._timers["train"].data_ready()

    def on_train_batch_end(self, step: int, logs: Optional[Dict[str, Any]] = None) -> None:
        self._batch_end("train", logs)

    def on_epoch_end(self, epoch: int, logs: Optional[Dict[str, Any]] = None) -> None:
        if self._is_print() and self.steps is not None:
            self._update(logs or {}, "train")

    # -- evaluation ---------------------------------------------------------------------------
    def on_eval_begin(self, logs: Optional[Dict[str, Any]] = None) -> None:
        logs = logs or {}
        self._begin("eval", logs.get("steps"), logs.get("metrics", []))
        self._say("Eval begin...")

    def on_eval_batch_begin(self, step: int, logs: Optional[Dict[str, Any]] = None) -> None:
        self._timers["eval"].data_ready()

    def on_eval_batch_end(self, step: int, logs: Optional[Dict[str, Any]] = None) -> None:
        self._batch_end("eval", logs)

    def on_eval_end(self, logs: Optional[Dict[str, Any]] = None) -> None:
        if self._is_print() and self._steps["eval"] is not None:
            self._update(logs or {}, "eval")
            self._say(f"Eval samples: {self._samples['eval']}")

    # -- prediction ---------------------------------------------------------------------------
    def on_predict_begin(self, logs: Optional[Dict[str, Any]] = None) -> None:
        logs = logs or {}
        self._begin("predict", logs.get("steps"), logs.get("metrics", []))
        self._say("Predict begin...")

    def on_predict_batch_begin(self, step: int, logs: Optional[Dict[str, Any]] = None) -> None:
        self._timers["predict"].data_ready()

    def on_predict_batch_end(self, step: int, logs: Optional[Dict[str, Any]] = None) -> None:
        self._batch_end("predict", logs)

    def on_predict_end(self, logs: Optional[Dict[str, Any]] = None) -> None:
        if self._is_print():
            if self._done["predict"] % self.log_freq != 0 or self.verbose == 1:
                self._update(logs or {}, "predict")
            self._say(f"Predict samples: {self._samples['predict']}")
