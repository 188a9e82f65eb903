"""The profiler's enums (paddle's names and values) and ``make_scheduler``, which maps a step
number to the :class:`ProfilerState` the profiler is in during that step."""
from __future__ import annotations

import warnings
from enum import Enum
from typing import Callable


class ProfilerState(Enum):
    """CLOSED: nothing is recorded. READY: the profiler is prepared but records nothing yet.
    RECORD: events are recorded. RECORD_AND_RETURN: the last recorded step of a period; the
    recorded data are handed to ``on_trace_ready`` when it ends."""

    CLOSED = 0
    READY = 1
    RECORD = 2
    RECORD_AND_RETURN = 3


class ProfilerTarget(Enum):
    """The devices a profiler may watch. pycoll records host (CPU) events only."""

    CPU = 0
    GPU = 1
    XPU = 2
    CUSTOM_DEVICE = 3


class SummaryView(Enum):
    """The tables ``Profiler.summary`` can print (paddle's views; pycoll has data for the device,
    overview, distributed and user-defined ones)."""

    DeviceView = 0
    OverView = 1
    ModelView = 2
    DistributedView = 3
    KernelView = 4
    OperatorView = 5
    MemoryView = 6
    MemoryManipulationView = 7
    UDFView = 8


class SortedKeys(Enum):
    """How ``Profiler.summary`` orders the rows of its per-name tables."""

    CPUTotal = 0
    CPUAvg = 1
    CPUMax = 2
    CPUMin = 3
    GPUTotal = 4
    GPUAvg = 5
    GPUMax = 6
    GPUMin = 7


class TracerEventType(Enum):
    """The kind of a recorded event, paddle's names and values. pycoll records ProfileStep
    (each step), PythonUserDefined (``RecordEvent``), Communication (pycoll's collectives),
    Dataloader (each batch read), and Operator, Forward, Backward and Optimization (``op_events``)."""

    Operator = 0
    Dataloader = 1
    ProfileStep = 2
    CudaRuntime = 3
    Kernel = 4
    Memcpy = 5
    Memset = 6
    UserDefined = 7
    OperatorInner = 8
    Forward = 9
    Backward = 10
    Optimization = 11
    Communication = 12
    PythonOp = 13
    PythonUserDefined = 14
    DygraphKernelLaunch = 15
    StaticKernelLaunch = 16


def _count(value: object, name: str, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"make_scheduler: {name} must be an int >= {least}, got {value!r}")
    return value


def make_scheduler(*, closed: int, ready: int, record: int, repeat: int = 0,
                   skip_first: int = 0) -> Callable[[int], ProfilerState]:
    """A scheduler: after ``skip_first`` CLOSED steps, periods of ``closed`` CLOSED steps,
    ``ready`` READY steps and ``record`` recorded steps (the last one RECORD_AND_RETURN),
    ``repeat`` times (0: for ever), CLOSED afterwards. Bad counts raise ValueError (paddle: an
    AssertionError); ``ready=0`` warns, as paddle's does, that the first recorded step pays the
    profiler's start-up."""
    _count(closed, "closed", 0), _count(ready, "ready", 0), _count(record, "record", 1)
    _count(repeat, "repeat", 0), _count(skip_first, "skip_first", 0)
    if ready == 0:
        warnings.warn("Profiler will record data after enabling profiler immediately, some data collected at "
                      "the beginning of profiling may be 'noisy' because of overhead.", stacklevel=2)
    period = closed + ready + record

    def state_of(step: int) -> ProfilerState:
        if step < 0:
            raise ValueError(f"scheduler: step must be >= 0, got {step}")
        if step < skip_first:
            return ProfilerState.CLOSED
        done, at = divmod(step - skip_first, period)
        if repeat > 0 and done >= repeat or at < closed:
            return ProfilerState.CLOSED
        if at < closed + ready:
            return ProfilerState.READY
        return ProfilerState.RECORD if at < period - 1 else ProfilerState.RECORD_AND_RETURN

    return state_of
