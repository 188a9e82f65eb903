"""paddle's ``fleet.utils.timer_helper``: named wall-clock timers a training loop starts and stops
(``set_timers()`` once, then ``get_timers()("forward").start()`` ... ``.stop()``, and
``get_timers().log(["forward", "backward"])`` prints ``time (ms) | forward: 12.34 | ...``).

Each start and stop first waits for the device's queued work (``pycoll.device.synchronize``: a
no-op on the CPU), so a timer measures what the device did, as paddle's does. Misuse (starting a
running timer, stopping a stopped one, asking before ``set_timers``) raises RuntimeError naming
the timer, where paddle's asserts."""
from __future__ import annotations

import time
from typing import Dict, Optional, Sequence

from pycoll import device

__all__ = ["Timers", "get_timers", "set_timers", "is_timer_initialized"]

_GLOBAL_TIMERS: Optional["Timers"] = None


def is_timer_initialized() -> bool:
    return _GLOBAL_TIMERS is not None


def get_timers() -> "Timers":
    """The process's timers, made by :func:`set_timers`."""
    if _GLOBAL_TIMERS is None:
        raise RuntimeError("timer_helper.get_timers: timers are not initialized; call set_timers() first")
    return _GLOBAL_TIMERS


def set_timers() -> None:
    """Make the process's timers (once)."""
    global _GLOBAL_TIMERS
    if _GLOBAL_TIMERS is not None:
        raise RuntimeError("timer_helper.set_timers: timers have already been initialized; use get_timers()")
    _GLOBAL_TIMERS = Timers()


class _Timer:
    """One named timer: the seconds between its starts and stops, added up."""

    def __init__(self, name: str):
        self.name = name
        self.elapsed_ = 0.0
        self.started_ = False
        self.start_time = time.time()

    def start(self) -> None:
        if self.started_:
            raise RuntimeError(f"timer {self.name!r} has already started; stop it first")
        device.synchronize()
        self.start_time = time.time()
        self.started_ = True

    def stop(self) -> None:
        if not self.started_:
            raise RuntimeError(f"timer {self.name!r} is not started; start it first")
        device.synchronize()
        self.elapsed_ += time.time() - self.start_time
        self.started_ = False

    def reset(self) -> None:
        self.elapsed_ = 0.0
        self.started_ = False

    def elapsed(self, reset: bool = True) -> float:
        """The seconds timed so far (a running timer's current stretch included; it goes on
        running); with ``reset`` the count starts again from 0."""
        running = self.started_
        if running:
            self.stop()
        seconds = self.elapsed_
        if reset:
            self.reset()
        if running:
            self.start()
        return seconds


class Timers:
    """Timers by name, made on first use."""

    def __init__(self) -> None:
        self.timers: Dict[str, _Timer] = {}

    def __call__(self, name: str, use_event: bool = False) -> _Timer:
        if use_event:
            raise NotImplementedError(f"Timers({name!r}, use_event=True): pycoll has no GPU event timer (paddle's "
                                      f"core.GPUEventTimer); the default timer waits for the device and times "
                                      f"the same span")
        if name not in self.timers:
            self.timers[name] = _Timer(name)
        return self.timers[name]

    def log(self, names: Sequence[str], normalizer: float = 1.0, reset: bool = True) -> None:
        """Print ``time (ms) | name: ms | ...`` for ``names``, each divided by ``normalizer``
        (the number of steps timed, say)."""
        if not normalizer > 0.0:
            raise ValueError(f"Timers.log: normalizer={normalizer!r}; it must be > 0")
        missing = [name for name in names if name not in self.timers]
        if missing:
            raise KeyError(f"Timers.log: no timer named {missing}; the timers are {sorted(self.timers)}")
        line = "time (ms)"
        for name in names:
            line += f" | {name}: {self.timers[name].elapsed(reset=reset) * 1000.0 / normalizer:.2f}"
        print(line, flush=True)
