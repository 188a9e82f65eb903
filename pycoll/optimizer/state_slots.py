"""A ``state_dict()`` taken before the first step, as paddle's auto-parallel API gives it.

paddle's ``shard_optimizer(...).state_dict()`` and ``DistModel.state_dict("opt")`` create the
optimizer's state when there is none yet, so that a checkpoint can be read into it in place
(``dist.load_state_dict(opt.state_dict(), path)``, the auto-parallel guide's resume) before
training starts. pycoll's optimizers make their state at their first update; :class:`FirstStepSlots`
hands out zero-filled entries instead (``Optimizer.state_slots``, master weights included) and, at
the first step, loads what was read into them: every entry of each parameter of which any entry was written (a
checkpoint's entry is never all zeros in all of a parameter's entries: its beta powers, its
moments after any update). A parameter whose entries were left alone starts afresh, as without
the call.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from pycoll.optimizer.optimizer import LR_SCHEDULER_KEY, MASTER_WEIGHTS_KEY


class FirstStepSlots:
    """The entries one optimizer handed out before its first step (see the module's text)."""

    def __init__(self) -> None:
        self._slots: Optional[Dict[str, Any]] = None

    def add_to(self, state: Dict[str, Any], optimizer: Any) -> None:
        """Put the slots into ``state`` (``optimizer.state_dict()``) when the optimizer has no
        state and no gradient yet, or slots were handed out already (the same ones again)."""
        if self._slots is None:
            if any(key != LR_SCHEDULER_KEY for key in state) or any(
                    p.grad is not None for p in optimizer._parameter_list):
                return
            self._slots = optimizer.state_slots()
        state.update(self._slots)

    def load(self, optimizer: Any) -> None:
        """Before the first step: load what was read into the slots (see the module's text)."""
        slots, self._slots = self._slots, None
        if slots is None:
            return
        loaded: Dict[str, Any] = {}
        masters = slots.get(MASTER_WEIGHTS_KEY, {})
        for key, param in zip(optimizer._keys, optimizer._parameter_list):
            entries = {entry: slots[entry] for entry in optimizer._entries(key, param) if entry in slots}
            held = [*entries.values(), *([masters[key]] if key in masters else [])]
            if any(bool(value._array.any()) for value in held):
                loaded.update(entries)
                if key in masters:
                    loaded.setdefault(MASTER_WEIGHTS_KEY, {})[key] = masters[key]
        if loaded:
            optimizer.resume_from(loaded)

    def drop(self) -> None:
        """A state loaded explicitly replaces whatever was read into the slots."""
        self._slots = None
