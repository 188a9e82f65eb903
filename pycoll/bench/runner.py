"""The measurement, on every rank of the job: for each op, each of its cases (data type and
reduction: several with -d all / -o all, those the engine cannot reduce left out) and each size,
time the out-of-place and in-place runs (and, with --compare raw, the raw engine call,
interleaved), then check results.

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
import time
from typing import Any, Callable, List, Optional, Tuple

import numpy as np
from mpi4py import MPI

import pycoll.distributed as dist
from pycoll.backends.reduce_op import ReduceOp
from pycoll.bench import arrays, meta, report
from pycoll.bench.collectives import OPS
from pycoll.bench.config import Case, Config, Refusal, type_name
from pycoll.bench.ops import Buffers, Context, Op, rank_input
from pycoll.bench.report import Progress, Result
from pycoll.bench.timing import combine, time_calls

ROUNDS = 5  # blocks per contender and size when pycoll and the raw call are interleaved


class Sweep:
    """One op and case (data type and reduction) over the sizes of ``cfg`` on this rank."""

    def __init__(self, op: Op, cfg: Config, case: Case, ctx: Context):
        self.op, self.cfg, self.case, self.ctx = op, cfg, case, ctx
        self.itemsize = case.dtype.itemsize
        self.mem = arrays.memory(cfg.backend)
        largest = op.layout(cfg.sizes[-1] // self.itemsize, ctx.nranks)
        try:
            self.send_store = self.mem.xp.zeros(largest.send, case.dtype)
            self.recv_store = self.mem.xp.zeros(largest.work, case.dtype)
        except MemoryError:  # NumPy's; CuPy's OutOfMemoryError is one too
            need = (largest.send + largest.work) * self.itemsize
            print(f"pycoll-bench: error: -e/--maxbytes {cfg.sizes[-1]}: rank {ctx.rank} cannot allocate its "
                  f"{need} bytes of buffers for {op.name}; lower -e", file=sys.stderr, flush=True)
            raise SystemExit(2) from None

    def _input(self, rank: int, nelems: int) -> np.ndarray:
        return rank_input(rank, nelems, self.case.dtype, self.ctx.redop)

    def _prepare(self, b: Buffers, inplace: bool, mine: np.ndarray) -> None:
        b.work[...] = 0
        self.mem.upload(self.op.input_view(b, self.ctx, inplace), mine)

    def _wrong(self, b: Buffers, inplace: bool, raw: bool, run: Callable[[], None],
               mine: np.ndarray, expected: Optional[np.ndarray]) -> Tuple[int, int]:
        """(elements of this run's result that differ from ``expected``, summed over ranks; the
        ranks with any)."""
        self._prepare(b, inplace, mine)
        run()
        out = self.op.output(b, self.ctx, inplace, raw)
        wrong = 0 if out is None else int(np.count_nonzero(self.mem.to_host(out) != expected))
        elements, ranks = self.ctx.comm.allreduce(np.array([wrong, int(wrong > 0)]), op=MPI.SUM)
        return int(elements), int(ranks)

    def _entry(self, b: Buffers, inplace: bool, iters: int, nbytes: int, mine: np.ndarray,
               expected: Optional[np.ndarray]) -> dict:
        cfg, ctx, comm = self.cfg, self.ctx, self.ctx.comm
        runs = [self.op.through_pycoll(ctx, b, inplace)]
        compare = cfg.compare and self.op.has_raw(ctx, self.case.dtype)
        if compare:
            runs.append(self.op.raw(ctx, b, inplace))
        self._prepare(b, inplace, mine)
        seconds = time_calls(comm, runs, iters, cfg.warmup, ROUNDS if compare else 1,
                             self.mem.sync)
        times = combine(comm, seconds, cfg.average)  # > 0: each includes a call
        algbw = nbytes / times[0] / 1e9
        wrong = self._wrong(b, inplace, False, runs[0], mine, expected) if cfg.check else (None, 0)
        entry = {"time_us": times[0] * 1e6, "algbw": algbw,
                 "busbw": algbw * self.op.busbw_factor(ctx.nranks), "wrong": wrong[0], "wrong_ranks": wrong[1]}
        if cfg.compare and not compare:  # no raw peer for this case: N/A
            entry.update(raw_time_us=None, raw_wrong=None, raw_wrong_ranks=0, ratio=None)
        elif compare:
            entry["raw_time_us"] = times[1] * 1e6
            raw = self._wrong(b, inplace, True, runs[1], mine, expected) if cfg.check else (None, 0)
            entry["raw_wrong"], entry["raw_wrong_ranks"] = raw
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
        row = {"size": nbytes, "count": layout.count, "type": type_name(self.case.dtype),
               **_labels(op, cfg, self.case), "iters": iters}
        row["oop"] = self._entry(b, False, iters, nbytes, mine, expected)
        row["ip"] = self._entry(b, True, iters, nbytes, mine, expected) if op.inplace else None
        return row


def run(cfg: Config) -> int:
    """Run ``cfg`` on this rank; rank 0 prints and writes the results. Returns the exit
    status: 0, 1 when a result was wrong, 2 when ``cfg`` cannot run on this job."""
    world = dist.init_parallel_env(backend=cfg.backend)
    rank, nranks = world.rank, world.nranks
    lead = rank == 0
    refusal = _reduction_error(world.engine)
    problems = cfg.problems(nranks, refusal)
    if problems:
        if lead:
            print("\n".join(f"pycoll-bench: error: {p}" for p in problems), file=sys.stderr,
                  flush=True)
        dist.barrier()  # a rank exiting non-zero stops the job: let rank 0 finish printing
        return 2
    comm = MPI.COMM_WORLD.Dup()
    nccl = world.engine.comm if cfg.backend == "nccl" else None
    ctx = Context(rank, nranks, cfg.root, ReduceOp.SUM, comm, nccl)  # redop: set per case
    results = Job(cfg, ctx, lead, refusal).run()
    if lead:
        _write_files(cfg, results)
    comm.Barrier()  # as above: the output is complete before any rank exits
    comm.Free()
    errors = sum(r["errors"] + r.get("raw_errors", 0) for r in results)
    return 1 if errors else 0


def _reduction_error(engine: Any) -> Refusal:
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


class Job:
    """Every op and case of ``cfg`` on this rank; rank 0 (``lead``) prints as it goes.
    ``ctx`` is the job's context (its ``redop`` is set per case); ``refusal`` says why the
    engine cannot reduce a case, which is then left out."""

    def __init__(self, cfg: Config, ctx: Context, lead: bool, refusal: Refusal):
        self.cfg, self.ctx, self.lead, self.refusal = cfg, ctx, lead, refusal
        self.devices = meta.devices(ctx.comm, cfg.backend)
        self.versions = meta.versions(cfg.backend)
        self.date = time.strftime("%Y-%m-%d %H:%M")
        self.progress = Progress(cfg.progress and lead)

    def emit(self, lines: List[str]) -> None:
        if self.lead:
            _emit(lines)

    def run(self) -> List[Result]:
        self.emit(report.header(self.cfg, self.ctx.nranks, self.devices, self.versions))
        results: List[Result] = []
        for k, name in enumerate(self.cfg.ops):
            results += self._op(name, k)
        return results

    def _op(self, name: str, k: int) -> List[Result]:
        """The ``k``-th op's cases, each a result, under one table."""
        cfg, op = self.cfg, OPS[name]
        if self.ctx.nranks < op.min_ranks:
            self.emit([f"# {name}: skipped, it needs at least {op.min_ranks} ranks", "#"])
            return []
        cases, left_out = cfg.split(op.reduces, self.refusal)
        self.emit(report.table_header(name, cfg.compare, cfg.backend,
                                      report.left_out_line(name, cfg.backend, left_out)))
        results = []
        for j, case in enumerate(cases):
            where = f"{case} ({j + 1}/{len(cases)})" if len(cases) > 1 else ""
            self.ctx.redop = case.reduce_op
            sweep, rows = Sweep(op, cfg, case, self.ctx), []
            for i, size in enumerate(cfg.sizes):
                self.progress.size(name, size, i, len(cfg.sizes), k, len(cfg.ops), where)
                try:
                    rows.append(sweep.row(size))
                finally:  # a failing run's traceback starts on a clean line
                    self.progress.clear()
                self.emit([report.row_line(rows[-1], cfg.compare)])
            results.append(self._result(name, case, rows))
        self.emit(report.footer(results))
        return results

    def _result(self, name: str, case: Case, rows: List[dict]) -> Result:
        cfg = self.cfg
        found = report.entries(rows)
        result = {
            "op": name, "backend": cfg.backend, "nranks": self.ctx.nranks,
            "devices": self.devices, "versions": self.versions, "date": self.date,
            "dtype": type_name(case.dtype), **_labels(OPS[name], cfg, case),
            "params": {"minbytes": cfg.sizes[0], "maxbytes": cfg.sizes[-1], "step": cfg.step,
                       "iters": cfg.iters, "warmup": cfg.warmup, "check": cfg.check,
                       "average": cfg.average, "compare": "raw" if cfg.compare else None},
            "avg_busbw": report.average_busbw(rows),
            "errors": sum(e["wrong_ranks"] for e in found),
            "rows": rows,
        }
        if cfg.compare:
            result["raw_errors"] = sum(e["raw_wrong_ranks"] for e in found)
        return result


def _labels(op: Op, cfg: Config, case: Case) -> dict:
    """The redop and root columns: "none" and -1 for ops without them, as nccl-tests prints."""
    return {"redop": case.redop or "none", "root": cfg.root if op.rooted else -1}


def _write_files(cfg: Config, results: List[Result]) -> None:
    if cfg.json_path:
        report.write_json(cfg.json_path, results)
    if cfg.csv_path:
        report.write_csv(cfg.csv_path, results, cfg.compare)
    if cfg.plot_path:
        from pycoll.bench import plot

        plot.plot([(None, r) for r in results], cfg.plot_path)
