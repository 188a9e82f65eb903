"""The measurement, on every rank of the job: for each op and size, time the out-of-place and
in-place runs (and, with --compare raw, the raw engine call, interleaved), then check results.

Timing follows nccl-tests (:mod:`pycoll.bench.timing`): warm-up calls, then a barrier and
``iters`` back-to-back calls timed by each rank; a rank's time is the mean per call, and the
ranks' times combine by -a (rank 0's, the average, the minimum or the maximum). pycoll and the
raw call are timed in alternating blocks (the order flipping from block to block) so that the
machine's noise falls on both alike. Checking runs each call once more on fresh inputs,
outside the timed region, and counts the elements that differ from the expected result,
summed over ranks. The buffers are allocated once, for the largest size; smaller sizes use
their beginning.

With the nccl backend the buffers are CuPy arrays on the rank's GPU and the calls only queue
work on the current stream: every timed block (and the warm-up) ends by synchronizing that
stream, and results are copied to the host to be checked. The ranks still coordinate (the
barrier before a block, the combined times, the counts of wrong elements) over MPI.
"""
from __future__ import annotations

import sys
from typing import Any, Callable, List, Optional

import numpy as np
from mpi4py import MPI

import pycoll.distributed as dist
from pycoll.bench import arrays, meta, report
from pycoll.bench.collectives import OPS
from pycoll.bench.config import Config, type_name
from pycoll.bench.ops import Buffers, Context, Op, rank_input
from pycoll.bench.report import Progress, Result
from pycoll.bench.timing import combine, time_calls

ROUNDS = 5  # blocks per contender and size when pycoll and the raw call are interleaved


