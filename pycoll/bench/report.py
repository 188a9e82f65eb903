"""pycoll-bench's output: the nccl-tests-style table, its header and footer, JSON, CSV, and
the progress line.

A result (one op's sweep for one data type and reduction) is the dict written to JSON::

    {"op", "backend", "nranks", "devices", "versions", "date", "dtype", "redop", "root",
     "params", "avg_busbw", "errors",
     "rows": [{"size", "count", "type", "redop", "root", "iters",
               "oop": ENTRY, "ip": ENTRY or null}]}

    ENTRY = {"time_us", "algbw", "busbw", "wrong", "wrong_ranks"}  (+ "raw_time_us",
             "raw_wrong", "raw_wrong_ranks", "ratio" with --compare raw; null where the raw
             engine has no such call: MPI's bfloat16 reductions)

``wrong`` counts the elements that differed from the expected result, over all ranks (null
when results were not checked, -c 0), ``wrong_ranks`` the ranks that had any; ``errors`` adds
up ``wrong_ranks`` over the runs (each size, out-of-place and in-place): one per rank and run
with a wrong element, as nccl-tests' "Out of bounds values" (each rank's count, summed over the
ranks) does; with --compare raw, ``raw_errors`` counts the raw calls' ones. ``ip`` is null for
an op without an in-place form (sendrecv). Sizes are bytes, times microseconds, bandwidths GB/s (1e9 B/s).
``date`` is when the run started (local time, ``YYYY-MM-DD HH:MM``). A JSON file holds one
result, or, for OP ``all``, -d all or -o all, a list of them in the order they ran: for each op,
its data types in turn, each with its reductions in turn (as nccl-tests loops), each result
saying which in ``dtype`` and ``redop``. The table shows them as nccl-tests does: one header per
op, then one block of rows per type and reduction, then the op's footer over all its blocks.
"""
from __future__ import annotations

import csv
import itertools
import json
import sys
import time
from typing import Dict, List, Optional, Sequence, TextIO, Tuple

from pycoll.bench.collectives import OPS
from pycoll.bench.config import TIME_COMBINE, Case, Config, type_name

Result = Dict[str, object]

_LEAD = "%12s  %12s  %8s  %6s  %6s"
_SIDE = "  %7s  %6s  %6s  %6s"
_RATIO = "  %6s"


def size_text(nbytes: float) -> str:
    """A size in binary units: ``8 B``, ``1 KiB``, ``4 MiB``, ``1.5 GiB``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift:
            return f"{nbytes / (1 << shift):g} {unit}"
    return f"{nbytes:g} B"


def _time(us: float) -> str:
    """Microseconds with nccl-tests' precision: fewer decimals as the number grows."""
    if us >= 10000:
        return f"{us:.0f}"
    return f"{us:.1f}" if us >= 100 else f"{us:.2f}"


def header(cfg: Config, nranks: int, devices: List[dict], versions: Dict[str, str]) -> List[str]:
    """The lines before the tables: what ran, on what, with which software."""
    ops = "all ops" if len(cfg.ops) > 1 else cfg.ops[0]
    iters = "auto" if cfg.iters is None else str(cfg.iters)
    soft = ", ".join(f"{k} {v}" for k, v in versions.items() if k not in ("mpi", "nccl"))
    engine = f"NCCL {versions['nccl']}" if cfg.backend == "nccl" else "MPI"
    ranks = f"{nranks} rank{'s' * (nranks != 1)}"
    lines = [
        f"# pycoll-bench {ops}: backend {cfg.backend} ({engine}), {ranks}",
        f"# minBytes {cfg.sizes[0]} maxBytes {cfg.sizes[-1]} step: {cfg.step} warmup iters: "
        f"{cfg.warmup} iters: {iters} validation: {int(cfg.check)} time: "
        f"{TIME_COMBINE[cfg.average]} (-a {cfg.average})",
        f"# versions: {soft}",
        f"# MPI library: {versions['mpi']}",
    ]
    if cfg.compare:
        raw = ("the raw NcclCommunicator call's time on the world group's communicator"
               if cfg.backend == "nccl" else "the raw mpi4py call's time on a Dup of COMM_WORLD")
        lines.append(f"# ratio: pycoll's time / {raw}, both measured interleaved in this run")
    lines += ["#", "# Using devices"]
    lines += [f"#  Rank {d['rank']:2d} Pid {d['pid']:6d} on {d['host']:>10s} device {d['device']}"
              for d in devices]
    lines.append("#")
    return lines


def left_out_line(op: str, backend: str, left_out: Sequence[Tuple[Case, str]]) -> List[str]:
    """The one line (none when nothing is left out) naming the cases of ``op`` a run leaves
    out because the engine cannot reduce them (-d all, -o all): each type with its
    reductions."""
    if not left_out:
        return []
    by_type = itertools.groupby((case for case, _ in left_out), lambda case: case.dtype)
    names = ", ".join(f"{type_name(dtype)} {'/'.join(str(c.redop) for c in cases)}"
                      for dtype, cases in by_type)
    return [f"# {op}: left out, as the {backend} backend cannot reduce them: {names}"]


