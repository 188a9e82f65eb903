"""Bounding the job's start-up: a rank that never reaches ``init_parallel_env`` must not leave the
others waiting forever inside MPI's initialisation.

MPI's start-up (``MPI_Init``, then duplicating the world communicator) waits for every rank and
holds the interpreter's lock meanwhile, so no Python thread can time it. Each rank of a
multi-rank MPI job therefore starts a small guard process before it initialises MPI; if the
rank has not told the guard that start-up is over within the job's timeout, the guard prints
which ranks never arrived and ends the job (as :func:`_failure.abort_before_mpi` does, else by
terminating its rank), with a non-zero status. Under ``pycoll.launch`` and ``spawn`` the ranks
mark their arrival in the job's folder (``_jobdir``), so the guard can name the missing ones,
and a rank that ends without ever starting MPI marks that too: the guard then ends the job at
once, since its start-up can never complete. Under plain ``mpiexec`` it says that some rank did
not arrive.
"""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from typing import Iterator, Optional

from pycoll.distributed import _jobdir
from pycoll.distributed._failure import FORWARD_S, launcher_connection
from pycoll.distributed.placement import MPI_SIZE_VARS, first_int, launcher_rank, mpi_running
from pycoll.distributed.watchdog import stall_warn_seconds

# The guard: watches its stdin (a pipe from the rank) for at most TIMEOUT seconds (saying, once,
# past PYCOLL_STALL_WARN, which ranks have not arrived), and the job folder for ranks that left
# without starting MPI. Input or end of file (the rank finished
# start-up, or died) ends it quietly; silence past the timeout, or a rank that left, ends the
# job: the guard reports why in the job folder (as _failure.report does) and asks MPI's launcher
# through the rank's PMI connection, when it has one, to end the job (as _failure.abort_before_mpi
# does), else terminates the rank. It runs without pycoll (-S, a bare environment): it must start
# fast, whatever the rank has imported.
_GUARD = r"""
import json, os, select, signal, sys, time
pid, timeout, rank, world, job_dir, pmi_fd, forward, warn = (
    int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], int(sys.argv[6]),
    float(sys.argv[7]), float(sys.argv[8]))
def marked(kind):
    try:
        names = set(os.listdir(job_dir)) if job_dir else ()
    except OSError:  # the job is over and its folder gone
        names = ()
    return [r for r in range(world) if f"{kind}.{r}" in names]
start = time.monotonic()
deadline, warn_at = start + timeout, start + warn
while not marked("left"):
    now = time.monotonic()
    if now >= deadline:
        break
    if warn_at <= now:  # once, as the watchdog warns of a collective's long wait
        warn_at = float("inf")
        missing = [r for r in range(world) if r not in marked("arrived")]
        sys.stderr.write(f"pycoll: rank {rank} has waited {warn:g} s in init_parallel_env (PYCOLL_STALL_WARN)"
                         + (f" for rank(s) {missing}, which have not reached it" if job_dir and missing else "")
                         + f"; it fails after {timeout:g} s (PYCOLL_TIMEOUT)\n")
        sys.stderr.flush()
    if select.select([0], [], [], min(deadline - now, warn_at - now, 0.2))[0]:
        sys.exit(0)
if marked("left"):
    text = (f"the job's start-up cannot complete on rank {rank}: rank(s) {marked('left')} ended without "
            f"calling init_parallel_env, which every rank of the job must call (or none)")
else:
    missing = [r for r in range(world) if r not in marked("arrived")]
    if not job_dir:
        who = "a rank did not reach init_parallel_env (or MPI's start-up)"
    else:
        who = f"rank(s) {missing} did not reach init_parallel_env" if missing else "a rank did not finish MPI's start-up"
    text = f"the job's start-up did not complete within {timeout:g} s on rank {rank}: {who} (PYCOLL_TIMEOUT)"
text = f"pycoll.CollectiveError: {text}; stopping the job"
sys.stderr.write(text + "\n")
sys.stderr.flush()
if job_dir and not os.path.exists(os.path.join(job_dir, f"failed.{rank}")):
    with open(os.path.join(job_dir, f"failed.{rank}.tmp"), "w") as out:
        json.dump({"status": 1, "text": text}, out)
    os.replace(os.path.join(job_dir, f"failed.{rank}.tmp"), os.path.join(job_dir, f"failed.{rank}"))
time.sleep(forward)  # as before MPI_Abort: let the message reach the launcher's output first
try:
    os.write(pmi_fd, b"cmd=abort exitcode=1\n")
    if select.select([0], [], [], 5)[0]:  # end of file: the launcher has ended the rank
        sys.exit(0)
except OSError:
    pass
os.kill(pid, signal.SIGTERM)
"""


def _start_guard(rank: int, world: int, timeout: float) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "SYSTEMROOT")}
    pmi_fd = launcher_connection()
    return subprocess.Popen(
        [sys.executable, "-S", "-c", _GUARD, str(os.getpid()), repr(timeout), str(rank), str(world),
         _jobdir.folder() or "", str(-1 if pmi_fd is None else pmi_fd), repr(FORWARD_S), repr(stall_warn_seconds())],
        stdin=subprocess.PIPE, env=env, close_fds=True, pass_fds=() if pmi_fd is None else (pmi_fd,))


def mark_left_unstarted() -> None:
    """At the end of a rank of a multi-rank job that never started MPI: say so in the job folder,
    so that a peer waiting in MPI's start-up stops at once (see the module notes)."""
    rank, world = launcher_rank(), first_int(MPI_SIZE_VARS)
    mpi = sys.modules.get("mpi4py.MPI")
    if rank is not None and (world or 1) > 1 and (mpi is None or not mpi.Is_initialized()):
        _jobdir.write("left", rank, b"")


@contextlib.contextmanager
def bounded(timeout: float) -> Iterator[None]:
    """Run the start-up steps inside: on a rank of a multi-rank MPI job that has not started
    MPI yet, bounded by a guard process (see the module notes); elsewhere as they are."""
    rank, world = launcher_rank(), first_int(MPI_SIZE_VARS)
    guard: Optional[subprocess.Popen] = None
    if rank is not None and world is not None and world > 1 and not mpi_running():
        _jobdir.write("arrived", rank, b"")
        guard = _start_guard(rank, world, timeout)
    try:
        yield
    finally:
        if guard is not None:
            guard.stdin.close()  # end of file: start-up is over
            guard.wait()
