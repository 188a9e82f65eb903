"""The job's folder (``PYCOLL_JOB_DIR``): what the ranks of a ``pycoll.launch`` or ``spawn`` job
leave in it, and how the launcher and spawn's parent learn from it which rank failed and why.

MPI's launcher knows only that *a* process failed, and returns the status of the first failure:
a signal's number when one killed it, without its rank. So each rank R writes here:

- ``pid.R`` as it starts: its process id (MPI's message about a killed process names that);
- ``fault.R``: Python's traceback, should a fatal signal (SIGSEGV, SIGFPE, SIGABRT, SIGBUS,
  SIGILL) end it (``faulthandler`` writes it; the file stays empty otherwise);
- ``arrived.R`` as it reaches ``init_parallel_env`` and ``left.R`` as it ends without ever having
  started MPI (``startup``: its peers' start-up can then never complete);
- ``stopping`` (one for the job): the rank that stops the job, as it starts to; the first rank to
  fail takes it (``claim``), and the ends of the others are its doing (``_stop_peers``);
- ``failed.R`` as it stops the job: its exit status and why (``_failure``);
- ``stopped.R`` as it ends, its SIGTERM handler run, under a peer's stop (``_stop_peers``);
- ``done.R`` as its work ends without a failure (so a rank that ended without either was killed);
- ``returned.R`` under ``spawn``: its function's return value, pickled.

Without a job folder (plain ``mpiexec``, a job of several machines) nothing is written.
"""
from __future__ import annotations

import json
import os
import signal
from typing import Dict, NamedTuple, Optional, Sequence

from pycoll._atomic_files import write_whole

JOB_DIR_VAR = "PYCOLL_JOB_DIR"
# The signals that end a process from outside or in a crash. MPI's launcher exits with the number
# of the one that killed a rank; other statuses in that range are far more often plain exit codes.
_KILLING = (signal.SIGKILL, signal.SIGTERM, signal.SIGSEGV, signal.SIGBUS, signal.SIGFPE,
            signal.SIGABRT, signal.SIGILL)


def folder() -> Optional[str]:
    """This rank's job folder, or None."""
    found = os.environ.get(JOB_DIR_VAR)
    return found if found and os.path.isdir(found) else None


def path(kind: str, rank: int, where: Optional[str] = None) -> Optional[str]:
    """The file ``kind.rank`` in ``where`` (this rank's job folder by default); None without one."""
    where = where or folder()
    return os.path.join(where, f"{kind}.{rank}") if where else None


def write(kind: str, rank: int, data: bytes, first_only: bool = False) -> None:
    """Write ``kind.rank`` whole (readers never see half of it); with ``first_only`` an existing
    one is kept. Nothing without a job folder, or when the folder is gone (the job is ending)."""
    target = path(kind, rank)
    if target is None or (first_only and os.path.exists(target)):
        return
    try:
        write_whole(target, lambda out: out.write(data), binary=True)
    except OSError:
        pass


def claim(kind: str, rank: int) -> Optional[int]:
    """Take the job folder's file ``kind`` for ``rank`` unless a rank took it first; the rank that
    holds it (``rank`` when this call took it), or None without a job folder. One rank alone
    ever takes it."""
    where = folder()
    if where is None:
        return None
    target = os.path.join(where, kind)
    mine = f"{target}.{rank}.{os.getpid()}.tmp"
    try:
        with open(mine, "w") as out:
            out.write(str(rank))
        try:
            os.link(mine, target)  # fails where the file is: another rank's, written whole
            return rank
        except FileExistsError:
            return holder(kind)
        finally:
            os.unlink(mine)
    except OSError:  # the folder is gone: the job is ending
        return None


def holder(kind: str) -> Optional[int]:
    """The rank that took the job folder's file ``kind`` (``claim``), if one did."""
    where = folder()
    if where is None:
        return None
    try:
        with open(os.path.join(where, kind)) as taken:
            return int(taken.read())
    except (OSError, ValueError):  # none taken
        return None


