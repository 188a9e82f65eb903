"""Where host events go: one recorder per process, switched on while a profiler is in a RECORD
state, and ``RecordEvent``, the user's named span.

An event is kept when the recorder was on both when it began and when it ended, within one
recording period; spans cost two clock reads and a list append while recording, and one flag
test otherwise. Times are ``time.perf_counter_ns()`` readings; ``EPOCH_OFFSET_NS`` turns them
into wall-clock time for the trace files.
"""
from __future__ import annotations

import threading
import time
import warnings
from contextlib import ContextDecorator
from typing import Any, Callable, List, NamedTuple, Optional

from pycoll.profiler.states import TracerEventType

EPOCH_OFFSET_NS = time.time_ns() - time.perf_counter_ns()

# the kinds a RecordEvent may carry (paddle's list)
RECORDABLE = (TracerEventType.Dataloader, TracerEventType.ProfileStep, TracerEventType.Forward,
              TracerEventType.Backward, TracerEventType.Optimization, TracerEventType.PythonOp,
              TracerEventType.PythonUserDefined)


class HostEvent(NamedTuple):
    """One recorded span on a host thread (times in ``perf_counter_ns``)."""

    name: str
    type: TracerEventType
    start_ns: int
    end_ns: int
    thread_id: int
    thread_name: str


class _Recorder:
    """The process's event buffer. ``period`` numbers the recording periods, so that a span begun
    in one period and ended in the next is dropped."""

    def __init__(self) -> None:
        self.on = False
        self.period = 0
        self.events: List[HostEvent] = []
        self.profiler_used = False  # paddle's utils._is_profiler_used: a non-timer profiler runs
        self.running: Optional[Callable[[], Any]] = None  # a weak reference to the (non-timer) Profiler started

    def start(self) -> None:
        self.period += 1
        self.events = []
        self.on = True

    def stop(self) -> List[HostEvent]:
        """Switch off; the period's events."""
        self.on = False
        events, self.events = self.events, []
        return events

    def add(self, name: str, kind: TracerEventType, start_ns: int, end_ns: int) -> None:
        thread = threading.current_thread()
        self.events.append(HostEvent(name, kind, start_ns, end_ns, threading.get_native_id(), thread.name))


RECORDER = _Recorder()


def in_profiler_mode() -> bool:
    """Whether a profiler (not a timer-only one) has been started and not stopped."""
    return RECORDER.profiler_used


class RecordEvent(ContextDecorator):
    """A named span of the user's code: ``with RecordEvent("forward"): ...``, as a decorator, or
    ``begin()`` / ``end()``. It is recorded only while a profiler records (paddle's rule);
    otherwise it costs a flag test."""

    def __init__(self, name: str, event_type: TracerEventType = TracerEventType.PythonUserDefined) -> None:
        if not isinstance(name, str):
            raise TypeError(f"RecordEvent: name must be a str, got {type(name).__name__}")
        if not isinstance(event_type, TracerEventType):
            raise TypeError(f"RecordEvent: event_type must be a TracerEventType, got {event_type!r}")
        self.name = name
        self.event_type = event_type
        self._start: Optional[int] = None
        self._period = 0

    def __enter__(self) -> "RecordEvent":
        self.begin()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.end()

    def begin(self) -> None:
        """Mark the start of the span."""
        self._start = None
        if not RECORDER.profiler_used:
            return
        if self.event_type not in RECORDABLE:
            warnings.warn(f"Only TracerEvent Type in [{', '.join(str(k) for k in RECORDABLE)}] can be recorded.",
                          stacklevel=2)
            return
        if RECORDER.on:
            self._period = RECORDER.period
            self._start = time.perf_counter_ns()

    def end(self) -> None:
        """Mark the end of the span; it is kept if the profiler recorded throughout."""
        if self._start is None:
            return
        end = time.perf_counter_ns()
        if RECORDER.on and RECORDER.period == self._period:
            RECORDER.add(self.name, self.event_type, self._start, end)
        self._start = None
