"""What one recording period leaves (``ProfilerResult``), its Chrome trace file and
``load_profiler_result``, which reads such a file back.

The file is paddle's chrome-tracing JSON: an object with ``displayTimeUnit``, ``schemaVersion``,
``span_index``, ``traceEvents`` (one complete event, ``"ph": "X"``, per span, named
``"<name>[<dur> us]"``, its ``cat`` the event type, ``ts`` in wall-clock microseconds, then the
process and thread metadata events) and ``ExtraInfo`` (thread names, CPU utilization). Read
back, a span keeps its duration to the nanosecond and its start to the microsecond (``ts``).
paddle's protobuf form (``format='pb'``) needs protobuf, which pycoll does not depend on: asking
for it raises, naming the JSON form instead.
"""
from __future__ import annotations

import json
import os
import re
import time
from typing import Any, Dict, List, Optional, Tuple

from pycoll.profiler.recorder import EPOCH_OFFSET_NS, HostEvent
from pycoll.profiler.states import TracerEventType

PROTOBUF_REFUSED = ("pycoll writes no protobuf profile (paddle's NodeTreesProto needs the protobuf package, which "
                    "pycoll does not depend on): use format='json' / export_chrome_tracing, which "
                    "load_profiler_result reads back")
_DURATION_SUFFIX = re.compile(r"\[[0-9.]+ us\]$")


def cpu_snapshot() -> Tuple[float, float, Optional[Tuple[int, int]]]:
    """(wall seconds, this process's CPU seconds, the system's (busy, total) jiffies or None)."""
    system = None
    try:
        with open("/proc/stat") as stat:
            fields = [int(v) for v in stat.readline().split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
        system = (sum(fields) - idle, sum(fields))
    except (OSError, ValueError, IndexError):  # not Linux: the system's share reads 0
        pass
    times = os.times()
    return time.perf_counter(), times.user + times.system, system


def utilization(before: Tuple[Any, ...], after: Tuple[Any, ...]) -> Dict[str, str]:
    """paddle's two figures as fractions: process CPU time over elapsed time (up to the number of
    cores), and the system's busy share of all cores."""
    wall = after[0] - before[0]
    process = (after[1] - before[1]) / wall if wall > 0 else 0.0
    system = 0.0
    if before[2] and after[2] and after[2][1] > before[2][1]:
        system = (after[2][0] - before[2][0]) / (after[2][1] - before[2][1])
    return {"Process Cpu Utilization": f"{process:.6f}", "System Cpu Utilization": f"{system:.6f}"}


class ProfilerResult:
    """The events of one recording period and its extra information (thread names, CPU use)."""

    def __init__(self, events: List[HostEvent], extra_info: Dict[str, str], span_index: int = 0) -> None:
        self.span_index = span_index  # which recording period of the process this is (from 0)
        self._events = sorted(events, key=lambda e: (e.start_ns, -e.end_ns))
        self._extra_info = dict(extra_info)
        for event in self._events:
            self._extra_info.setdefault(str(event.thread_id), event.thread_name)

    def get_data(self) -> List[HostEvent]:
        """The recorded spans, by start time (each a :class:`HostEvent`)."""
        return list(self._events)

    def get_extra_info(self) -> Dict[str, str]:
        return dict(self._extra_info)

    def get_span_index(self) -> int:
        return self.span_index

    def save(self, path: str, format: str = "json") -> None:
        """Write the Chrome trace file ``path`` (``format='json'``; ``'pb'`` is refused)."""
        if format == "pb":
            raise NotImplementedError(PROTOBUF_REFUSED)
        if format != "json":
            raise ValueError(f"ProfilerResult.save: format must be 'json' or 'pb', got {format!r}")
        with open(path, "w") as out:
            json.dump(self._chrome_trace(), out, indent=1)

    def _chrome_trace(self) -> Dict[str, Any]:
        pid = os.getpid()
        origin = self._events[0].start_ns if self._events else 0
        trace: List[Dict[str, Any]] = []
        for e in self._events:
            dur_us = (e.end_ns - e.start_ns) / 1e3
            trace.append({"name": f"{e.name}[{dur_us:.3f} us]", "pid": pid, "tid": f"{e.thread_id}(Python)",
                          "ts": (e.start_ns + EPOCH_OFFSET_NS) // 1000, "dur": round(dur_us, 3),
                          "ph": "X", "cat": e.type.name, "cname": "thread_state_runnable",
                          "args": {"start_time": f"{(e.start_ns - origin) / 1e3:.3f} us",
                                   "end_time": f"{(e.end_ns - origin) / 1e3:.3f} us"}})
        threads = sorted({(e.thread_id, e.thread_name) for e in self._events})
        for tid, name in threads:
            trace.append({"name": "process_name", "pid": pid, "tid": f"{tid}(Python)", "ph": "M",
                          "args": {"name": f"Process {pid} (CPU)"}})
            trace.append({"name": "thread_name", "pid": pid, "tid": f"{tid}(Python)", "ph": "M",
                          "args": {"name": f"thread {tid}:{name}(Python)"}})
        trace.append({"name": "process_sort_index", "pid": pid, "tid": pid, "ph": "M", "args": {"sort_index": pid}})
        for tid, _ in threads:
            trace.append({"name": "thread_sort_index", "pid": pid, "tid": f"{tid}(Python)", "ph": "M",
                          "args": {"sort_index": 2 * tid}})
        return {"displayTimeUnit": "ms", "schemaVersion": "1.0.2", "span_index": str(self.span_index), "traceEvents": trace,
                "ExtraInfo": self._extra_info}


def load_profiler_result(filename: str) -> ProfilerResult:
    """Read back a trace file written by ``Profiler.export(path, 'json')`` or
    ``export_chrome_tracing``. paddle reads its protobuf files here; pycoll writes none, and a
    file that is not such a JSON trace raises ValueError."""
    if not isinstance(filename, str):
        raise TypeError(f"load_profiler_result: filename must be a str, got {type(filename).__name__}")
    try:
        with open(filename) as f:
            doc = json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError(f"load_profiler_result: {filename!r} is not a JSON trace file ({PROTOBUF_REFUSED})") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        raise ValueError(f"load_profiler_result: {filename!r} has no 'traceEvents' list: it is not a profiler trace")
    extra = {str(k): str(v) for k, v in doc.get("ExtraInfo", {}).items()}
    events = []
    for item in doc["traceEvents"]:
        if item.get("ph") != "X" or item.get("cat") not in TracerEventType.__members__:
            continue
        tid = int(str(item["tid"]).split("(")[0])
        start = int(item["ts"]) * 1000 - EPOCH_OFFSET_NS
        events.append(HostEvent(_DURATION_SUFFIX.sub("", item["name"]), TracerEventType[item["cat"]], start,
                                start + round(float(item["dur"]) * 1e3), tid, extra.get(str(tid), "")))
    return ProfilerResult(events, extra, int(doc.get("span_index", 0)))
