"""``Profiler``: paddle's state machine over training steps (CLOSED, READY, RECORD,
RECORD_AND_RETURN, driven by a scheduler), the step timer behind ``step_info``, and the hand-over
of each recorded period to ``on_trace_ready`` (by default a Chrome trace in ``./profiler_log/``).

pycoll records host-side spans only: each step (``ProfileStep#N``), the user's ``RecordEvent``
spans, pycoll's own collective calls (``comm_events``) and the model's operators, layer forwards,
backwards (with each gradient node) and optimizer steps (``op_events``). GPU kernel timing is out of scope
(with a GPU, CuPy events around the NCCL calls could add it later), so a GPU or XPU target is
dropped with paddle's "not supported in current context" warning, and ``record_shapes``,
``profile_memory``, ``emit_nvtx``, ``custom_device_types`` and ``with_flops`` are kept as
attributes but record nothing more.
"""
from __future__ import annotations

import datetime
import numbers
import os
import socket
import warnings
import weakref
from typing import Any, Callable, Iterable, List, Optional, Sequence, Tuple, Union

from pycoll.profiler import comm_events, op_events
from pycoll.profiler.recorder import RECORDER, RecordEvent
from pycoll.profiler.result import PROTOBUF_REFUSED, ProfilerResult, cpu_snapshot, utilization
from pycoll.profiler.states import (ProfilerState, ProfilerTarget, SortedKeys, SummaryView, TracerEventType,
                                    make_scheduler)
from pycoll.profiler.summary_tables import build_summary
from pycoll.profiler.timer import benchmark

Scheduler = Callable[[int], ProfilerState]
SUPPORTED_TARGETS = [ProfilerTarget.CPU, ProfilerTarget.CUSTOM_DEVICE]  # paddle's CPU build's answer
_RECORDING = (ProfilerState.RECORD, ProfilerState.RECORD_AND_RETURN)


def _trace_dir(dir_name: str, fn: str) -> None:
    if not isinstance(dir_name, str):
        raise TypeError(f"{fn}: dir_name must be a str, got {type(dir_name).__name__}")
    try:
        os.makedirs(dir_name, exist_ok=True)
    except OSError as exc:
        raise RuntimeError(f"Can not create directory '{dir_name}' for saving profiling results.") from exc


def export_chrome_tracing(dir_name: str, worker_name: Optional[str] = None) -> Callable[["Profiler"], None]:
    """An ``on_trace_ready`` that writes each recorded period to
    ``dir_name/<worker_name>_time_<Y_m_d_H_M_S_us>.paddle_trace.json`` (worker name by default
    ``host_<hostname>pid_<pid>``). ``dir_name`` is created at once."""
    _trace_dir(dir_name, "export_chrome_tracing")

    def handle(prof: "Profiler") -> None:
        worker = worker_name or f"host_{socket.gethostname()}pid_{os.getpid()}"
        stamp = datetime.datetime.now().strftime("%Y_%m_%d_%H_%M_%S_%f")
        prof.export(os.path.join(dir_name, f"{worker}_time_{stamp}.paddle_trace.json"), "json")

    return handle


def export_protobuf(dir_name: str, worker_name: Optional[str] = None) -> Callable[["Profiler"], None]:
    """paddle's protobuf export: refused at once (NotImplementedError), see ``export_chrome_tracing``."""
    raise NotImplementedError(f"export_protobuf: {PROTOBUF_REFUSED}")


def _scheduler(scheduler: Any) -> Scheduler:
    if scheduler is None:
        return lambda step: ProfilerState.RECORD
    if callable(scheduler):
        return scheduler
    if isinstance(scheduler, (tuple, list)):
        if (len(scheduler) != 2 or not all(isinstance(s, int) and not isinstance(s, bool) for s in scheduler)
                or scheduler[1] <= scheduler[0]):
            raise ValueError(f"Profiler: scheduler as a pair must be (start_batch, end_batch) with "
                             f"end_batch > start_batch, got {scheduler!r}")
        start, end = max(scheduler[0], 0), scheduler[1]
        if start >= 1:
            return make_scheduler(closed=start - 1, ready=1, record=end - start, repeat=1)
        return make_scheduler(closed=0, ready=0, record=end - start, repeat=1)
    raise TypeError(f"Profiler: scheduler must be a callable, a (start_batch, end_batch) pair or None, "
                    f"got {type(scheduler).__name__}")


