"""Bus bandwidth and latency against message size, for one run or several JSON result files
on one figure; a run with --compare raw also shows the raw engine call's curves beside
pycoll's. matplotlib is optional (``pip install 'pycoll[plot]'``) and imported only here."""
from __future__ import annotations

import importlib.util
import itertools
import json
import os
from dataclasses import dataclass
from typing import List, Optional, Tuple

from pycoll.bench.report import Result

MISSING = ("matplotlib is not installed; install it with pip install 'pycoll[plot]' "
           "(or pip install matplotlib)")

Labeled = Tuple[Optional[str], Result]  # (where the result came from, the result)


def available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def load(paths: List[str]) -> List[Labeled]:
    """The results in JSON files written by --json (an object, or a list for OP ``all``)."""
    runs: List[Labeled] = []
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        items = data if isinstance(data, list) else [data]
        if not items or not all(isinstance(r, dict) and "rows" in r and "op" in r for r in items):
            raise ValueError(f"{path}: not a pycoll-bench JSON result (written by --json)")
        name = os.path.splitext(os.path.basename(path))[0]
        runs += [(name, r) for r in items]
    return runs


def _label(source: Optional[str], result: Result) -> str:
    what = f"{result['op']} ({result['backend']}, {result['nranks']} ranks)"
    return f"{source}: {what}" if source else what


@dataclass
class Curve:
    """One line on both panels: busbw and time against size."""

    label: str
    sizes: List[int]
    busbw: List[float]      # GB/s
    time_us: List[float]
    style: str              # "-" out-of-place, "--" in-place
    colour: str


_SIDES = (("oop", "-", "out-of-place"), ("ip", "--", "in-place"))
_RAW_ENGINES = {"cpu": "raw MPI", "nccl": "raw NCCL"}


def curves(runs: List[Labeled]) -> List[Curve]:
    """The lines of ``runs``: pycoll's out-of-place and in-place results, and, for a run with
    --compare raw, the raw engine call's beside them (its busbw from its own time); one
    colour per result and contender."""
    lines: List[Curve] = []
    colours = (f"C{i % 10}" for i in itertools.count())
    for source, result in runs:
        label = _label(source, result)
        pycoll, raw = next(colours), None
        for side, style, side_name in _SIDES:
            points = [(row["size"], row[side]) for row in result["rows"]
                      if row[side] is not None and row["size"] > 0]
            if not points:
                continue
            sizes = [size for size, _ in points]
            entries = [entry for _, entry in points]
            lines.append(Curve(f"{label} {side_name}", sizes, [e["busbw"] for e in entries],
                               [e["time_us"] for e in entries], style, pycoll))
            if all(e.get("raw_time_us") for e in entries):
                raw = raw or next(colours)
                engine = _RAW_ENGINES.get(str(result["backend"]), "raw engine")
                lines.append(Curve(f"{label} {side_name}, {engine}", sizes,
                                   [e["busbw"] * e["time_us"] / e["raw_time_us"] for e in entries],
                                   [e["raw_time_us"] for e in entries], style, raw))
    return lines


def plot(runs: List[Labeled], path: str) -> None:
    """Write the figure of :func:`curves` to ``path``: busbw (left) and time (right) against
    size; solid lines out-of-place, dashed in-place."""
    if not available():
        raise RuntimeError(MISSING)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_bw, ax_t) = plt.subplots(1, 2)
    for curve in curves(runs):
        ax_bw.plot(curve.sizes, curve.busbw, curve.style, color=curve.colour, marker=".",
                   label=curve.label)
        ax_t.plot(curve.sizes, curve.time_us, curve.style, color=curve.colour, marker=".")
    for ax, ylabel in ((ax_bw, "bus bandwidth (GB/s)"), (ax_t, "time (µs)")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("size (bytes)")
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
    ax_t.set_yscale("log")
    ax_bw.set_title("bus bandwidth")
    ax_t.set_title("latency")
    legend_inches = 0.3 + 0.2 * ((len(ax_bw.get_lines()) + 1) // 2)  # two columns of entries
    fig.set_size_inches(13, 4.5 + legend_inches)
    fig.legend(loc="lower center", ncol=2, fontsize="small", frameon=False)
    fig.tight_layout(rect=(0, legend_inches / (4.5 + legend_inches), 1, 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)
