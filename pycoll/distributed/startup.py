"""Bounding the job's start-up: a rank that never reaches ``init_parallel_env`` must not leave the
others waiting forever inside MPI's initialisation.

MPI's start-up (``MPI_Init``, then duplicating the world communicator) waits for every rank and
holds the interpreter's lock meanwhile, so no Python thread can time it. Each rank of a
multi-rank MPI job therefore starts a small guard process before it initialises MPI; if the
rank has not told the guard that start-up is over within the job's timeout, the guard prints
which ranks never arrived and terminates the rank, and MPI's launcher ends the job with a
non-zero status. Under ``pycoll.launch`` and ``spawn`` the ranks mark their arrival in the job's
folder (``PYCOLL_JOB_DIR``), so the guard can name the missing ones; under plain ``mpiexec`` it
says that some rank did not arrive.
"""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from typing import Iterator, Optional

from pycoll.distributed.placement import MPI_SIZE_VARS, first_int, launcher_rank, mpi_running

JOB_DIR_VAR = "PYCOLL_JOB_DIR"

# The guard: waits on its stdin (a pipe from the rank) for at most TIMEOUT seconds. Input or end
# of file (the rank finished start-up, or died) ends it quietly; silence ends the rank.
_GUARD = r"""
import os, select, signal, sys
pid, timeout, rank, world, job_dir = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
if select.select([0], [], [], timeout)[0]:
    sys.exit(0)
if job_dir:
    missing = [r for r in range(world) if not os.path.exists(os.path.join(job_dir, f"arrived.{r}"))]
    who = f"rank(s) {missing} did not reach init_parallel_env" if missing else "a rank did not finish MPI's start-up"
else:
    who = "a rank did not reach init_parallel_env (or MPI's start-up)"
sys.stderr.write(f"pycoll.CollectiveError: the job's start-up did not complete within {timeout:g} s on rank {rank}: "
                 f"{who} (PYCOLL_TIMEOUT); stopping the job\n")
sys.stderr.flush()
os.kill(pid, signal.SIGTERM)
"""


def _mark_arrival(rank: int) -> None:
    job_dir = os.environ.get(JOB_DIR_VAR)
    if job_dir and os.path.isdir(job_dir):
        with open(os.path.join(job_dir, f"arrived.{rank}"), "w"):
            pass


def _start_guard(rank: int, world: int, timeout: float) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")}
    return subprocess.Popen(
        [sys.executable, "-S", "-c", _GUARD, str(os.getpid()), repr(timeout), str(rank), str(world),
         os.environ.get(JOB_DIR_VAR, "")],
        stdin=subprocess.PIPE, env=env, close_fds=True)


@contextlib.contextmanager
def bounded(timeout: float) -> Iterator[None]:
    """Run the start-up steps inside: on a rank of a multi-rank MPI job that has not started
    MPI yet, bounded by a guard process (see the module notes); elsewhere as they are."""
    rank, world = launcher_rank(), first_int(MPI_SIZE_VARS)
    guard: Optional[subprocess.Popen] = None
    if rank is not None and world is not None and world > 1 and not mpi_running():
        _mark_arrival(rank)
        guard = _start_guard(rank, world, timeout)
    try:
        yield
    finally:
        if guard is not None:
            guard.stdin.close()  # end of file: start-up is over
            guard.wait()
