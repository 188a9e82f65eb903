"""The ``pycoll-bench`` command line (also ``python -m pycoll.bench``); examples in ``EXAMPLES``.

Started from a shell, it starts its own ranks (``--nprocs``; default one per visible GPU with
the nccl backend, else 2) through ``python -m pycoll.launch``; started by ``mpiexec``, ``srun``
or the launcher, it runs on the job's ranks. The backend is nccl where a GPU is usable (and
``PYCOLL_DEVICE`` is not ``cpu``), else cpu; ``--backend`` chooses. The flags are nccl-tests'
(-b -e -f -i -n -w -c -d -o -r -a), with two differences: without -n the number of timed calls
adapts to the size, and the default sweep is 8 B to 32 MiB by factors of 2, so that a first run
shows the whole curve in seconds.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional, Sequence, Tuple

from pycoll import device
from pycoll._logging import logger
from pycoll.bench import plot
from pycoll.bench.collectives import OPS
from pycoll.bench.config import (ALL, DTYPES, REDOPS, TIME_COMBINE, Config, parse_dtypes,
                                  parse_size, sweep)
from pycoll.distributed.launch.env_options import ENV_OPTIONS, REFUSED
from pycoll.distributed.placement import BACKENDS, launcher_rank

DEFAULT_NPROCS = 2
EXAMPLES = """examples:
  pycoll-bench all_reduce                      # one rank per GPU (nccl), else 2 CPU ranks
  pycoll-bench all_reduce --backend nccl --nprocs 2 -e 256M --compare raw
  pycoll-bench all -b 1K -e 1M -n 20 --json r.json
  pycoll-bench broadcast --nprocs 4 -r 1 --compare raw --csv b.csv
  mpiexec -n 4 pycoll-bench reduce_scatter -d double -o max
  pycoll-bench all_reduce -d all -o all -e 1M  # every type and reduction the engine can reduce
  pycoll-bench --plot-from cpu.json other.json --plot both.png
