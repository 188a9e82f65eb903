"""Bus bandwidth and latency against message size, for one run or several JSON result files
on one figure. matplotlib is optional (``pip install 'pycoll[plot]'``) and imported only here."""
from __future__ import annotations

import importlib.util
import json
import os
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


def plot(runs: List[Labeled], path: str) -> None:
    """Write the figure to ``path``: busbw (left) and time (right) against size; solid lines
    out-of-place, dashed in-place, one colour per result."""
    if not available():
        raise RuntimeError(MISSING)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_bw, ax_t) = plt.subplots(1, 2)
    for i, (source, result) in enumerate(runs):
        colour = f"C{i % 10}"
        for side, style in (("oop", "-"), ("ip", "--")):
            points = [(row["size"], row[side]) for row in result["rows"]
                      if row[side] is not None and row["size"] > 0]
            if not points:
                continue
            sizes = [size for size, _ in points]
            label = f"{_label(source, result)} {'out-of-place' if side == 'oop' else 'in-place'}"
            ax_bw.plot(sizes, [e["busbw"] for _, e in points], style, color=colour, marker=".",
                       label=label)
            ax_t.plot(sizes, [e["time_us"] for _, e in points], style, color=colour, marker=".")
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