class Sweep:
    """One op over the sizes of ``cfg`` on this rank."""

    def __init__(self, op: Op, cfg: Config, ctx: Context):
        self.op, self.cfg, self.ctx = op, cfg, ctx
        self.itemsize = cfg.dtype.itemsize
        self.mem = arrays.memory(cfg.backend)
        largest = op.layout(cfg.sizes[-1] // self.itemsize, ctx.nranks)
        self.send_store = self.mem.xp.zeros(largest.send, cfg.dtype)
        self.recv_store = self.mem.xp.zeros(largest.work, cfg.dtype)

    def _input(self, rank: int, nelems: int) -> np.ndarray:
        return rank_input(rank, nelems, self.cfg.dtype, self.ctx.redop)

    def _prepare(self, b: Buffers, inplace: bool, mine: np.ndarray) -> None:
        b.work[...] = 0
        self.mem.upload(self.op.input_view(b, self.ctx, inplace), mine)

    def _wrong(self, b: Buffers, inplace: bool, raw: bool, run: Callable[[], None],
               mine: np.ndarray, expected: Optional[np.ndarray]) -> int:
        """Elements of this run's result that differ from ``expected``, summed over ranks."""
        self._prepare(b, inplace, mine)
        run()
        out = self.op.output(b, self.ctx, inplace, raw)
        wrong = 0 if out is None else int(np.count_nonzero(self.mem.to_host(out) != expected))
        return self.ctx.comm.allreduce(wrong, op=MPI.SUM)

    def _entry(self, b: Buffers, inplace: bool, iters: int, nbytes: int, mine: np.ndarray,
               expected: Optional[np.ndarray]) -> dict:
        cfg, ctx, comm = self.cfg, self.ctx, self.ctx.comm
        runs = [self.op.through_pycoll(ctx, b, inplace)]
        if cfg.compare:
            runs.append(self.op.raw(ctx, b, inplace))
        self._prepare(b, inplace, mine)
        seconds = time_calls(comm, runs, iters, cfg.warmup, ROUNDS if cfg.compare else 1,
                             self.mem.sync)
        times = combine(comm, seconds, cfg.average)  # > 0: each includes a call
        algbw = nbytes / times[0] / 1e9
        entry = {"time_us": times[0] * 1e6, "algbw": algbw,
                 "busbw": algbw * self.op.busbw_factor(ctx.nranks),
                 "wrong": self._wrong(b, inplace, False, runs[0], mine, expected)
                 if cfg.check else None}
        if cfg.compare:
            entry["raw_time_us"] = times[1] * 1e6
            entry["raw_wrong"] = (self._wrong(b, inplace, True, runs[1], mine, expected)
                                  if cfg.check else None)
            entry["ratio"] = times[0] / times[1]
        return entry

    def row(self, size: int) -> dict:
        op, cfg, ctx = self.op, self.cfg, self.ctx
        layout = op.layout(size // self.itemsize, ctx.nranks)
        nbytes = max(layout.send, layout.recv) * self.itemsize
        iters = cfg.iterations(nbytes)
        b = Buffers.views(self.send_store, self.recv_store, layout)
        mine = self._input(ctx.rank, layout.send)
        expected = None
        if cfg.check:
            inputs = lambda j: mine if j == ctx.rank else self._input(j, layout.send)  # noqa: E731
            expected = op.expected(inputs, ctx, layout.count)
        row = {"size": nbytes, "count": layout.count, "type": type_name(cfg.dtype),
               **_labels(op, cfg), "iters": iters}
        row["oop"] = self._entry(b, False, iters, nbytes, mine, expected)
        row["ip"] = self._entry(b, True, iters, nbytes, mine, expected) if op.inplace else None
        return row


def run(cfg: Config) -> int:
    """Run ``cfg`` on this rank; rank 0 prints and writes the results. Returns the exit
    status: 0, 1 when a result was wrong, 2 when ``cfg`` cannot run on this job."""
    world = dist.init_parallel_env(backend=cfg.backend)
    rank, nranks = world.rank, world.nranks
    lead = rank == 0
    problems = cfg.problems(nranks, _reduction_error(world.backend))
    if problems:
        if lead:
            print("\n".join(f"pycoll-bench: error: {p}" for p in problems), file=sys.stderr,
                  flush=True)
        dist.barrier()  # a rank exiting non-zero stops the job: let rank 0 finish printing
        return 2
    comm = MPI.COMM_WORLD.Dup()
    nccl = world.backend.comm if cfg.backend == "nccl" else None
    results = _run_ops(cfg, Context(rank, nranks, cfg.root, cfg.reduce_op, comm, nccl), lead)
    if lead:
        _write_files(cfg, results)
    comm.Barrier()  # as above: the output is complete before any rank exits
    comm.Free()
    errors = sum(r["errors"] + r.get("raw_errors", 0) for r in results)
    return 1 if errors else 0


def _reduction_error(engine: Any) -> Callable[[np.dtype, int], Optional[str]]:
    """Why ``engine`` cannot reduce a dtype with an op (None when it can), from its plan."""
    def why(dtype: np.dtype, op: int) -> Optional[str]:
        try:
            engine.plan(dtype, op)
        except (TypeError, ValueError) as exc:
            return str(exc)
        return None
    return why


def _emit(lines: List[str]) -> None:
    print("\n".join(lines), flush=True)


def _run_ops(cfg: Config, ctx: Context, lead: bool) -> List[Result]:
    """Every op of ``cfg`` on this rank (``ctx``); rank 0 (``lead``) prints as it goes."""
    nranks = ctx.nranks
    devices, versions = meta.devices(ctx.comm, cfg.backend), meta.versions(cfg.backend)
    progress = Progress(cfg.progress and lead)
    if lead:
        _emit(report.header(cfg, nranks, devices, versions))
    results = []
    for k, name in enumerate(cfg.ops):
        op = OPS[name]
        if nranks < op.min_ranks:
            if lead:
                _emit([f"# {name}: skipped, it needs at least {op.min_ranks} ranks", "#"])
            continue
        if lead:
            _emit(report.table_header(name, cfg.compare, cfg.backend))
        sweep, rows = Sweep(op, cfg, ctx), []
        for i, size in enumerate(cfg.sizes):
            progress.size(name, size, i, len(cfg.sizes), k, len(cfg.ops))
            try:
                rows.append(sweep.row(size))
            finally:  # a failing run's traceback starts on a clean line
                progress.clear()
            if lead:
                _emit([report.row_line(rows[-1], cfg.compare)])
        result = _result(cfg, name, nranks, devices, versions, rows)
        if lead:
            _emit(report.footer(result))
        results.append(result)
    return results


def _labels(op: Op, cfg: Config) -> dict:
    """The redop and root columns: "none" and -1 for ops without them, as nccl-tests prints."""
    return {"redop": cfg.redop if op.reduces else "none", "root": cfg.root if op.rooted else -1}


def _result(cfg: Config, name: str, nranks: int, devices: list, versions: dict,
            rows: List[dict]) -> Result:
    entries = [row[side] for row in rows for side in ("oop", "ip") if row[side] is not None]
    result = {
        "op": name, "backend": cfg.backend, "nranks": nranks, "devices": devices,
        "versions": versions, "dtype": type_name(cfg.dtype), **_labels(OPS[name], cfg),
        "params": {"minbytes": cfg.sizes[0], "maxbytes": cfg.sizes[-1], "step": cfg.step,
                   "iters": cfg.iters, "warmup": cfg.warmup, "check": cfg.check,
                   "average": cfg.average, "compare": "raw" if cfg.compare else None},
        "avg_busbw": sum(e["busbw"] for e in entries) / len(entries) if entries else 0.0,
        "errors": sum(1 for e in entries if e["wrong"]),
        "rows": rows,
    }
    if cfg.compare:
        result["raw_errors"] = sum(1 for e in entries if e["raw_wrong"])
    return result


def _write_files(cfg: Config, results: List[Result]) -> None:
    if cfg.json_path:
        report.write_json(cfg.json_path, results)
    if cfg.csv_path:
        report.write_csv(cfg.csv_path, results, cfg.compare)
    if cfg.plot_path:
        from pycoll.bench import plot

        plot.plot([(None, r) for r in results], cfg.plot_path)
