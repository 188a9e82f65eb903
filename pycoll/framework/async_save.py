"""paddle's ``paddle.framework.async_save`` / ``clear_async_save_task_queue``: ``pycoll.save`` in a
background thread.

The values are copied to host memory before the call returns, so training may go on updating
the tensors while the file is written (paddle copies device tensors to pinned memory; on the CPU
it writes the live tensors). The threads are not daemons: the process waits for them at exit, as
paddle's, so the file is complete by then; ``clear_async_save_task_queue()`` waits for them now
and raises the first error a save met.
"""
from __future__ import annotations

import threading
import warnings
from typing import Any, Dict, List, Optional

from pycoll.device import move
from pycoll.serialization import save
from pycoll.tensor import Tensor, wrap

__all__ = ["async_save", "clear_async_save_task_queue"]


class _SaveTask(threading.Thread):
    """One background save; keeps the exception it met for ``clear_async_save_task_queue``."""

    def __init__(self, obj: Any, path: Any, protocol: int):
        super().__init__(name="pycoll-async-save")
        self.args_ = (obj, path, protocol)
        self.error: Optional[BaseException] = None

    def run(self) -> None:
        try:
            save(*self.args_)
        except BaseException as exc:  # raised to the caller by clear_async_save_task_queue
            self.error = exc


_queue: List[_SaveTask] = []


def _host_copy(value: Tensor) -> Tensor:
    array = move(value._array, ("cpu", 0))
    copy = wrap(array.copy() if array is value._array else array)
    copy.name = value.name
    return copy


def _snapshot(tree: Dict[Any, Any]) -> Dict[Any, Any]:
    return {k: _snapshot(v) if isinstance(v, dict) else _host_copy(v) if isinstance(v, Tensor) else v
            for k, v in tree.items()}


def clear_async_save_task_queue() -> None:
    """Wait for every ``async_save`` started so far; then raise the first error one of them met."""
    errors = []
    while _queue:
        task = _queue.pop(0)
        task.join()
        if task.error is not None:
            errors.append(task.error)
    if errors:
        raise errors[0]


def async_save(obj: Any, path: Any, protocol: int = 4, sync_other_task: bool = False, **configs: Any) -> None:
    """``pycoll.save(obj, path, protocol)`` in the background, for a (nested) state dict or a Tensor
    (paddle's types; TypeError for others). ``sync_other_task`` first waits for the saves already
    started. ``configs`` are not used (paddle warns so too)."""
    if configs:
        warnings.warn("configs are not supported in async mode, will be overridden by default settings.",
                      stacklevel=2)
    if isinstance(obj, dict):
        obj = _snapshot(obj)
    elif isinstance(obj, Tensor):
        obj = _host_copy(obj)
    else:
        raise TypeError(f"async_save: obj must be a state dict or a Tensor, got {type(obj).__name__}")
    if sync_other_task:
        clear_async_save_task_queue()
    task = _SaveTask(obj, path, protocol)
    _queue.append(task)
    task.start()
