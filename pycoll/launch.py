"""``python -m pycoll.launch``: start a training script on several ranks through MPI's launcher.

    python -m pycoll.launch --nproc_per_node 2 train.py --lr 0.1
    python -m pycoll.launch --gpus 0,1 train.py          # one rank per listed GPU

``python -m pycoll.distributed.launch`` is the same launcher under paddle's module name, and
paddle's spellings of the options are accepted (``--devices``, ``--selected_gpus``).

Each rank runs the script as ``__main__``. When one rank fails, its traceback is printed and
the whole job stops within seconds; the exit status is the failing rank's.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import signal
import sys
import tempfile
from typing import List, Optional

from pycoll.distributed import _mpiexec
from pycoll.distributed._entry import INTERRUPTED
from pycoll.distributed.placement import selected_gpus
from pycoll.distributed.startup import JOB_DIR_VAR


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m pycoll.launch",
        description="Start SCRIPT on several ranks (MPI processes) of this machine.")
    p.add_argument("--nproc_per_node", "--nprocs", type=int, default=None,
                   help="ranks to start (default: the number of --gpus, else 1)")
    p.add_argument("--gpus", "--devices", "--selected_gpus", dest="gpus", default=None,
                   help="comma-separated GPU ids to use (sets CUDA_VISIBLE_DEVICES; one rank each)")
    p.add_argument("-m", "--module", action="store_true",
                   help="treat SCRIPT as a module name, as `python -m` does")
    p.add_argument("script", help="the training script (or module with -m)")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments passed to the script")
    return p


def build_command(argv: Optional[List[str]] = None):
    """The rank command and its environment for the launcher arguments ``argv``."""
    parser = _parser()
    args = parser.parse_args(argv)
    env = {}
    nprocs = args.nproc_per_node
    if args.gpus is not None:
        try:
            gpus = selected_gpus(args.gpus, "--gpus")
        except ValueError as exc:
            parser.error(str(exc))
        env["CUDA_VISIBLE_DEVICES"] = ",".join(gpus)
        nprocs = nprocs or len(gpus)
    if nprocs is None:
        nprocs = 1
    if nprocs < 1:
        parser.error(f"--nproc_per_node {nprocs}: it must be at least 1")
    if args.module:
        try:
            found = importlib.util.find_spec(args.script)
        except ImportError:  # a dotted name whose package is missing
            found = None
        if found is None:
            parser.error(f"-m {args.script}: no module of that name can be imported here")
    elif not os.path.isfile(args.script):
        parser.error(f"{args.script}: no such script")
    mode = "module" if args.module else "script"
    command = _mpiexec.rank_command(
        nprocs, ["-m", "pycoll.distributed._entry", mode, args.script, *args.script_args])
    return command, _mpiexec.job_environment(env, nprocs)


def main(argv: Optional[List[str]] = None) -> int:
    command, env = build_command(argv)
    received = []
    with tempfile.TemporaryDirectory(prefix="pycoll-job-") as job_dir:
        env[JOB_DIR_VAR] = job_dir  # where the ranks mark their start-up (startup.py)
        job = _mpiexec.start_job(command, env)

        def forward(signum, frame):  # MPI's launcher stops every rank on SIGINT/SIGTERM
            received.append(signum)
            job.send_signal(signum)

        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, forward)
        status = job.wait()
    if signal.SIGINT in received:
        sys.stderr.write("pycoll.launch: interrupted (Ctrl-C); the job was stopped\n")
        return INTERRUPTED
    return status


if __name__ == "__main__":
    sys.exit(main())
