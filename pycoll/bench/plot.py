"""Bus bandwidth and latency against message size, for one run or several JSON result files
on one figure; a run with --compare raw also shows the raw engine call's curves beside
pycoll's. Sizes are labelled in B, KiB, MiB and GiB. The title says what every curve shares
(op, host, backend, ranks, type, reduction, date), each curve's label the rest.
matplotlib is optional (``pip install 'pycoll[plot]'``) and imported only here."""
from __future__ import annotations

import importlib.util
import itertools
import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from pycoll.bench.report import Result, size_text

MISSING = ("matplotlib is not installed; install it with pip install 'pycoll[plot]' "
           "(or pip install matplotlib)")

Labeled = Tuple[Optional[str], Result]  # (where the result came from, the result)


def available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def format_problem(path: str) -> Optional[str]:
    """Why matplotlib cannot write a figure to ``path`` (its ending names no format it writes);
    None when it can."""
    from matplotlib.figure import Figure

    kinds = Figure().canvas.get_supported_filetypes()
    ending = os.path.splitext(path)[1].lstrip(".").lower()
    if not ending or ending in kinds:  # no ending: matplotlib's default format
        return None
    return f"{path} ends in {ending!r}, not a figure format matplotlib writes ({', '.join(sorted(kinds))})"


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


def describe(result: Result) -> Dict[str, str]:
    """What a result was measured with, as the title and labels say it ("" where the result
    does not say, as in files from older versions, or for an op without a reduction)."""
    hosts = dict.fromkeys(str(d["host"]) for d in result.get("devices", ()))
    ranks = int(result["nranks"])
    redop = str(result.get("redop", "none"))
    return {"op": str(result["op"]), "host": "+".join(hosts), "backend": str(result["backend"]),
            "ranks": f"{ranks} rank{'s' * (ranks != 1)}", "dtype": str(result.get("dtype", "")),
            "redop": "" if redop == "none" else redop, "date": str(result.get("date", ""))}


def _text(fields: Dict[str, str]) -> str:
    """``fields`` in words: "all_reduce on host-a, backend cpu, 2 ranks, float, sum"."""
    parts: List[str] = []
    for key, value in fields.items():
        if not value:
            continue
        if key == "host":
            where = f"on {value}"
            parts[-1:] = [f"{parts[-1]} {where}"] if parts else [where]
        else:
            parts.append(f"backend {value}" if key == "backend" else value)
    return ", ".join(parts)


def title_and_labels(runs: List[Labeled]) -> Tuple[str, List[str]]:
    """The figure's title (what every run shares) and each run's label (the rest, with the
    file it came from where the files differ)."""
    described = [{"source": source or "", **describe(result)} for source, result in runs]
    shared = {k: v for k, v in described[0].items()
              if all(d[k] == v for d in described[1:])}
    labels = []
    for fields in described:
        source = "" if "source" in shared else fields["source"]
        rest = _text({k: v for k, v in fields.items() if k not in shared and k != "source"})
        labels.append(f"{source}: {rest}" if source and rest else source or rest)
    return _text({k: v for k, v in shared.items() if k != "source"}), labels


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
    for (_, result), label in zip(runs, title_and_labels(runs)[1]):
        pycoll, raw = next(colours), None
        for side, style, side_name in _SIDES:
            points = [(row["size"], row[side]) for row in result["rows"]
                      if row[side] is not None and row["size"] > 0]
            if not points:
                continue
            sizes = [size for size, _ in points]
            entries = [entry for _, entry in points]
            name = f"{label} {side_name}" if label else side_name
            lines.append(Curve(name, sizes, [e["busbw"] for e in entries],
                               [e["time_us"] for e in entries], style, pycoll))
            if all(e.get("raw_time_us") for e in entries):
                raw = raw or next(colours)
                engine = _RAW_ENGINES.get(str(result["backend"]), "raw engine")
                lines.append(Curve(f"{name}, {engine}", sizes,
                                   [e["busbw"] * e["time_us"] / e["raw_time_us"] for e in entries],
                                   [e["raw_time_us"] for e in entries], style, raw))
    return lines


def size_axis(ax: Any) -> None:
    """Make ``ax``'s x axis a log2 axis of sizes labelled in B, KiB, MiB and GiB."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: size_text(x)))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("message size")


def pyplot() -> Any:
    """matplotlib's pyplot on the file-only Agg backend; RuntimeError without matplotlib."""
    if not available():
        raise RuntimeError(MISSING)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figure(runs: List[Labeled]) -> Any:
    """The figure of :func:`curves`: busbw (left) and time (right) against size, solid lines
    out-of-place, dashed in-place, titled by :func:`title_and_labels`."""
    fig, (ax_bw, ax_t) = pyplot().subplots(1, 2)
    for curve in curves(runs):
        ax_bw.plot(curve.sizes, curve.busbw, curve.style, color=curve.colour, marker=".",
                   label=curve.label)
        ax_t.plot(curve.sizes, curve.time_us, curve.style, color=curve.colour, marker=".")
    for ax, ylabel in ((ax_bw, "bus bandwidth (GB/s)"), (ax_t, "time (µs)")):
        size_axis(ax)
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
    ax_t.set_yscale("log")
    ax_bw.set_title("bus bandwidth")
    ax_t.set_title("latency")
    fig.suptitle(f"pycoll-bench {title_and_labels(runs)[0]}".rstrip())
    legend_inches = 0.3 + 0.2 * ((len(ax_bw.get_lines()) + 1) // 2)  # two columns of entries
    fig.set_size_inches(13, 4.8 + legend_inches)
    fig.legend(loc="lower center", ncol=2, fontsize="small", frameon=False)
    fig.tight_layout(rect=(0, legend_inches / (4.8 + legend_inches), 1, 1))
    return fig


def plot(runs: List[Labeled], path: str) -> None:
    """Write the figure of ``runs`` (:func:`figure`) to ``path``."""
    fig = figure(runs)
    fig.savefig(path, dpi=120)
    pyplot().close(fig)