class Profiler:
    """Profiles the steps between ``start()`` (or ``with``) and ``stop()``; call ``step()`` at the
    end of each. ``scheduler`` says which steps are recorded (a callable such as
    ``make_scheduler(...)``, a ``(start, end)`` pair for steps [start, end), or None: all);
    ``on_trace_ready(prof)`` is called at the end of each recorded period. ``timer_only=True``
    only times the steps (``step_info``, the Perf Summary at ``stop``) and records nothing."""

    def __init__(self, *, targets: Optional[Iterable[ProfilerTarget]] = None,
                 scheduler: Union[Scheduler, Tuple[int, int], None] = None,
                 on_trace_ready: Optional[Callable[["Profiler"], None]] = None, record_shapes: bool = False,
                 profile_memory: bool = False, timer_only: bool = False, emit_nvtx: bool = False,
                 custom_device_types: Optional[Sequence[str]] = None, with_flops: bool = False) -> None:
        if targets:
            chosen = list(targets)
            bad = [t for t in chosen if not isinstance(t, ProfilerTarget)]
            if bad:
                raise TypeError(f"Profiler: targets must be ProfilerTarget members, got {bad[0]!r}")
            for target in chosen:
                if target not in SUPPORTED_TARGETS:
                    warnings.warn(f"Profiling {target} is not supported in current context.", stacklevel=2)
            self.targets = {t for t in chosen if t in SUPPORTED_TARGETS}
        else:
            self.targets = set(SUPPORTED_TARGETS)
        if on_trace_ready is not None and not callable(on_trace_ready):
            raise TypeError(f"Profiler: on_trace_ready must be callable, got {type(on_trace_ready).__name__}")
        self.scheduler = _scheduler(scheduler)
        self.on_trace_ready = on_trace_ready or export_chrome_tracing("./profiler_log/")
        self.step_num = 0
        self.previous_state = ProfilerState.CLOSED
        self.current_state = self.scheduler(self.step_num)
        self.record_event: Optional[RecordEvent] = None
        self.profiler_result: Optional[ProfilerResult] = None
        self.timer_only = timer_only
        self.record_shapes, self.profile_memory, self.with_flops = record_shapes, profile_memory, with_flops
        self.emit_nvtx = emit_nvtx
        self.custom_device_types = list(custom_device_types or [])
        self._cpu_before: Optional[tuple] = None

    def __enter__(self) -> "Profiler":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ---- the recorder's periods ----
    def _record_start(self) -> None:
        comm_events.attach()
        op_events.attach()
        self._cpu_before = cpu_snapshot()
        RECORDER.start()

    def _record_stop(self) -> ProfilerResult:
        events = RECORDER.stop()
        comm_events.detach()
        op_events.detach()
        return ProfilerResult(events, utilization(self._cpu_before or cpu_snapshot(), cpu_snapshot()),
                              RECORDER.period - 1)

    def _begin_step_event(self) -> None:
        if self.current_state in _RECORDING:
            comm_events.attach()  # the distributed side may have been loaded since
        self.record_event = RecordEvent(f"ProfileStep#{self.step_num}", TracerEventType.ProfileStep)
        self.record_event.begin()

    def _another_running(self) -> bool:
        """Whether this recording profiler would meet another one started and not stopped."""
        running = RECORDER.running() if RECORDER.running is not None else None
        return not self.timer_only and running is not None and running is not self

    def start(self) -> None:
        """Enter step 0 in the scheduler's state for it. One profiler records at a time (the
        process has one recorder; paddle's second start fails too): starting another while one
        runs raises, naming the way out."""
        if self._another_running():
            raise RuntimeError("Profiler.start: another Profiler is running (started and not stopped); the process "
                               "records with one at a time: stop it first, or record the inner code with "
                               "RecordEvent")
        benchmark().begin()
        if not self.timer_only:
            RECORDER.running = weakref.ref(self)
        if not self.timer_only or self.emit_nvtx:
            RECORDER.profiler_used = True
        if self.timer_only:
            return
        if self.current_state in _RECORDING:
            self._record_start()
        self._begin_step_event()

    def stop(self) -> None:
        """Leave the current state for CLOSED: a recording period ends here (RECORD counts as
        RECORD_AND_RETURN) and goes to ``on_trace_ready``. Prints the Perf Summary when more
        than 10 steps were timed."""
        if self._another_running():
            raise RuntimeError("Profiler.stop: this Profiler is not the one running (another was started and not "
                               "stopped); stop that one")
        lines = benchmark().end()
        if lines:
            print("\n".join(lines))
        if self.timer_only:
            return
        if self.record_event is not None:
            self.record_event.end()
            self.record_event = None
        if self.current_state == ProfilerState.READY:
            warnings.warn("Improper Profiler state transform: READY->CLOSED, profiler will start and stop without "
                          "saving data", stacklevel=2)
            self._record_start()
            self._record_stop()
        if self.current_state in _RECORDING:
            self.profiler_result = self._record_stop()
            if self.on_trace_ready:
                self.on_trace_ready(self)
        RECORDER.profiler_used = False
        if RECORDER.running is not None and RECORDER.running() is self:
            RECORDER.running = None

    def step(self, num_samples: Optional[int] = None) -> None:
        """End the current step and enter the next, acting on the state change."""
        if num_samples is not None and (isinstance(num_samples, bool) or not isinstance(num_samples, numbers.Integral)
                                        or num_samples <= 0):
            raise ValueError(f"Profiler.step: num_samples must be a positive int or None, got {num_samples!r}")
        benchmark().step(num_samples)
        if self.timer_only:
            return
        if self.record_event is not None:
            self.record_event.end()
            self.record_event = None
        self.previous_state = self.current_state
        self.step_num += 1
        self.current_state = self.scheduler(self.step_num)
        self._transition()
        self._begin_step_event()

    def _transition(self) -> None:
        """paddle's actions between two steps' states."""
        before, now = self.previous_state, self.current_state
        if before == ProfilerState.RECORD_AND_RETURN:
            self.profiler_result = self._record_stop()
            if now in _RECORDING:
                self._record_start()
            if self.on_trace_ready:
                self.on_trace_ready(self)
            return
        if before == ProfilerState.RECORD and now != ProfilerState.RECORD_AND_RETURN and now != ProfilerState.RECORD:
            change = "RECORD->CLOSED, profiler will not saving data" if now == ProfilerState.CLOSED else \
                "RECORD->READY, profiler will stop and re-prepare"
            warnings.warn(f"Improper schedule: {change}", stacklevel=3)
            self._record_stop()  # the period's data are dropped, as paddle's are
        elif before == ProfilerState.READY and now == ProfilerState.CLOSED:
            warnings.warn("Improper schedule: READY->CLOSED, profiler will start and stop without saving data",
                          stacklevel=3)
            self._record_start()
            self._record_stop()
        elif before in (ProfilerState.CLOSED, ProfilerState.READY) and now in _RECORDING:
            self._record_start()

    def step_info(self, unit: Optional[str] = None) -> str:
        """Average reader_cost, batch_cost and ips since the last call, e.g.
        ``' reader_cost: 0.00011 s batch_cost: 0.00405 s ips: 1086.429 images/s'`` (ips in
        ``unit``/s when ``step`` was given ``num_samples``, else steps/s)."""
        if unit is not None and not isinstance(unit, str):
            raise TypeError(f"Profiler.step_info: unit must be a str or None, got {type(unit).__name__}")
        return benchmark().step_info("samples" if unit is None else unit)

    def export(self, path: str = "", format: str = "json") -> None:
        """Write the last recorded period to ``path`` as a Chrome trace (``format='json'``);
        nothing when no period was recorded. ``'pb'`` (paddle's protobuf) raises NotImplementedError."""
        if format not in ("json", "pb"):
            raise ValueError(f"Profiler.export: format must be 'json' or 'pb', got {format!r}")
        if format == "pb":
            raise NotImplementedError(f"Profiler.export: {PROTOBUF_REFUSED}")
        if self.profiler_result is not None:
            self.profiler_result.save(path, format)

    def summary(self, sorted_by: SortedKeys = SortedKeys.CPUTotal, op_detail: bool = True, thread_sep: bool = False,
                time_unit: str = "ms", views: Union[SummaryView, List[SummaryView], None] = None) -> None:
        """Print the last recorded period's tables (see ``summary_tables``); ``op_detail`` has no
        operators to expand in pycoll."""
        if isinstance(views, SummaryView):
            views = [views]
        if self.profiler_result is not None:
            print(build_summary(self.profiler_result, sorted_by, thread_sep, time_unit, views))
