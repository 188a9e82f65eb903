"""fleet's gradient merge: the optimizer updates once every ``k_steps`` calls of ``step()``, with
the gradients accumulated over those steps (averaged over them when ``avg``): a batch k times
larger than one step's, in the memory of one step's."""
from __future__ import annotations

from typing import Any, Dict


class GradientMergeOptimizer:
    """``optimizer`` stepping on every ``k_steps``-th call. Between, ``step()`` and
    ``clear_grad()`` leave the gradients to accumulate; the training loop stays the usual
    ``backward(); step(); clear_grad()``. A DataParallel model still averages every backward
    (the sum of averages is the average of the sums); wrap the in-between steps in its
    ``no_sync()`` to save that traffic."""

    def __init__(self, optimizer: Any, k_steps: int, avg: bool = True):
        if isinstance(k_steps, bool) or not isinstance(k_steps, int) or k_steps < 1:
            raise ValueError(f"gradient_merge_configs k_steps={k_steps!r}; it must be an int >= 1")
        self._inner = optimizer
        self._k = k_steps
        self._avg = avg
        self._calls = 0

    def step(self) -> None:
        self._calls += 1
        if self._calls % self._k:
            return
        if self._avg and self._k > 1:
            self._inner.scale_grads(1.0 / self._k)
        self._inner.step()

    def clear_grad(self, set_to_zero: bool = True) -> None:
        if self._calls % self._k == 0:
            self._inner.clear_grad(set_to_zero)

    clear_gradients = clear_grad

    def state_dict(self) -> Dict[str, Any]:
        return self._inner.state_dict()

    def set_state_dict(self, state_dict: Dict[str, Any]) -> None:
        self._inner.set_state_dict(state_dict)

    def get_lr(self) -> float:
        return self._inner.get_lr()

    def set_lr(self, value: float) -> None:
        self._inner.set_lr(value)
