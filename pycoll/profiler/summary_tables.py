"""``Profiler.summary``'s tables, laid out as paddle's: the device summary (CPU utilization), the
overview (time per event type, overlapping spans of a type counted once), the model summary
(data loading, forward, backward and optimization: the first of them on each path in a step), the
distribution summary (time in pycoll's collectives), the operator summary (operators and
gradient nodes by name, their share of all operator time) and the user-defined summary
(``RecordEvent`` spans by name: calls, total / avg / max / min and share of the profiled steps).
Other ratios are taken over the time of the ProfileStep spans. pycoll records host spans only,
so the GPU columns read 0 and the kernel and memory views, which need device tracing, are not
printed; an operator has no inner events to detail (``op_detail``)."""
from __future__ import annotations

from collections import defaultdict
from typing import Dict, List, Optional, Sequence, Tuple

from pycoll.profiler.recorder import HostEvent
from pycoll.profiler.result import ProfilerResult
from pycoll.profiler.states import SortedKeys, SummaryView, TracerEventType

_UNITS = {"s": 1e9, "ms": 1e6, "us": 1e3, "ns": 1.0}
_GPU_ZERO = "0.00 / 0.00 / 0.00 / 0.00 / 0.00"


def merged_time(spans: Sequence[Tuple[int, int]]) -> int:
    """The time covered by ``spans``, overlaps counted once."""
    total, reach = 0, None
    for start, end in sorted(spans):
        if reach is None or start > reach:
            total += end - start
            reach = end
        elif end > reach:
            total += end - reach
            reach = end
    return total