def table_header(op: str, compare: bool, backend: str = "cpu",
                 notes: Sequence[str] = ()) -> List[str]:
    """The op's title, ``notes`` (lines such as :func:`left_out_line`'s), and the columns."""
    spec = OPS[op]
    lines = [f"# {op}" + (f"  (raw: {spec.raw_call(backend)})" if compare else ""), *notes]
    if spec.oop_copies:
        lines.append(f"# pycoll's {op} works in place only: out-of-place copies the input into "
                     f"the output buffer, then runs in place; the copy is timed")
    if not spec.inplace:
        lines.append(f"# {op} has no in-place form: the in-place columns are N/A")
    side = _SIDE + (_RATIO if compare else "")
    width = len(side % (("",) * side.count("%")))
    title = "out-of-place".center(width) + "in-place".center(width)
    names = ("time", "algbw", "busbw", "#wrong") + (("ratio",) if compare else ())
    units = ("(us)", "(GB/s)", "(GB/s)", "") + (("",) if compare else ())
    # "# " takes the place of the size column's first two (blank) characters
    lines.append("#" + " " * (len(_LEAD % (("",) * 5)) - 1) + title.rstrip())
    lines.append("# " + (_LEAD % ("size", "count", "type", "redop", "root"))[2:]
                 + (side % names) * 2)
    lines.append(("# " + (_LEAD % ("(B)", "(elements)", "", "", ""))[2:]
                  + (side % units) * 2).rstrip())
    return lines


def _side(entry: Optional[dict], compare: bool) -> str:
    fields = ["N/A"] * 4 + (["N/A"] if compare else [])
    if entry is not None:
        wrong = entry["wrong"]
        fields[:4] = [_time(entry["time_us"]), f"{entry['algbw']:.2f}", f"{entry['busbw']:.2f}",
                      "N/A" if wrong is None else str(wrong)]
        if compare:
            fields[4] = "N/A" if entry["ratio"] is None else f"{entry['ratio']:.3f}"
    return (_SIDE + (_RATIO if compare else "")) % tuple(fields)


def row_line(row: dict, compare: bool) -> str:
    lead = _LEAD % (row["size"], row["count"], row["type"], row["redop"], row["root"])
    return lead + _side(row["oop"], compare) + _side(row["ip"], compare)


def entries(rows: Sequence[dict]) -> List[dict]:
    """The out-of-place and in-place entries of ``rows`` (an op without in-place has none)."""
    return [row[side] for row in rows for side in ("oop", "ip") if row[side] is not None]


def average_busbw(rows: Sequence[dict]) -> float:
    found = entries(rows)
    return sum(e["busbw"] for e in found) / len(found) if found else 0.0


def footer(results: Sequence[Result]) -> List[str]:
    """The footer of one op's table, over all its results (one per type and reduction)."""
    errors = sum(r["errors"] + r.get("raw_errors", 0) for r in results)
    rows = [row for r in results for row in r["rows"]]
    return [f"# Out of bounds values : {errors} {'FAILED' if errors else 'OK'}",
            f"# Avg bus bandwidth    : {average_busbw(rows):.6g}",
            "#"]


def write_json(path: str, results: List[Result]) -> None:
    """One result as an object; several (OP ``all``, -d all, -o all) as a list."""
    with open(path, "w") as f:
        json.dump(results[0] if len(results) == 1 else results, f, indent=1)
        f.write("\n")


_CSV_SIDE = ("time_us", "algbw", "busbw", "wrong")
_CSV_COMPARE = ("raw_time_us", "raw_wrong", "ratio")


def write_csv(path: str, results: List[Result], compare: bool) -> None:
    """One line per op and size; empty cells where a value does not exist (N/A)."""
    keys = _CSV_SIDE + (_CSV_COMPARE if compare else ())
    lead = ("op", "size", "count", "type", "redop", "root", "iters")
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(lead + tuple(f"{side}_{k}" for side in ("oop", "ip") for k in keys))
        for result in results:
            for row in result["rows"]:
                cells = [result["op"]] + [row[k] for k in lead[1:]]
                for side in ("oop", "ip"):
                    entry = row[side] or {}
                    cells += ["" if entry.get(k) is None else entry[k] for k in keys]
                out.writerow(cells)


class Progress:
    """Where a run is: on a terminal, one line on stderr per size, each rewritten in place by
    the next and cleared before the table's row is printed; silent when not enabled."""

    def __init__(self, enabled: bool, stream: TextIO = sys.stderr):
        self.enabled = enabled
        self.stream = stream
        self._width = 0
        self._start = time.monotonic()

    def size(self, op: str, size: int, index: int, sizes: int, op_index: int = 0,
             ops: int = 1, case: str = "") -> None:
        """Show that ``size`` (the ``index``-th of ``sizes``, from 0) of ``op`` (the
        ``op_index``-th of ``ops``) is running, and how long the run has taken so far;
        ``case``: which of the op's types and reductions, where it has several (-d/-o all),
        as ``"double max (7/34)"``."""
        where = (f", {case}" if case else "") + (f", op {op_index + 1}/{ops}" if ops > 1 else "")
        self._show(f"pycoll-bench {op}: {size} B ({index + 1}/{sizes}){where}, "
                    f"{time.monotonic() - self._start:.0f} s")

    def _show(self, text: str) -> None:
        if self.enabled:
            self.stream.write("\r" + text.ljust(self._width))
            self.stream.flush()
            self._width = len(text)

    def clear(self) -> None:
        if self.enabled and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()
            self._width = 0
