"""How fast a failure ends a job: the time from the fault to the launcher's (or mpiexec's) exit.

    python bench/detection.py [--repeat 3] [--nproc 2]

Each case starts a job whose rank 0 waits in an all_reduce while rank 1 fails; the failing rank
prints the wall-clock time of its fault just before it. For the timeout case the "fault" is the
moment rank 0's ``PYCOLL_TIMEOUT`` expires; for the signal case it is when this script signals
the launcher. One machine, so the ranks' clocks and this script's are the same clock.
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from typing import Dict, List, Tuple

TIMEOUT_S = 2.0
LAUNCH = [sys.executable, "-m", "pycoll.launch", "--nproc_per_node"]
CASES: Dict[str, str] = {
    "raise": "an exception in rank 1 (pycoll.launch)",
    "exit": "sys.exit(3) in rank 1 (pycoll.launch)",
    "kill": "SIGKILL of rank 1 (pycoll.launch)",
    "exit-mpiexec": "sys.exit(3) in rank 1 (plain mpiexec)",
    "timeout": f"rank 1 never joins (PYCOLL_TIMEOUT={TIMEOUT_S:g})",
    "new_group": f"rank 1 never calls new_group (PYCOLL_TIMEOUT={TIMEOUT_S:g})",
    "sigterm": "SIGTERM to the launcher",
}


def worker(mode: str) -> None:
    """One rank of a case's job."""
    import numpy as np

    import pycoll.distributed as dist

    dist.init_parallel_env()
    print(f"READY rank={dist.get_rank()}", flush=True)
    if dist.get_rank() == 1:
        time.sleep(0.5)
        if mode in ("timeout", "new_group", "sigterm"):
            time.sleep(120)
        print(f"FAULT {time.time():.6f}", flush=True)
        if mode == "raise":
            raise KeyError("planted failure")
        if mode.startswith("exit"):
            sys.exit(3)
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
    if mode in ("timeout", "new_group"):
        print(f"FAULT {time.time() + TIMEOUT_S:.6f}", flush=True)
    if mode == "new_group":
        dist.new_group([0, 1])
    dist.all_reduce(np.ones(4))


def command(mode: str, nproc: int) -> List[str]:
    script = [os.path.abspath(__file__), "worker", mode]
    if mode == "exit-mpiexec":
        from pycoll.distributed._mpiexec import rank_command

        return rank_command(nproc, script)
    return LAUNCH + [str(nproc), *script]


def one_run(mode: str, nproc: int) -> Tuple[float, int]:
    """(seconds from the fault to the job's end, the job's exit status)."""
    env = {**os.environ, "PYCOLL_TIMEOUT": str(TIMEOUT_S if mode in ("timeout", "new_group") else 60)}
    job = subprocess.Popen(command(mode, nproc), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, env=env, start_new_session=True)
    fault = None
    try:
        if mode == "sigterm":
            ready = 0
            for line in job.stdout:
                ready += line.startswith("READY")
                if ready == nproc:
                    break
            time.sleep(0.5)  # rank 0 is inside its all_reduce by now
            fault = time.time()
            job.send_signal(signal.SIGTERM)
        output, _ = job.communicate(timeout=120)
        end = time.time()
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
    if fault is None:
        found = re.findall(r"FAULT ([0-9.]+)", output)
        if not found:
            raise RuntimeError(f"{mode}: no fault time in the job's output:\n{output}")
        fault = float(found[0])
    if job.returncode == 0:
        raise RuntimeError(f"{mode}: the job exited 0 after a failure:\n{output}")
    return end - fault, job.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per case (the median is shown)")
    parser.add_argument("--nproc", type=int, default=2, help="ranks per job")
    parser.add_argument("--cases", nargs="*", default=list(CASES), choices=list(CASES))
    args = parser.parse_args()
    print(f"| failure | fault to job end, median of {args.repeat} (s) | range (s) | exit status |")
    print("|---|---:|---:|---:|")
    for mode in args.cases:
        runs = [one_run(mode, args.nproc) for _ in range(args.repeat)]
        times = [t for t, _ in runs]
        statuses = sorted({s for _, s in runs})
        print(f"| {CASES[mode]} | {statistics.median(times):.2f} | {min(times):.2f}–{max(times):.2f} | "
              f"{', '.join(map(str, statuses))} |", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "worker":
        worker(sys.argv[2])
    else:
        main()
