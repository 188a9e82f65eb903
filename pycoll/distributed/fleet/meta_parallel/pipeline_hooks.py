"""paddle's pipeline hooks, the two kinds a ``PipelineParallel`` runs during ``train_batch``:

- ``PipelineHook``: hooks by number. A pipeline keeps one for its forward steps and one for its
  backward steps (``register_forward_pipeline_parallel_hook(i, hook)``), each step running the
  hooks of the next number, ``hook(i)``; a batch must use all the numbers (capacity: one per
  micro-batch and chunk), which the pipeline checks after it.
- ``PipelineParallelMicroStepLocations``: the points of each micro-step, FORWARD_BEGIN (before
  the stage's layers run, ``input_tensor``, ``step_id``), FORWARD_END (after them, before the
  loss, ``output_tensor`` too), BACKWARD_BEGIN (``output_tensor_grad`` too: None on the last
  stage, whose output is the loss) and BACKWARD_END (``input_tensor_grad`` too: None on the first
  stage). Hooks registered with ``register_global_pipeline_parallel_hook`` (or a pipeline's
  ``register_hook``: the same global list, as paddle's) are called ``hook(**those)``, in
  ``eval_batch`` too.
"""
from __future__ import annotations

from collections import defaultdict
from enum import Enum
from typing import Any, Callable, Dict, List

__all__ = ["PipelineHook", "PipelineParallelMicroStepCallback", "PipelineParallelMicroStepLocations",
           "register_global_pipeline_parallel_hook"]


class PipelineHook:
    """Hooks by number, run in turn: ``run_hook`` calls those of ``current_id`` and moves on."""

    def __init__(self) -> None:
        self.hooks: Dict[int, List[Callable[[int], Any]]] = defaultdict(list)
        self._hooks_capacity = 0
        self.reset_current_id()

    def reset_current_id(self) -> None:
        self._current_id = 0

    def set_hooks_capacity(self, capacity: int) -> None:
        self._hooks_capacity = capacity

    def register_hook(self, hook_id: int, hook: Callable[[int], Any]) -> None:
        if isinstance(hook_id, bool) or not isinstance(hook_id, int) or not 0 <= hook_id < self._hooks_capacity:
            raise ValueError(f"PipelineHook.register_hook: hook_id must be an int in [0, {self._hooks_capacity}) "
                             f"(the capacity), got {hook_id!r}")
        if not callable(hook):
            raise TypeError(f"PipelineHook.register_hook: hook must be callable, got {hook!r}")
        self.hooks[hook_id].append(hook)

    def run_hook(self) -> None:
        if self._current_id >= self._hooks_capacity:
            raise RuntimeError(f"PipelineHook.run_hook: hook_id {self._current_id} is out of range, maximum "
                               f"capacity is {self._hooks_capacity}")
        for hook in self.hooks[self._current_id]:
            hook(self._current_id)
        self._current_id += 1

    @property
    def current_id(self) -> int:
        return self._current_id

    @property
    def hooks_capacity(self) -> int:
        return self._hooks_capacity


class PipelineParallelMicroStepLocations(Enum):
    FORWARD_BEGIN = "forward_begin"
    FORWARD_END = "forward_end"
    BACKWARD_BEGIN = "backward_begin"
    BACKWARD_END = "backward_end"


class PipelineParallelMicroStepCallback:
    """The hooks of each micro-step location, called in the order registered."""

    def __init__(self) -> None:
        self.hooks: Dict[PipelineParallelMicroStepLocations, List[Callable[..., Any]]] = {
            location: [] for location in PipelineParallelMicroStepLocations}

    def register_hook(self, location: PipelineParallelMicroStepLocations, hook: Callable[..., Any]) -> None:
        if location not in self.hooks:
            raise ValueError(f"register_hook: location must be a PipelineParallelMicroStepLocations "
                             f"(FORWARD_BEGIN, FORWARD_END, BACKWARD_BEGIN or BACKWARD_END), got {location!r}")
        if not callable(hook):
            raise TypeError(f"register_hook: hook must be callable, got {hook!r}")
        self.hooks[location].append(hook)

    def on_location(self, location: PipelineParallelMicroStepLocations, **kwargs: Any) -> None:
        for hook in self.hooks[location]:
            hook(**kwargs)


pipeline_parallel_callbacks_ = PipelineParallelMicroStepCallback()  # paddle's: one list for every pipeline


def register_global_pipeline_parallel_hook(location: PipelineParallelMicroStepLocations,
                                           hook: Callable[..., Any]) -> None:
    """Call ``hook(**kwargs)`` at ``location`` of every micro-step of every PipelineParallel."""
    pipeline_parallel_callbacks_.register_hook(location, hook)
