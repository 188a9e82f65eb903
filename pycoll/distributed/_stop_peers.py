"""A failing rank asks the job's other ranks on its machine to stop, before MPI's launcher kills them.

When a rank fails, MPI's launcher ends every other rank with SIGKILL, so a SIGTERM handler (a
checkpoint on exit) never runs. Paddle's launcher stops the other ranks with SIGTERM. So the rank
that stops the job (``_entry.guarded``) first sends SIGTERM to the other ranks of the job on its
machine that handle it (their process ids are in the job's folder, ``_jobdir``), and waits until
they have ended or said they are done, at most :data:`GRACE_S` seconds; then MPI's launcher
kills whatever is left. A rank that does not handle SIGTERM gets none: it would only die of it
before MPI's launcher knew why, and MPI's closing message would then name it, not the rank that
failed. Ranks on other machines (there is no job folder then) and jobs started by plain
``mpiexec`` keep MPI's own way.

The first rank to fail takes the job's stop (:func:`take_stop`). A rank whose work ends after that
(its SIGTERM handler exited, or its own failure came later) is part of that stop, not a failure
of its own: it reports nothing and stops nobody; it says it is done and waits for MPI's launcher
to end it (:func:`await_stop`), so that the job's status and MPI's message are the failed rank's.
"""
from __future__ import annotations

import os
import signal
import sys
import time
from typing import Optional

from pycoll.distributed import _jobdir
from pycoll.distributed.placement import MPI_SIZE_VARS, first_int

GRACE_S = 3.0  # how long the other ranks get to run their SIGTERM handlers
# how long a rank ended under a peer's stop waits for MPI's launcher to end it: the grace, the
# stopping rank's pause before MPI_Abort and the launcher's own time, with room to spare
_AWAIT_S = GRACE_S + 10.0
_POLL_S = 0.02
_STOP = "stopping"  # the job folder's file naming the rank that stops the job


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


def _handles_sigterm(pid: int) -> bool:
    """Whether ``pid`` has a handler for SIGTERM (Linux's ``SigCgt`` mask); True where that
    cannot be read."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
    except (OSError, ValueError, IndexError):
        pass
    return True


def rank_running(pid: int) -> bool:
    """Whether rank process ``pid`` has not ended (an ended one not yet reaped counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return not os.path.isdir("/proc") and _is_rank(pid)


def _settled(where: str, rank: int) -> bool:
    """Whether ``rank`` needs no more time: its work ended, or it ended under the stop."""
    return any(_jobdir.read(where, kind, rank) is not None for kind in ("done", "stopped"))


def take_stop(rank: int) -> Optional[int]:
    """Make ``rank`` the one that stops the job, unless another rank already is: the rank that
    stops it (None without a job folder, where each rank stops it alone)."""
    return _jobdir.claim(_STOP, rank)


def stopping_rank() -> Optional[int]:
    """The rank that stops the job, if one does."""
    return _jobdir.holder(_STOP)


def terminate_peers(rank: int) -> None:
    """SIGTERM the job's other ranks on this machine that handle it, and wait (at most
    :data:`GRACE_S`) until each has ended or is done; nothing without a job folder."""
    where = _jobdir.folder()
    if where is None:
        return
    peers = {peer: pid for peer, pid in _jobdir.pids(where, first_int(MPI_SIZE_VARS) or 1).items()
             if peer != rank and pid != os.getpid() and not _settled(where, peer) and _is_rank(pid)
             and _handles_sigterm(pid)}
    for pid in peers.values():
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:  # already gone
            pass
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline and any(rank_running(pid) and not _settled(where, peer)
                                              for peer, pid in peers.items()):
        time.sleep(_POLL_S)


def await_stop(rank: int) -> None:
    """In a rank whose work ended while another rank stops the job: say so in the job folder and
    wait for MPI's launcher to end this process; never returns. A later SIGTERM changes nothing;
    should the launcher not act within :data:`_AWAIT_S`, the process ends by SIGTERM."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # a closed stream must not keep the stop waiting
            pass
    _jobdir.write("stopped", rank, b"")
    time.sleep(_AWAIT_S)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)
    while True:  # the signal is on its way
        time.sleep(1)
