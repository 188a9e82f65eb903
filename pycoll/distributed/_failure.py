"""Taking the whole job down when one rank fails.

MPI's normal exit (``MPI_Finalize``) waits for the peers, so a rank that dies with an
exception while its peers sit in a collective would hang the job. A failing rank therefore
calls ``MPI_Abort`` after printing its traceback: the MPI launcher then stops every rank
within a second and exits with this rank's code.

A rank that fails before it has started MPI cannot call ``MPI_Abort``, and a plain exit, even a
failing one, does not end an MPI job (Hydra ends it for a process killed by a signal, or for
one that stopped talking to it after ``MPI_Init``): its peers would wait in MPI's start-up, or
run on without it. It sends MPI's launcher the request ``MPI_Abort`` itself sends
(:func:`abort_before_mpi`).
"""
from __future__ import annotations

import atexit
import json
import os
import stat
import sys
import time
from typing import Any, Callable, Optional

from pycoll._errors import CollectiveError
from pycoll.distributed import _jobdir
from pycoll.distributed.placement import MPI_SIZE_VARS, first_int, launcher_rank, mpi_running

FORWARD_S = 0.2  # a pause before ending the job, so that what a rank just wrote reaches the output first
_ABORT_WAIT_S = 5.0  # how long MPI's launcher may take to end a rank that asked it to
_hooks_installed = False
_broken: Optional[str] = None  # the first collective that failed in this process (mark_broken)
_real_exit = os._exit  # the interpreter's own: exits.py routes os._exit through pycoll


def failing_status(code: Any) -> int:
    """``code`` as the status of a failed process: itself when in [1, 255], else 1."""
    return code if isinstance(code, int) and 0 < code < 256 else 1


def report(text: str, code: int) -> None:
    """Leave ``text`` and status ``code`` (why and how this rank stops the job) in the job's
    folder, where the launcher and ``spawn``'s parent read them (``_jobdir``); the first report
    of a rank is kept."""
    record = {"status": failing_status(code), "text": text}
    _jobdir.write("failed", launcher_rank() or 0, json.dumps(record).encode(), first_only=True)


def launcher_connection() -> Optional[int]:
    """The socket through which Hydra, MPI's launcher, talks to this rank (``PMI_FD``), if any."""
    fd = first_int(("PMI_FD",))
    try:
        return fd if fd is not None and stat.S_ISSOCK(os.fstat(fd).st_mode) else None
    except OSError:
        return None


def abort_before_mpi(code: int) -> None:
    """In a rank that has not started MPI: ask MPI's launcher to end the whole job with ``code``.

    ``cmd=abort`` on the rank's connection to Hydra is what ``MPI_Abort`` sends (through
    MPICH's PMI client): Hydra then kills every rank and exits with ``code``. Returns when there
    is no such connection, or when the launcher has not acted within a few seconds (another
    process manager).
    """
    fd = launcher_connection()
    if fd is None:
        return
    time.sleep(FORWARD_S)  # as before MPI_Abort: let what this rank just wrote arrive first
    try:
        os.write(fd, f"cmd=abort exitcode={code}\n".encode())
    except OSError:
        return
    time.sleep(_ABORT_WAIT_S)


def abort_job(code: int, message: Optional[str] = None,
              then: Optional[Callable[[], None]] = None) -> None:
    """Stop every rank of the job (this one included) with exit ``code``; never returns.

    ``message`` is written and reported first; ``then`` (the watchdog's abort of a communicator)
    runs after it, so that a call that the abort makes fail on the main thread cannot report its
    own, vaguer, error as the reason the job ended."""
    code = failing_status(code)
    if message:
        sys.stderr.write(message.rstrip("\n") + "\n")
        report(message, code)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # a closed stream must not stop the abort
            pass
    if then is not None:
        then()
    if mpi_running():
        from mpi4py import MPI

        if MPI.COMM_WORLD.Get_size() > 1:
            # MPI_Abort tears the job down at once, racing the launcher's forwarding of what this
            # rank just wrote; a moment's pause lets the traceback reach the user
            time.sleep(FORWARD_S)
            MPI.COMM_WORLD.Abort(code)
    elif (first_int(MPI_SIZE_VARS) or 1) > 1:
        abort_before_mpi(code)
    _real_exit(code)


def exit_code(exc: SystemExit) -> int:
    """The process exit status ``sys.exit(arg)`` would give."""
    if exc.code is None:
        return 0
    return exc.code if isinstance(exc.code, int) else 1


def mark_broken(what: str) -> None:
    """Record that a collective failed (``what``: the call, as messages name it): a normal exit
    would hang in MPI_Finalize, so abort, naming the first such call."""
    global _broken
    if _broken is None:
        _broken = what


def label(name: str, seq: int) -> str:
    """A call as messages name it: ``all_reduce #3``, or just the name of a set-up step (seq 0)."""
    return f"{name} #{seq}" if seq else name


def timeout_error(name: str, seq: int, group: Any, waited: float, given: bool = False) -> CollectiveError:
    """The error of a call not complete within the group's timeout (the process then aborts at
    exit rather than finalise MPI with it pending), or, ``given``, within the shorter timeout a
    ``task.wait(timeout)`` was given: that call is still in flight and may be waited for again
    (torch's documented pattern), nothing is broken."""
    if given:
        return CollectiveError(
            f"{label(name, seq)} on {group.describe()} did not complete within {waited:g} s on rank "
            f"{group.rank} of that group (the timeout given to wait()); it is still in flight: wait "
            f"for it again, or it fails at the group's timeout")
    mark_broken(f"{label(name, seq)} on {group.describe()}")
    return CollectiveError(
        f"{label(name, seq)} on {group.describe()} did not complete within {waited:g} s on rank "
        f"{group.rank} of that group (PYCOLL_TIMEOUT / the group's timeout): a peer is dead, "
        f"stalled or called a different collective")


def call_failed(name: str, seq: int, group: Any, exc: BaseException) -> CollectiveError:
    """``exc``, raised by an engine inside call ``name`` #``seq``, as the CollectiveError users see:
    naming the call, its group and this rank (an error the engine reported in its own words is
    kept in them; another one, MPI's say, comes with the hint that finds most of its causes)."""
    mark_broken(f"{label(name, seq)} on {group.describe()}")
    where = f"{label(name, seq)} on {group.describe()} failed on rank {group.rank} of that group"
    if isinstance(exc, CollectiveError):
        return CollectiveError(f"{where}: {exc}")
    return CollectiveError(
        f"{where}: {type(exc).__name__}: {str(exc).strip()}. The ranks may have called different "
        f"collectives or passed different sizes: run with PYCOLL_CHECK=1 to compare their calls")


def _exit_after_failure() -> None:
    if _broken is not None and mpi_running():
        from mpi4py import MPI

        abort_job(1, f"pycoll: rank {MPI.COMM_WORLD.Get_rank()}: {_broken} failed earlier in this process (its "
                     f"error was raised there); MPI cannot finalise after a failed collective, so the job ends "
                     f"with status 1")


def install_hooks() -> None:
    """Abort the job on an uncaught exception, and at exit after a failed collective.

    Called once MPI is initialised (so this atexit handler runs before mpi4py's finalize).
    """
    global _hooks_installed
    if _hooks_installed:
        return
    _hooks_installed = True
    previous = sys.excepthook

    def excepthook(etype, value, tb) -> None:
        previous(etype, value, tb)
        from mpi4py import MPI

        abort_job(1, f"pycoll: rank {MPI.COMM_WORLD.Get_rank()} failed; stopping the job")

    sys.excepthook = excepthook
    atexit.register(_exit_after_failure)