class _Table:
    """paddle's layout: left-aligned columns two spaces apart, dashed rules, centred titles."""

    def __init__(self, widths: Sequence[int]) -> None:
        self.widths = list(widths)
        self.length = sum(self.widths) + 2 * (len(self.widths) - 1)
        self.rule = "".join("-" * w + "  " for w in self.widths)
        self.lines: List[str] = []

    def title(self, text: str) -> None:
        pad = self.length - len(text)
        self.lines.append("-" * (pad // 2) + text + "-" * (pad - pad // 2))

    def row(self, *cells: object) -> None:
        self.lines.append("".join(f"{str(c): <{w}}  " for c, w in zip(cells, self.widths)))

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)


class _Item:
    """The spans of one name: calls, total, max, min (ns)."""

    def __init__(self) -> None:
        self.durations: List[int] = []

    def cells(self, fmt, total_time: int) -> str:
        d = self.durations
        return " / ".join([fmt(sum(d)), fmt(sum(d) / len(d)), fmt(max(d)), fmt(min(d)),
                           f"{sum(d) / total_time * 100:.2f}"])

    def key(self, sorted_by: SortedKeys) -> float:
        d = self.durations
        return {SortedKeys.CPUTotal: -sum(d), SortedKeys.CPUAvg: -sum(d) / len(d), SortedKeys.CPUMax: -max(d),
                SortedKeys.CPUMin: min(d)}.get(sorted_by, 0)  # GPU keys: all zero, first-seen order


def build_summary(result: ProfilerResult, sorted_by: SortedKeys = SortedKeys.CPUTotal, thread_sep: bool = False,
                  time_unit: str = "ms", views: Optional[List[SummaryView]] = None) -> str:
    """The summary's text (see the module notes)."""
    if time_unit not in _UNITS:
        raise ValueError(f"summary: time_unit must be one of 's', 'ms', 'us', 'ns', got {time_unit!r}")
    if not isinstance(sorted_by, SortedKeys):
        raise TypeError(f"summary: sorted_by must be a SortedKeys, got {sorted_by!r}")
    scale = _UNITS[time_unit]

    def fmt(ns: float) -> str:
        return f"{ns / scale:.2f}"

    events = result.get_data()
    by_type: Dict[TracerEventType, List[HostEvent]] = defaultdict(list)
    for e in events:
        by_type[e.type].append(e)
    total_time = merged_time([(e.start_ns, e.end_ns) for e in by_type[TracerEventType.ProfileStep]])
    shown = set(SummaryView) if views is None else set(views)
    out: List[str] = []
    if SummaryView.DeviceView in shown:
        out += _device(result.get_extra_info())
        if total_time == 0:
            return "".join(line + "\n" for line in out)
    if SummaryView.OverView in shown and total_time:
        out += _overview(by_type, total_time, fmt, time_unit)
    if SummaryView.ModelView in shown and total_time and any(by_type[kind] for kind in _MODEL_PHASES):
        out += _model(by_type, total_time, fmt, time_unit)
    if SummaryView.DistributedView in shown and by_type[TracerEventType.Communication] and total_time:
        out += _distribution(by_type[TracerEventType.Communication], total_time, fmt, time_unit)
    operators = by_type[TracerEventType.Operator]
    if SummaryView.OperatorView in shown and operators and total_time:
        out += _by_name("Operator Summary", operators, sum(e.end_ns - e.start_ns for e in operators), fmt,
                        time_unit, sorted_by, thread_sep, name_width=52, operators=True)
    if SummaryView.UDFView in shown and by_type[TracerEventType.PythonUserDefined] and total_time:
        out += _by_name("UserDefined Summary", by_type[TracerEventType.PythonUserDefined], total_time, fmt,
                        time_unit, sorted_by, thread_sep)
    return "".join(line + "\n" for line in out)


def _device(extra: Dict[str, str]) -> List[str]:
    t = _Table([30, 20])
    t.title("Device Summary")
    t.add(t.rule)
    t.row("Device", "Utilization (%)")
    t.add(t.rule)
    t.row("CPU(Process)", f"{float(extra.get('Process Cpu Utilization', 0)) * 100:.2f}")
    t.row("CPU(System)", f"{float(extra.get('System Cpu Utilization', 0)) * 100:.2f}")
    t.add(t.rule,
          "Note:\nCPU(Process) Utilization = Current process CPU time over all cpu cores / elapsed time, so max "
          "utilization can be reached 100% * number of cpu cores.\nCPU(System) Utilization = All processes CPU time "
          "over all cpu cores(busy time) / (busy time + idle time).\nGPU Utilization = Current process GPU time / "
          "elapsed time.", "-" * t.length, "", "")
    return t.lines


def _overview(by_type: Dict[TracerEventType, List[HostEvent]], total_time: int, fmt, unit: str) -> List[str]:
    t = _Table([25] * 4)
    t.title("Overview Summary")
    t.add(f"Time unit: {unit}", t.rule)
    t.row("Event Type", "Calls", "CPU Time", "Ratio (%)")
    t.add(t.rule)
    times = sorted(((kind, merged_time([(e.start_ns, e.end_ns) for e in spans]),
                     len(_outermost(spans)) if kind in _MODEL_PHASES else len(spans))  # (a layer in a layer: once)
                    for kind, spans in by_type.items() if spans), key=lambda x: -x[1])
    for i, (kind, time, calls) in enumerate(times):
        t.row(("" if i == 0 else "  ") + kind.name, calls, fmt(time), f"{time / total_time * 100:.2f}")
    t.add(t.rule)
    t.row("", "Calls", "GPU Time", "Ratio (%)")
    t.add(t.rule, t.rule,
          "Note:\nIn this table, We sum up all collected events in terms of event type.\nThe time of events collected "
          "on host are presented as CPU Time, and as GPU Time if on device.\nEvents with different types may overlap "
          "or inclusion, e.g. Operator includes OperatorInner, so the sum of ratios is not 100%.\nThe time of events "
          "in the same type with overlap will not calculate twice, and all time is summed after merged.\nExample:\n"
          "Thread 1:\n  Operator: |___________|     |__________|\nThread 2:\n  Operator:   |____________|     "
          "|___|\nAfter merged:\n  Result:   |______________|  |__________|\n", "-" * t.length, "", "")
    return t.lines


def _distribution(spans: List[HostEvent], total_time: int, fmt, unit: str) -> List[str]:
    t = _Table([25] * 3)
    t.title("Distribution Summary")
    t.add(f"Time unit: {unit}", t.rule)
    t.row("Name", "Total Time", "Ratio (%)")
    t.add(t.rule)
    communication = merged_time([(e.start_ns, e.end_ns) for e in spans])
    t.row("ProfileStep", fmt(total_time), "100.00")
    t.row("  Communication", fmt(communication), f"{communication / total_time * 100:.2f}")
    t.row("  Computation", fmt(0), "0.00")  # device kernels: not traced by pycoll
    t.row("  Overlap", fmt(0), "0.00")
    t.add(t.rule,
          "Note:\nCommunication time: Communication Event time, Communication Op time and its kernel time on gpu.\n"
          "Computation time: Kernel time, except kernels belong to communication(nccl kernels).\nOverlap time: "
          "Communication time intersects with computation time.\nExample:\nCommunication:\n  CPU:              "
          "|_________________|\n  GPU:                                  |______________|\n  Total:            "
          "|_________________| |______________|\nComputation time(Kernel):\n  GPU:         |________________|\n"
          "Overlap time:       |___________|\n", "-" * t.length, "", "")
    return t.lines


_MODEL_PHASES = (TracerEventType.Dataloader, TracerEventType.Forward, TracerEventType.Backward,
                 TracerEventType.Optimization)


def _outermost(spans: List[HostEvent]) -> List[HostEvent]:
    """The spans not inside another of ``spans`` on their thread (a layer's forward inside its
    model's, a recomputed forward inside a backward)."""
    kept: List[HostEvent] = []
    reach: Dict[int, int] = {}
    for e in sorted(spans, key=lambda e: (e.start_ns, -e.end_ns)):
        if e.start_ns >= reach.get(e.thread_id, -1):
            kept.append(e)
            reach[e.thread_id] = e.end_ns
    return kept


def _model(by_type: Dict[TracerEventType, List[HostEvent]], total_time: int, fmt, unit: str) -> List[str]:
    rows = []
    steps = _Item()
    steps.durations = [e.end_ns - e.start_ns for e in by_type[TracerEventType.ProfileStep]]
    rows.append(("ProfileStep", len(steps.durations), steps.cells(fmt, total_time), _GPU_ZERO))
    phases_time = 0
    # the first phase on each path down from a step (a forward run again inside a backward by
    # recompute is the backward's time), as paddle's model perspective takes them
    first = _outermost([e for kind in _MODEL_PHASES for e in by_type[kind]])
    for kind in _MODEL_PHASES:
        if any(e.type == kind for e in first):
            item = _Item()
            item.durations = [e.end_ns - e.start_ns for e in first if e.type == kind]
            phases_time += sum(item.durations)
            rows.append(("  " + kind.name, len(item.durations), item.cells(fmt, total_time), _GPU_ZERO))
    others = total_time - phases_time
    rows.append(("  Others", "-", f"{fmt(others)} / - / - / - / {others / total_time * 100:.2f}",
                 "0.00 / - / - / - / 0.00"))
    t = _Table([15, max(6, *(len(str(r[1])) for r in rows)), max(40, *(len(r[2]) for r in rows)), 40])
    t.title("Model Summary")
    t.add(f"Time unit: {unit}", t.rule)
    t.row("Name", "Calls", "CPU Total / Avg / Max / Min / Ratio(%)", "GPU Total / Avg / Max / Min / Ratio(%)")
    t.add(t.rule)
    for r in rows:
        t.row(*r)
    t.add(t.rule, "Note:\nIn this table, GPU time is the sum of all device(GPU) events called in the phase.\n"
          "Unlike overview summary, if two device(GPU) events execute on different streams with overlap time, we "
          "sum them directly here.\n", "-" * t.length, "", "")
    return t.lines


def _by_name(title: str, spans: List[HostEvent], total_time: int, fmt, unit: str, sorted_by: SortedKeys,
             thread_sep: bool, name_width: int = 0, operators: bool = False) -> List[str]:
    """A table of ``spans`` by name, per thread or all threads merged; ratios over ``total_time``.
    ``operators``: paddle's operator table, with its FLOPs column (``-``: pycoll counts none
    here; ``pycoll.flops`` counts a model's) and a closing rule."""
    groups: Dict[str, Dict[str, _Item]] = defaultdict(dict)
    for e in spans:
        group = groups[str(e.thread_id) if thread_sep else "All threads merged"]
        group.setdefault(e.name, _Item()).durations.append(e.end_ns - e.start_ns)
    rows: List[object] = []
    for group_name, items in groups.items():
        rows.append(f"Thread: {group_name}")
        for name, item in sorted(items.items(), key=lambda kv: kv[1].key(sorted_by)):
            rows.append((name, len(item.durations), item.cells(fmt, total_time), _GPU_ZERO) + (("-",) * operators))
    cells = [r for r in rows if isinstance(r, tuple)]
    t = _Table([max(name_width, *(len(r[0]) for r in cells)), max(6, *(len(str(r[1])) for r in cells)),
                max(40, *(len(r[2]) for r in cells)), 40] + [10] * operators)
    t.title(title)
    t.add(f"Time unit: {unit}", t.rule)
    t.row("Name", "Calls", "CPU Total / Avg / Max / Min / Ratio(%)", "GPU Total / Avg / Max / Min / Ratio(%)",
          *(("FLOPs",) * operators))
    t.add(t.rule)
    for r in rows:
        if isinstance(r, tuple):
            t.row(*r)
        else:
            t.title(str(r))
    t.add(*([t.rule] * operators), "", "")
    return t.lines
