"""The step timer behind ``Profiler.step_info`` and the "Perf Summary" a profiler prints when it
stops (paddle's ``benchmark()``): the cost of each step, the cost of loading its data (a data
loader calls ``before_reader()`` / ``after_reader()`` around each batch) and the throughput.

Timers nest (an evaluation loop profiled inside a training loop): each ``begin()`` pushes one,
``end()`` prints its summary and pops it. The summary leaves out the first ``SKIP_STEPS`` steps
(warm-up) and is printed only when more steps than that were timed. Its averages are taken over
the steps it covers (paddle's divide one step short).
"""
from __future__ import annotations

import timeit
from typing import List, Optional

SKIP_STEPS = 10


class _Stats:
    """Total, max and min of a quantity over the steps the summary covers."""

    def __init__(self) -> None:
        self.values: List[float] = []

    def row(self, name: str, average: float) -> str:
        cells = [f"{average:.5f}", f"{max(self.values):.5f}", f"{min(self.values):.5f}"]
        return " ".join(["|", name.center(15), "|"] + [part for c in cells for part in (c.center(15), "|")])


class _Averager:
    """Costs since the last ``step_info`` call."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.count, self.seconds, self.samples = 0, 0.0, 0

    def add(self, seconds: float, samples: Optional[int] = None) -> None:
        self.count += 1
        self.seconds += seconds
        self.samples += samples or 0


class StepTimes:
    """One timed loop: its averagers (reset by ``step_info``) and its summary's records."""

    def __init__(self) -> None:
        self.reader, self.batch = _Averager(), _Averager()
        self.steps = 0
        self.samples = 0
        self.per_step_samples = True  # False once a step came without num_samples: ips in steps/s
        self.unit = "samples/s"
        self.reader_stats, self.batch_stats, self.speed_stats = _Stats(), _Stats(), _Stats()

    def add_reader(self, seconds: float) -> None:
        self.reader.add(seconds)
        if self.steps >= SKIP_STEPS:
            self.reader_stats.values.append(seconds)

    def add_step(self, seconds: float, num_samples: Optional[int]) -> None:
        if num_samples is None:
            self.per_step_samples = False
            self.unit = "steps/s"
        self.batch.add(seconds, num_samples)
        self.steps += 1
        if self.steps > SKIP_STEPS:
            self.batch_stats.values.append(seconds)
            if self.per_step_samples:
                self.samples += num_samples  # type: ignore[operator]
                self.speed_stats.values.append(num_samples / seconds)  # type: ignore[operator]
            else:
                self.speed_stats.values.append(1.0 / seconds)

    def speed(self) -> float:
        """Throughput since the last ``step_info``."""
        if not self.batch.count or not self.batch.seconds:
            return 0.0
        if self.per_step_samples:
            return self.batch.samples / self.batch.seconds
        return self.batch.count / self.batch.seconds

    def summary(self) -> List[str]:
        """The Perf Summary's lines; none when no step beyond the warm-up was timed."""
        covered = self.batch_stats.values
        if not covered:
            return []
        batch_total = sum(covered)
        reader_avg = sum(self.reader_stats.values) / len(covered)
        batch_avg = batch_total / len(covered)
        speed_avg = (self.samples if self.per_step_samples else len(covered)) / batch_total
        lines = ["Perf Summary".center(100, "=")]
        if reader_avg:
            lines.append(f"Reader Ratio: {reader_avg / batch_avg * 100:.3f}%")
        lines.append(f"Time Unit: s, IPS Unit: {self.unit}")
        lines.append(" ".join(["|", "".center(15), "|", "avg".center(15), "|", "max".center(15), "|",
                               "min".center(15), "|"]))
        if reader_avg:
            lines.append(self.reader_stats.row("reader_cost", reader_avg))
        lines.append(self.batch_stats.row("batch_cost", batch_avg))
        lines.append(self.speed_stats.row("ips", speed_avg))
        return lines


class Benchmark:
    """The process's step timer (see the module notes)."""

    def __init__(self) -> None:
        self.stack: List[StepTimes] = []
        self.step_start = timeit.default_timer()
        self.reader_start = self.step_start

    @property
    def current(self) -> Optional[StepTimes]:
        return self.stack[-1] if self.stack else None

    def begin(self) -> None:
        self.stack.append(StepTimes())
        self.step_start = timeit.default_timer()

    def before_reader(self) -> None:
        self.reader_start = timeit.default_timer()

    def after_reader(self) -> None:
        cost = timeit.default_timer() - self.reader_start
        if self.current is not None and cost:
            self.current.add_reader(cost)

    def step(self, num_samples: Optional[int] = None) -> None:
        if self.current is None:
            return
        now = timeit.default_timer()
        self.current.add_step(now - self.step_start, num_samples)
        self.step_start = now

    def step_info(self, unit: str) -> str:
        """``' reader_cost: 0.00011 s batch_cost: 0.00405 s ips: 1086.429 images/s'``: the averages
        since the last call (parts that are zero are left out)."""
        times = self.current
        if times is None:
            return ""
        message = ""
        if times.reader.count:
            message += f" reader_cost: {times.reader.seconds / times.reader.count:.5f} s"
        if times.batch.count:
            times.unit = unit + "/s" if times.per_step_samples else "steps/s"
            message += f" batch_cost: {times.batch.seconds / times.batch.count:.5f} s"
        speed = times.speed()
        if speed:
            message += f" ips: {speed:.3f} {times.unit}"
        times.reader.reset()
        times.batch.reset()
        return message

    def end(self) -> List[str]:
        """Pop the current timer; its summary's lines (the profiler prints them)."""
        if not self.stack:
            return []
        lines = self.stack.pop().summary()
        self.step_start = timeit.default_timer()
        return lines


_BENCHMARK = Benchmark()


def benchmark() -> Benchmark:
    """The process's step timer."""
    return _BENCHMARK