"""
class _Parser(argparse.ArgumentParser):
    """Prints usage, help and errors on one rank only when every rank of a job parses."""

    def _print_message(self, message: str, file=None) -> None:
        if launcher_rank() in (None, 0):
            super()._print_message(message, file)


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _at_least(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is too small: it must be at least {low}")
        return value
    parse.__name__ = f"integer >= {low}"
    return parse


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="pycoll-bench", formatter_class=argparse.RawDescriptionHelpFormatter,
                description="Bandwidth and latency of pycoll's collectives, as nccl-tests "
                            "measures NCCL's.",
                epilog=EXAMPLES)
    p.add_argument("op", nargs="?", choices=[*OPS, "all"], metavar="OP",
                   help=f"the collective: {', '.join(OPS)}, or all")
    sweep_ = p.add_argument_group("sizes and iterations (nccl-tests' flags)")
    sweep_.add_argument("-b", "--minbytes", type=_size, default=8,
                        help="smallest size in bytes, K/M/G suffixes allowed (default 8)")
    sweep_.add_argument("-e", "--maxbytes", type=_size, default=32 << 20,
                        help="largest size (default 32M)")
    step = sweep_.add_mutually_exclusive_group()
    step.add_argument("-f", "--stepfactor", type=_at_least(2), default=None,
                      help="multiply the size by this factor at each step (default 2)")
    step.add_argument("-i", "--stepbytes", type=_size, default=None,
                      help="add this many bytes at each step instead")
    sweep_.add_argument("-n", "--iters", type=_at_least(1), default=None,
                        help="timed calls per size (default: adapted to the size, 5 to 1000)")
    sweep_.add_argument("-w", "--warmup_iters", type=_at_least(0), default=5,
                        help="untimed calls before each size's timing (default 5)")
    sweep_.add_argument("-c", "--check", type=int, choices=(0, 1), default=1,
                        help="1: check every result against the expected values (default 1)")
    sweep_.add_argument("-d", "--datatype", choices=[*DTYPES, ALL], default="float",
                        metavar="TYPE", help=f"element type: {', '.join(DTYPES)} (bfloat16 needs "
                                             f"ml_dtypes), or all: one sweep per type (default "
                                             f"float)")
    sweep_.add_argument("-o", "--op", dest="redop", choices=[*REDOPS, ALL], default="sum",
                        metavar="REDOP", help=f"reduction of the reducing collectives: "
                                              f"{', '.join(REDOPS)}, or all: one sweep per "
                                              f"reduction (default sum); with -d all or -o all, "
                                              f"the types the backend cannot reduce with a "
                                              f"reduction are left out")
    sweep_.add_argument("-r", "--root", type=_at_least(0), default=0,
                        help="root rank of broadcast, reduce and scatter (default 0)")
    sweep_.add_argument("-a", "--average", type=int, choices=sorted(TIME_COMBINE), default=1,
                        help="how the ranks' times combine: 0 rank 0, 1 average, 2 min, "
                             "3 max (default 1)")
    run = p.add_argument_group("where it runs")
    run.add_argument("--backend", choices=BACKENDS, default=None,
                     help="cpu (MPI, NumPy buffers) or nccl (NCCL, CuPy buffers on the GPUs) "
                          "(default: nccl where a GPU is usable, else cpu)")
    run.add_argument("--nprocs", type=_at_least(1), default=None,
                     help=f"ranks to start when not already started by a launcher (default: "
                          f"one per visible GPU with nccl, else {DEFAULT_NPROCS})")
    run.add_argument("--compare", choices=("raw",), default=None,
                     help="raw: also time the raw engine call (mpi4py, or cupy.cuda.nccl's "
                          "NcclCommunicator), interleaved, and add the ratio pycoll time / "
                          "raw time")
    run.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                     help="a progress line on stderr (default: when stderr is a terminal)")
    out = p.add_argument_group("output")
    out.add_argument("--json", metavar="FILE", help="write the results as JSON")
    out.add_argument("--csv", metavar="FILE", help="write the results as CSV")
    out.add_argument("--plot", metavar="FILE.png",
                     help="plot bus bandwidth and latency against size (needs matplotlib)")
    out.add_argument("--plot-from", metavar="JSON", nargs="+",
                     help="plot these --json files on one --plot figure instead of running")
    return p


def default_backend() -> str:
    """nccl when CuPy sees a GPU, else cpu. ``PYCOLL_DEVICE=cpu`` keeps it on the CPU, as it
    keeps the library (and the CPU test suite on a GPU machine)."""
    if os.environ.get("PYCOLL_DEVICE", "").strip().lower() == "cpu":
        return "cpu"
    return "nccl" if device.gpu_count() > 0 else "cpu"


def default_nprocs(backend: str) -> int:
    """Ranks to start without --nprocs: one per visible GPU for nccl, else DEFAULT_NPROCS."""
    return device.gpu_count() if backend == "nccl" else DEFAULT_NPROCS


def _backend(parser: argparse.ArgumentParser, requested: Optional[str]) -> str:
    """The backend to measure; a clear error (not the cpu) for nccl where no GPU is usable."""
    name = requested or default_backend()
    if name == "nccl" and device.gpu_count() == 0:
        parser.error("argument --backend: nccl needs a usable GPU, and none is visible here "
                     "(CuPy is missing, finds no CUDA driver or sees no device); "
                     "use --backend cpu")
    return name


def _unwritable(path: str) -> Optional[str]:
    """Why a results file cannot be written at ``path``; None when it can."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        return f"{path} is a folder"
    if not os.path.isdir(folder):
        return f"folder {folder} does not exist"
    if not os.access(folder, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        return f"{path} is not writable"
    return None


def parse(argv: Sequence[str]) -> Tuple[argparse.Namespace, Optional[Config]]:
    """The parsed flags and the run they describe (None for a --plot-from that runs nothing).

    Bad flags exit with status 2 and a message naming the flag, as argparse does.
    """
    parser = build_parser()
    args = parser.parse_args(list(argv))
    if args.plot_from is not None:
        if args.op is not None:
            parser.error("argument --plot-from: it plots saved results and runs nothing; "
                         "leave out OP")
        if args.plot is None:
            parser.error("argument --plot-from: give the figure to write with --plot FILE.png")
    elif args.op is None:  # ([OP] in the usage: --plot-from takes none)
        parser.error(f"give OP, the collective to measure ({', '.join(OPS)}, or all), unless plotting saved "
                     f"results with --plot-from")
    if args.plot is not None and not plot.available():
        parser.error(f"argument --plot: {plot.MISSING}")
    for flag, path in (("--json", args.json), ("--csv", args.csv), ("--plot", args.plot)):
        problem = None if path is None else _unwritable(path) or (flag == "--plot" and plot.format_problem(path))
        if problem:  # found now, not after the whole sweep
            parser.error(f"argument {flag}: {problem}")
    if args.plot_from is not None:
        return args, None
    backend = _backend(parser, args.backend)
    factor = None if args.stepbytes is not None else (args.stepfactor or 2)
    try:
        sizes = sweep(args.minbytes, args.maxbytes, factor, args.stepbytes)
    except ValueError as exc:
        parser.error(str(exc))
    try:
        dtypes = parse_dtypes(args.datatype)
    except ValueError as exc:
        parser.error(f"argument -d/--datatype: {exc}")
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    cfg = Config(
        ops=list(OPS) if args.op == "all" else [args.op], sizes=sizes,
        dtypes=dtypes, redops=list(REDOPS) if args.redop == ALL else [args.redop], root=args.root,
        iters=args.iters, warmup=args.warmup_iters, check=bool(args.check),
        average=args.average, compare=args.compare == "raw", backend=backend,
        nprocs=args.nprocs, progress=progress,
        step=f"{factor}(factor)" if factor else f"{args.stepbytes}(bytes)",
        json_path=args.json, csv_path=args.csv, plot_path=args.plot)
    return args, cfg


def _relaunch(argv: List[str], nprocs: int) -> int:
    """Run this same command on ``nprocs`` ranks through pycoll's launcher; its exit status.
    The variables through which paddle's launcher takes its options (PADDLE_NPROC_PER_NODE,
    PADDLE_LOG_DIR, PADDLE_NNODES...), which a user of that launcher may have exported, are not
    this job's: pycoll-bench starts ``nprocs`` ranks on this machine, its table on stdout."""
    from pycoll import launch

    for variable in (*ENV_OPTIONS, *REFUSED):
        os.environ.pop(variable, None)

    command = ["--nproc_per_node", str(nprocs), "-m", "pycoll.bench", *argv]
    logger.info("pycoll-bench starts its ranks: python -m pycoll.launch %s", " ".join(command))
    return launch.main(command)


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args, cfg = parse(argv)
    if cfg is None:
        try:
            plot.plot(plot.load(args.plot_from), args.plot)
        except (OSError, ValueError) as exc:
            print(f"pycoll-bench: error: argument --plot-from: {exc}", file=sys.stderr)
            return 2
        print(f"pycoll-bench: wrote {args.plot}")
        return 0
    if launcher_rank() is None:
        nprocs = cfg.nprocs or default_nprocs(cfg.backend)
        problems = cfg.problems(nprocs)  # the ranks check the rest (dtype and reduction)
        if problems:
            build_parser().error("; ".join(problems))
        if nprocs > 1:
            if args.progress is None:  # the ranks' stderr is a pipe: decide here
                argv.append("--progress" if cfg.progress else "--no-progress")
            return _relaunch(argv, nprocs)
    from pycoll.bench import runner

    return runner.run(cfg)
