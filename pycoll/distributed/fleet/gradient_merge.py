"""fleet's gradient merge: the optimizer updates once every ``k_steps`` calls of ``step()``, with
the gradients accumulated over those steps (averaged over them when ``avg``): a batch k times
larger than one step's, in the memory of one step's.

(paddle 3.3.1's dygraph fleet ignores ``strategy.gradient_merge`` and updates every step; pycoll
applies it, and ``fleet.distributed_optimizer`` says so once.)"""
from __future__ import annotations

from typing import Any, List

from pycoll.optimizer.update_forms import UpdateForms


class GradientMergeOptimizer(UpdateForms):
    """``optimizer`` stepping on every ``k_steps``-th call. Between, ``step()`` and
    ``clear_grad()`` leave the gradients to accumulate; the training loop stays the usual
    ``backward(); step(); clear_grad()``. A DataParallel model still averages every backward
    (the sum of averages is the average of the sums); wrap the in-between steps in its
    ``no_sync()`` to save that traffic. Everything else (``_learning_rate``, ``_parameter_list``,
    ``state_dict``, ``get_lr``...) is the inner optimizer's.

    With a ``pycoll.amp.GradScaler`` (``scaler.step(opt)`` every step), the gradients stay scaled
    while they accumulate and are unscaled once, on the window's last step, which the scaler
    skips, with the whole window's gradients, if any of them is inf or NaN."""

    def __init__(self, optimizer: Any, k_steps: int, avg: bool = True):
        if isinstance(k_steps, bool) or not isinstance(k_steps, int) or k_steps < 1:
            raise ValueError(f"gradient_merge_configs k_steps={k_steps!r}; it must be an int >= 1")
        self._inner = optimizer
        self._k = k_steps
        self._avg = avg
        self._calls = 0
        self._unscaled = False  # a scaler took this window's gradients: its step() is due

    def __getattr__(self, name: str) -> Any:
        if name == "_inner":  # not yet set (copying, unpickling): no recursion
            raise AttributeError(name)
        return getattr(self._inner, name)

    def _window_ends(self) -> bool:
        return (self._calls + 1) % self._k == 0

    def step(self) -> None:
        self._calls += 1
        self._unscaled = False
        if self._calls % self._k:
            return
        if self._avg and self._k > 1:
            self._inner.scale_grads(1.0 / self._k)
        self._inner.step()


    def step_grads(self) -> List[Any]:
        """What a GradScaler unscales at this step: nothing before the window's last step, then
        every accumulated gradient, once."""
        if not self._window_ends():
            return []
        self._unscaled = True
        return self._inner.step_grads()

    def scale_grads(self, factor: float) -> None:
        self._inner.scale_grads(factor)

    def clear_grad(self, set_to_zero: bool = True) -> None:
        """Clear the gradients once the window's update is done. When a scaler took the window's
        gradients and skipped its step (an inf or NaN), the window ends there without an update."""
        if self._unscaled:
            self._calls += 1
            self._unscaled = False
        if self._calls % self._k == 0:
            self._inner.clear_grad(set_to_zero)

    clear_gradients = clear_grad