def read(where: str, kind: str, rank: int) -> Optional[bytes]:
    """The contents of ``kind.rank`` in ``where``, or None."""
    try:
        with open(os.path.join(where, f"{kind}.{rank}"), "rb") as f:
            return f.read()
    except OSError:
        return None


def pids(where: str, nprocs: int) -> Dict[int, int]:
    """The process id of every rank that started, by rank."""
    found = {rank: read(where, "pid", rank) for rank in range(nprocs)}
    return {rank: int(pid) for rank, pid in found.items() if pid and pid.strip().isdigit()}


def signal_name(status: int) -> Optional[str]:
    """``"SIGKILL"`` for 9: the killing signal MPI's launcher's exit ``status`` stands for, if any."""
    return next((s.name for s in _KILLING if s == status), None)


def _user_stack(fault: str) -> str:
    """faulthandler's report without the frames of pycoll's rank wrapper and of runpy, and
    without its list of extension modules."""
    noise = ('File "<frozen runpy>"', f"{os.sep}pycoll{os.sep}distributed{os.sep}_entry.py", "Extension modules:")
    return "\n".join(line for line in fault.strip().splitlines() if not any(n in line for n in noise))


class Failure(NamedTuple):
    """Why a job failed: ``rank`` (None when unknown), the ``status`` to exit with, the ``text``
    to show, and whether the rank said it already (``reported``: it printed it as it stopped)."""

    rank: Optional[int]
    status: int
    text: str
    reported: bool


def _first_report(where: str, nprocs: int) -> Optional[Failure]:
    """The earliest ``failed.R`` of the job's ranks, as a Failure."""
    reports = []
    for rank in range(nprocs):
        raw = read(where, "failed", rank)
        try:
            said = json.loads(raw) if raw else None
            if said is not None:
                reports.append((os.path.getmtime(os.path.join(where, f"failed.{rank}")), rank, said))
        except (OSError, ValueError):
            continue
    if not reports:
        return None
    _, rank, said = min(reports, key=lambda found: found[:2])
    return Failure(rank, int(said["status"]), str(said["text"]), True)


def failure(where: str, status: int, nprocs: int, ended: Sequence[int] = ()) -> Failure:
    """Why the job of ``nprocs`` ranks whose MPI launcher exited with ``status`` (not 0) failed:
    the first rank that reported, with its own status and words; else a rank a fatal signal
    ended, with its Python stack; else, for a killing signal, the first rank of ``ended`` (the
    order in which the ranks ended, where known) that neither finished nor reported; else what
    the status itself tells."""
    reported = _first_report(where, nprocs)
    if reported is not None:
        return reported
    known = pids(where, nprocs)
    name = signal_name(status)
    for rank in range(nprocs):
        fault = _user_stack((read(where, "fault", rank) or b"").decode(errors="replace"))
        if fault:
            how = f"signal {status} ({name})" if name else "a fatal signal"
            return Failure(rank, status, f"rank {rank} (pid {known.get(rank, '?')}) was killed by {how}; "
                                         f"its Python stack:\n{fault}", False)
    if name:
        oom = " (the out-of-memory killer sends SIGKILL)" if status == signal.SIGKILL else ""
        died = next((rank for rank in ended if read(where, "done", rank) is None), None)
        listed = ", ".join(f"rank {rank}: pid {pid}" for rank, pid in sorted(known.items()))
        if died is None:
            return Failure(None, status, f"a rank was killed by signal {status} ({name}) before it could say "
                                         f"why{oom}; MPI's message names its process id ({listed})", False)
        return Failure(died, status, f"a rank was killed by signal {status} ({name}) before it could say why{oom}: "
                                     f"rank {died} (pid {known.get(died, '?')}), the first to end; MPI's launcher "
                                     f"then ended the others, and its message may name one of those ({listed})",
                       False)
    return Failure(None, status, f"the job ended with exit status {status} and no rank said why: MPI ended it "
                                 f"(its message is above). MPICH's 'Fatal error in internal_...' with 'Message "
                                 f"truncated' or 'Invalid count' means the ranks called a collective with different "
                                 f"sizes or dtypes, or different collectives: rerun with PYCOLL_CHECK=1 and every "
                                 f"rank names its call", False)
