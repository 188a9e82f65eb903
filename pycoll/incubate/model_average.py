"""paddle.incubate's ``ModelAverage``: the average of each parameter over a sliding window of
recent steps, swapped into the parameters for evaluation (``apply``) and swapped back
(``restore``).

Each ``step()`` adds every trainable parameter that has a gradient into three running sums, as
paddle's ``average_accumulates`` kernel does::

    num_updates += 1; num_accumulates += 1; sum_1 += param
    if num_updates % 16384 == 0:            # keep sum_1 short, for precision
        sum_2 += sum_1; sum_1 = 0
    if num_accumulates >= min_average_window and
       num_accumulates >= min(max_average_window, int(num_updates * average_window_rate)):
        sum_3 = sum_1 + sum_2; sum_1 = sum_2 = 0          # the window is full: start a new one,
        old_num_accumulates = num_accumulates             # keeping the finished one in sum_3
        num_accumulates = 0

and the average is (sum_1 + sum_2 + sum_3) / (num_accumulates + old_num_accumulates): the last
finished window plus the one being filled. (``num_updates * average_window_rate`` is a float32
product truncated to an integer, as in the kernel.)
"""
from __future__ import annotations

import contextlib
from typing import Any, Dict, Iterable, Iterator, Optional

import numpy as np

from pycoll._fp_quiet import quiet as fp_quiet
from pycoll.autograd import no_grad
from pycoll.device import array_module
from pycoll.optimizer import Optimizer
from pycoll.tensor import Tensor, wrap

_SPLIT_EVERY = 16384  # paddle's kMaxNumAccumulates: sum_1 moves into sum_2 this often


def _window_size(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"ModelAverage: {name} must be a non-negative int, got {value!r}")
    return int(value)


class ModelAverage(Optimizer):
    """ModelAverage(average_window_rate, parameters=None, min_average_window=10000,
    max_average_window=10000, name=None): ``step()`` (or ``minimize(loss)``) after the training
    optimizer's step accumulates the parameters; ``with model_average.apply():`` evaluates with
    the averaged parameters and restores the trained ones on exit (``need_restore=False`` keeps
    the averages until ``restore()``).

    The average is taken in the parameter's dtype (paddle rounds it through float32). A
    parameter that has not been accumulated yet (it never had a gradient at a step) is left as
    it is by ``apply``, where paddle writes 0/0 into it.
    """

    _accumulator_names = ("sum_1", "sum_2", "sum_3", "restore")
    _scalar_accumulators = ("num_accumulates", "old_num_accumulates", "num_updates")

    def __init__(self, average_window_rate: float, parameters: Optional[Iterable[Any]] = None,
                 min_average_window: int = 10000, max_average_window: int = 10000, name: Optional[str] = None):
        if (isinstance(average_window_rate, bool) or not isinstance(average_window_rate, (int, float))
                or not average_window_rate >= 0):
            raise ValueError(f"ModelAverage: average_window_rate must be a non-negative number, got "
                             f"{average_window_rate!r}")
        self.min_average_window = _window_size(min_average_window, "min_average_window")
        self.max_average_window = _window_size(max_average_window, "max_average_window")
        if self.min_average_window > self.max_average_window:
            raise ValueError(f"ModelAverage: min_average_window ({min_average_window}) must not exceed "
                             f"max_average_window ({max_average_window})")
        self.average_window = float(average_window_rate)
        super().__init__(learning_rate=0.0, parameters=parameters, name=name)

    def _scalar_from(self, name: str, saved: float, param: Tensor) -> int:
        return int(saved)

    def state_dict(self) -> Dict[str, Any]:
        """The optimizer's state, the counters as int64 tensors of shape [1] (paddle's)."""
        out = super().state_dict()
        counters = tuple(f"_{name}_0" for name in self._scalar_accumulators)
        for entry, value in out.items():
            if entry.endswith(counters):
                out[entry] = wrap(value.numpy().astype(np.int64))
        return out

    @no_grad()
    def step(self) -> None:
        """Accumulate every trainable parameter that has a gradient."""
        accs = self._accumulators
        with fp_quiet():  # a float16 sum past 65504 is inf, unwarned
            for key, p in zip(self._keys, self._parameter_list):
                if p.stop_gradient or p.grad is None:
                    continue
                param = p.array
                sum_1 = self._array_acc("sum_1", key, param)
                sum_2 = self._array_acc("sum_2", key, param)
                sum_3 = self._array_acc("sum_3", key, param)
                updates = accs["num_updates"].get(key, 0) + 1
                count = accs["num_accumulates"].get(key, 0) + 1
                accs["old_num_accumulates"].setdefault(key, 0)
                sum_1 += param
                if updates % _SPLIT_EVERY == 0:
                    sum_2 += sum_1
                    sum_1[...] = 0
                window = min(self.max_average_window, int(np.float32(updates) * np.float32(self.average_window)))
                if count >= self.min_average_window and count >= window:
                    sum_3[...] = sum_1 + sum_2
                    sum_1[...] = 0
                    sum_2[...] = 0
                    accs["old_num_accumulates"][key] = count
                    count = 0
                accs["num_updates"][key], accs["num_accumulates"][key] = updates, count

    def minimize(self, loss: Any, startup_program: Any = None, parameters: Any = None,
                 no_grad_set: Any = None) -> None:
        """``step()`` (paddle's dygraph ``minimize``, which returns None); the other arguments
        belong to paddle's static graph and must stay None."""
        super().minimize(loss, startup_program, parameters, no_grad_set)

    @contextlib.contextmanager
    def apply(self, executor: Any = None, need_restore: bool = True) -> Iterator[None]:
        """A context in which the parameters hold their averages; with ``need_restore`` they get
        their trained values back on exit. ``executor`` is paddle's static-graph one, unused."""
        accs = self._accumulators
        if not accs["num_updates"]:
            raise RuntimeError("ModelAverage.apply: nothing accumulated yet; call step() after the optimizer's "
                               "steps first")
        with no_grad(), fp_quiet():  # an inf sum averages to inf or NaN, unwarned
            for key, p in zip(self._keys, self._parameter_list):
                count = accs["num_accumulates"].get(key, 0) + accs["old_num_accumulates"].get(key, 0)
                if count == 0:
                    continue
                param = p.array
                accs["restore"][key] = param.copy()
                total = accs["sum_1"][key] + accs["sum_2"][key] + accs["sum_3"][key]
                param[...] = total / array_module(param).asarray(count, dtype=total.dtype)
                p._bump_inplace_version()
        try:
            yield
        finally:
            if need_restore:
                self.restore()

    @no_grad()
    def restore(self, executor: Any = None) -> None:
        """Give the parameters back the values they had when ``apply`` averaged them."""
        saved = self._accumulators["restore"]
        for key, p in zip(self._keys, self._parameter_list):
            if key in saved:
                p.array[...] = saved[key]
                p._bump_inplace_version()
