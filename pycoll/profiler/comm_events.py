"""pycoll's own collective calls as Communication events, at no cost when nothing records.

The collective layer already marks every blocking call for its watchdog
(``pycoll.distributed.watchdog.watchdog``): ``watchdog.name, watchdog.group = fn, group`` before
the engine runs, ``watchdog.group = None`` after. While a profiler records, the watchdog's class
is swapped for a subclass whose ``group`` is a property that opens a span when a group is set and
closes it when ``None`` is; when recording stops the plain class comes back, so the collectives
pay nothing when no profiler runs. The profiler never imports the distributed side: it hooks the
watchdog only if pycoll.distributed was already loaded (no collective can run otherwise), and
looks again at each step. A call started with ``sync_op=False`` is timed up to its start (its
wait is the user's); on NCCL the span is the host-side enqueue, not the kernel (GPU timing is out
of scope).
"""
from __future__ import annotations

import sys
import time
from typing import Any, Dict, Optional

from pycoll.profiler.recorder import RECORDER
from pycoll.profiler.states import TracerEventType

_recording_classes: Dict[type, type] = {}  # the watchdog's class -> its recording subclass


def _recording_class(base: type) -> type:
    if base not in _recording_classes:
        def get_group(self: Any) -> Any:
            return self.__dict__.get("group")

        def set_group(self: Any, group: Any) -> None:
            now = time.perf_counter_ns()
            started: Optional[tuple] = self.__dict__.pop("_profiled_call", None)
            if started is not None and RECORDER.on:  # the call in progress ends (or a nested one starts)
                RECORDER.add(started[0], TracerEventType.Communication, started[1], now)
            if group is not None:
                self.__dict__["_profiled_call"] = (self.name, now)
            self.__dict__["group"] = group

        _recording_classes[base] = type(f"Recording{base.__name__}", (base,),
                                        {"group": property(get_group, set_group), "__module__": __name__})
    return _recording_classes[base]


def _watchdog() -> Any:
    module = sys.modules.get("pycoll.distributed.watchdog")
    return None if module is None else module.watchdog


def attach() -> None:
    """Record the collectives from now on (if the distributed side is loaded)."""
    dog = _watchdog()
    if dog is not None and type(dog) not in _recording_classes.values():
        dog.__class__ = _recording_class(type(dog))


def detach() -> None:
    """Give the watchdog its plain class back."""
    dog = _watchdog()
    if dog is not None and type(dog) in _recording_classes.values():
        dog.__dict__.pop("_profiled_call", None)
        dog.__class__ = type(dog).__mro__[1]
