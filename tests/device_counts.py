"""Count what one training step on "gpu" tensors asks of the device, over tests/strict_cupy.py.

On a GPU an eager step costs about (kernel launches x 5-10 us of host time) plus a full stall at
each device->host transfer. The stand-in reports both (its ``_COUNTER`` hook): :func:`counting`
collects them, per phase of the step, as ``{phase: {"sync": n, "op": n, "upload": n}}``;
:func:`step_counts` runs a whole step (forward, loss, backward, optimizer step, clear_grad) that
way. ``python tests/device_counts.py [--where]`` prints the table for the cases of
tests/test_device_counts.py (``--where``: which line of pycoll asked for each sync).
"""
from __future__ import annotations

import collections
import contextlib
import os
import sys
from typing import Any, Callable, Dict, Iterator, Optional

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import strict_cupy  # noqa: E402

KINDS = ("sync", "op", "upload")
PHASES = ("forward", "loss", "backward", "step", "clear_grad")
_PACKAGE = os.sep + "pycoll" + os.sep


class Counts:
    """What the stand-in reported, by phase; ``where`` also keeps, for each report, the innermost
    line of pycoll that led to it (``sites[phase][(kind, name, site)]``)."""

    def __init__(self, where: bool = False):
        self.where = where
        self.current = "other"
        self.by_phase: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
        self.sites: Dict[str, collections.Counter] = collections.defaultdict(collections.Counter)

    def __call__(self, kind: str, name: str) -> None:
        self.by_phase[self.current][kind] += 1
        if self.where:
            self.sites[self.current][(kind, name, _pycoll_site())] += 1

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        previous, self.current = self.current, name
        try:
            yield
        finally:
            self.current = previous

    def table(self) -> Dict[str, Dict[str, int]]:
        return {phase: {kind: self.by_phase[phase][kind] for kind in KINDS} for phase in self.by_phase}

    def total(self, kind: str) -> int:
        return sum(counter[kind] for counter in self.by_phase.values())


def _pycoll_site() -> str:
    frame: Any = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_filename
        if _PACKAGE in name:
            return f"{name.split(_PACKAGE, 1)[1]}:{frame.f_lineno} {frame.f_code.co_name}"
        frame = frame.f_back
    return "?"


@contextlib.contextmanager
def counting(where: bool = False) -> Iterator[Counts]:
    """Count the stand-in's device work inside the block (call it inside ``strict_cupy.installed()``)."""
    counts = Counts(where)
    previous, strict_cupy._COUNTER[0] = strict_cupy._COUNTER[0], counts
    try:
        yield counts
    finally:
        strict_cupy._COUNTER[0] = previous


def run_step(model: Any, loss_fn: Callable[[Any, Any], Any], optimizer: Any, x: Any, y: Any,
             scaler: Any = None, autocast: Optional[Callable[[], Any]] = None,
             counts: Optional[Counts] = None) -> Any:
    """One training step, each phase under ``counts.phase`` when given; returns the loss."""
    phase = counts.phase if counts is not None else (lambda name: contextlib.nullcontext())
    context = autocast() if autocast is not None else contextlib.nullcontext()
    with context:
        with phase("forward"):
            out = model(x)
        with phase("loss"):
            loss = loss_fn(out, y)
    with phase("backward"):
        (scaler.scale(loss) if scaler is not None else loss).backward()
    with phase("step"):
        if scaler is not None:
            scaler.step(optimizer)
            scaler.update()
        else:
            optimizer.step()
    with phase("clear_grad"):
        optimizer.clear_grad()
    return loss


def step_counts(model: Any, loss_fn: Callable[[Any, Any], Any], optimizer: Any, x: Any, y: Any,
                scaler: Any = None, autocast: Optional[Callable[[], Any]] = None, warmup: int = 1,
                where: bool = False) -> Counts:
    """The counts of one step after ``warmup`` uncounted ones (the first step makes the optimizer's
    accumulators and DataParallel's buckets: a steady step is what a training loop repeats)."""
    for _ in range(warmup):
        run_step(model, loss_fn, optimizer, x, y, scaler, autocast)
    with counting(where) as counts:
        run_step(model, loss_fn, optimizer, x, y, scaler, autocast, counts)
    return counts


def format_table(rows: Dict[str, Counts]) -> str:
    """A markdown table: one row per case, 'syncs / ops' per phase, then the totals."""
    head = "| case | " + " | ".join(PHASES) + " | total syncs | total ops | uploads |"
    lines = [head, "|" + "---|" * (len(PHASES) + 4)]
    for case, counts in rows.items():
        table = counts.table()
        cells = [f"{table.get(p, {}).get('sync', 0)} / {table.get(p, {}).get('op', 0)}" for p in PHASES]
        lines.append(f"| {case} | " + " | ".join(cells) + f" | {counts.total('sync')} | {counts.total('op')} | {counts.total('upload')} |")
    return "\n".join(lines)


if __name__ == "__main__":
    import test_device_counts as cases

    where = "--where" in sys.argv
    with strict_cupy.installed():
        rows = {name: cases.CASES[name](where=where) for name in cases.CASES}
    print(format_table(rows))
    if where:
        for name, counts in rows.items():
            for phase, sites in counts.sites.items():
                for (kind, call, site), n in sorted(sites.items(), key=lambda kv: -kv[1]):
                    if kind == "sync" or "--ops" in sys.argv:
                        print(f"{name:28s} {phase:10s} {kind:6s} {n:4d} {call:22s} {site}")
