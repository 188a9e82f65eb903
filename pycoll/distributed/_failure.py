"""Taking the whole job down when one rank fails.

MPI's normal exit (``MPI_Finalize``) waits for the peers, so a rank that dies with an
exception while its peers sit in a collective would hang the job. A failing rank therefore
calls ``MPI_Abort`` after printing its traceback: the MPI launcher then stops every rank
within a second and exits with this rank's code.
"""
from __future__ import annotations

import atexit
import os
import sys
import time
from typing import Optional

from pycoll._logging import logger

_FORWARD_S = 0.2
_hooks_installed = False
_broken = False


def mpi_running() -> bool:
    """True when this process initialised MPI and has not finalised it."""
    mpi = sys.modules.get("mpi4py.MPI")
    return mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized()


def abort_job(code: int, message: Optional[str] = None) -> None:
    """Stop every rank of the job (this one included) with exit ``code``; never returns."""
    code = code if isinstance(code, int) and 0 < code < 256 else 1
    if message:
        sys.stderr.write(message.rstrip("\n") + "\n")
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # a closed stream must not stop the abort
            pass
    if mpi_running():
        from mpi4py import MPI

        if MPI.COMM_WORLD.Get_size() > 1:
            # MPI_Abort tears the job down at once, racing the launcher's forwarding of what this
            # rank just wrote; a moment's pause lets the traceback reach the user
            time.sleep(_FORWARD_S)
            MPI.COMM_WORLD.Abort(code)
    os._exit(code)


def exit_code(exc: SystemExit) -> int:
    """The process exit status ``sys.exit(arg)`` would give."""
    if exc.code is None:
        return 0
    return exc.code if isinstance(exc.code, int) else 1


def mark_broken() -> None:
    """Record that a collective failed: a normal exit would hang in MPI_Finalize, so abort."""
    global _broken
    _broken = True


def _exit_after_failure() -> None:
    if _broken and mpi_running():
        logger.error("a collective failed earlier in this process; aborting instead of finalising MPI")
        abort_job(1)


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
