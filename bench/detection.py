"""How fast a failure ends a job: the time from the fault to the launcher's (or mpiexec's) exit.

    python bench/detection.py [--backend cpu|nccl] [--repeat 3] [--nproc 2] [--cases ...]

Each case starts a job whose rank 0 waits in an all_reduce while rank 1 fails; the failing rank
prints the wall-clock time of its fault just before it. For the timeout cases the "fault" is the
moment rank 0's ``PYCOLL_TIMEOUT`` expires; for the signal case it is when this script signals
the launcher; for the mismatch case (``PYCOLL_DEBUG=1``) it is when the ranks start their
different collectives. One machine, so the ranks' clocks and this script's are the same clock.

``--backend nccl`` runs the same cases on NCCL ranks (on a GPU; several ranks share one GPU
through their own ``NCCL_HOSTID``, set by pycoll, and ``NCCL_SOCKET_IFNAME=lo``), with a
longer timeout: on NCCL ``PYCOLL_TIMEOUT`` also bounds the communicator's set-up. There a
rank's wait for the all_reduce is its host waiting for the GPU (the tensor's ``numpy()``), and
the watchdog ends the job through the call's event or NCCL's asynchronous error. In the
unchecked mismatch case nothing compares the calls up front: the ranks' stall notices (after
``min(10 s, PYCOLL_STALL_WARN)``) end the job; in the cross-group and send-send cases (MPI only)
the job-wide rule of the stall notices does.
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

TIMEOUT_S = {"cpu": 2.0, "nccl": 10.0}
LAUNCH = [sys.executable, "-m", "pycoll.launch", "--nproc_per_node"]
CASES: Dict[str, str] = {
    "raise": "an exception in rank 1 (pycoll.launch)",
    "exit": "sys.exit(3) in rank 1 (pycoll.launch)",
    "kill": "SIGKILL of rank 1 (pycoll.launch)",
    "exit-mpiexec": "sys.exit(3) in rank 1 (plain mpiexec)",
    "timeout": "rank 1 never joins (PYCOLL_TIMEOUT={timeout:g})",
    "new_group": "rank 1 never calls new_group (PYCOLL_TIMEOUT={timeout:g})",
    "mismatch": "rank 1 calls broadcast, rank 0 all_reduce (PYCOLL_DEBUG=1)",
    "mismatch-unchecked": "rank 1 calls barrier, rank 0 all_reduce (no check: the stall notices)",
    "cross-group": "rank 1 all_reduces on a group over both ranks, rank 0 on the world (job-wide rule)",
    "send-send": "both ranks send 16 MB to each other first (job-wide rule)",
    "sigterm": "SIGTERM to the launcher",
}
# the job-wide rule of the stall notices compares the MPI calls the ranks wait in; on NCCL these
# two cases end at PYCOLL_TIMEOUT (60 s on an H100, 2026-11-27), so they are left out there unless
# named with --cases
MPI_ONLY = ("cross-group", "send-send")
JOB_ENV = {  # what each backend's ranks run with, besides PYCOLL_TIMEOUT
    "cpu": {"PYCOLL_DEVICE": "cpu", "PYCOLL_BACKEND": "cpu"},
    "nccl": {"PYCOLL_DEVICE": "gpu", "PYCOLL_BACKEND": "nccl", "NCCL_SOCKET_IFNAME": "lo",
             "NCCL_IB_DISABLE": "1"},
}


def worker(mode: str) -> None:
    """One rank of a case's job; the tensor lives on the rank's device."""
    import pycoll
    import pycoll.distributed as dist

    dist.init_parallel_env()
    timeout = float(os.environ["PYCOLL_TIMEOUT"])
    x = pycoll.ones([4])
    print(f"READY rank={dist.get_rank()}", flush=True)
    if mode == "mismatch":
        print(f"FAULT {time.time():.6f}", flush=True)
        if dist.get_rank() == 1:
            dist.broadcast(x, src=0)
        else:
            dist.all_reduce(x)
    if mode == "mismatch-unchecked":
        print(f"FAULT {time.time():.6f}", flush=True)
        if dist.get_rank() == 1:
            dist.barrier()
        else:
            dist.all_reduce(x)
    if mode == "cross-group":
        both = dist.new_group([0, 1])
        print(f"FAULT {time.time():.6f}", flush=True)
        dist.all_reduce(x, group=both if dist.get_rank() == 1 else None)
    if mode == "send-send":
        big = pycoll.ones([4 << 20])  # 16 MB: past MPI's eager limit, so a send waits for its recv
        print(f"FAULT {time.time():.6f}", flush=True)
        dist.send(big, dst=1 - dist.get_rank())
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
        print(f"FAULT {time.time() + timeout:.6f}", flush=True)
    if mode == "new_group":
        dist.new_group([0, 1])
    dist.all_reduce(x)
    x.numpy()  # on a GPU, the host waits here for the all_reduce


def command(mode: str, nproc: int) -> List[str]:
    script = [os.path.abspath(__file__), "worker", mode]
    if mode == "exit-mpiexec":
        from pycoll.distributed._mpiexec import rank_command

        return rank_command(nproc, script)
    return LAUNCH + [str(nproc), *script]


def job_env(mode: str, backend: str) -> Dict[str, str]:
    """The environment of a case's job on ``backend``."""
    timeout = TIMEOUT_S[backend] if mode in ("timeout", "new_group") else 60.0
    env = {**os.environ, **JOB_ENV[backend], "PYCOLL_TIMEOUT": str(timeout)}
    if mode == "mismatch":
        env["PYCOLL_DEBUG"] = "1"
    return env


def one_run(mode: str, nproc: int, backend: str) -> Tuple[float, int]:
    """(seconds from the fault to the job's end, the job's exit status)."""
    env = job_env(mode, backend)
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
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{mode}: the job was still running 120 s after its start") from None
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=list(JOB_ENV), default="cpu",
                        help="cpu (MPI ranks) or nccl (NCCL ranks on the GPU)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per case (the median is shown)")
    parser.add_argument("--nproc", type=int, default=2, help="ranks per job")
    parser.add_argument("--cases", nargs="*", choices=list(CASES),
                        help="default: every case (on nccl, every one but the MPI-only ones)")
    args = parser.parse_args()
    print(f"# {args.nproc} ranks, {args.backend} backend")
    if args.cases is None:
        args.cases = [mode for mode in CASES if args.backend == "cpu" or mode not in MPI_ONLY]
        if args.backend != "cpu":
            print(f"# left out (the job-wide rule is MPI's; they end at PYCOLL_TIMEOUT): {', '.join(MPI_ONLY)}")
    print(f"| failure | fault to job end, median of {args.repeat} (s) | range (s) | exit status |")
    print("|---|---:|---:|---:|")
    failed = []
    for mode in args.cases:
        label = CASES[mode].format(timeout=TIMEOUT_S[args.backend])
        try:
            runs = [one_run(mode, args.nproc, args.backend) for _ in range(args.repeat)]
        except RuntimeError as exc:  # say so and go on: one case's trouble hides no other's times
            failed.append(mode)
            print(f"| {label} | not measured: {str(exc).splitlines()[0]} | | |", flush=True)
            print(exc, file=sys.stderr, flush=True)
            continue
        times = [t for t, _ in runs]
        statuses = sorted({s for _, s in runs})
        print(f"| {label} | {statistics.median(times):.2f} | {min(times):.2f}–{max(times):.2f} | "
              f"{', '.join(map(str, statuses))} |", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "worker":
        worker(sys.argv[2])
    else:
        sys.exit(main())
