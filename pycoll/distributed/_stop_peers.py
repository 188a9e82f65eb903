"""A failing rank asks the job's other ranks on its machine to stop, before MPI's launcher kills them.

When a rank fails, MPI's launcher ends every other rank with SIGKILL, so a SIGTERM handler (a
checkpoint on exit) never runs. Paddle's launcher stops the other ranks with SIGTERM. So a rank
that stops the job (``_entry.guarded``) first sends SIGTERM to the other ranks of the job on its
machine (their process ids are in the job's folder, ``_jobdir``), and waits until they have
ended, at most :data:`GRACE_S` seconds; then MPI's launcher kills whatever is left. Ranks on other
machines (there is no job folder then) and jobs started by plain ``mpiexec`` keep MPI's own way.
"""
from __future__ import annotations

import os
import signal
import time

from pycoll.distributed import _jobdir
from pycoll.distributed.placement import MPI_SIZE_VARS, first_int

GRACE_S = 3.0  # how long the other ranks get to run their SIGTERM handlers
_POLL_S = 0.02


def _is_rank(pid: int) -> bool:
    """Whether ``pid`` is still a rank of a job (a rank that ended may have left its id to
    another process); where there is no ``/proc`` (not Linux), whether it lives at all."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return b"pycoll.distributed._entry" in cmdline.read()
    except OSError:
        if os.path.isdir("/proc"):
            return False
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def _running(pid: int) -> bool:
    """Whether ``pid`` has not ended (an ended one not yet reaped counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return not os.path.isdir("/proc") and _is_rank(pid)


def terminate_peers(rank: int) -> None:
    """SIGTERM the job's other ranks on this machine and wait (at most :data:`GRACE_S`) until
    they have ended; nothing without a job folder."""
    where = _jobdir.folder()
    if where is None:
        return
    peers = [pid for peer, pid in _jobdir.pids(where, first_int(MPI_SIZE_VARS) or 1).items()
             if peer != rank and pid != os.getpid() and _is_rank(pid)]
    for pid in peers:
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:  # already gone
            pass
    deadline = time.monotonic() + GRACE_S
    while any(_running(pid) for pid in peers) and time.monotonic() < deadline:
        time.sleep(_POLL_S)
