"""``spawn``: start ranks from a plain ``python script.py`` (paddle's ``dist.spawn``).

The parent pickles ``func`` (by reference) and ``args`` into a scratch folder and starts
``nprocs`` ranks through MPI's launcher; each rank re-imports the parent's main script as
``__mp_main__`` (so ``func`` may live in ``__main__``, the seed's usage) and calls
``func(*args)``. A failing rank records its traceback there and stops the job; the parent
then raises :class:`SpawnError` with that traceback.
"""
from __future__ import annotations

import glob
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
from typing import Any, Callable, Optional, Tuple

from pycoll.distributed import _mpiexec
from pycoll.distributed.startup import JOB_DIR_VAR


class SpawnError(RuntimeError):
    """A spawned rank failed; the message carries its rank, exit status and traceback."""

    def __init__(self, message: str, exitcode: int, rank: Optional[int]):
        super().__init__(message)
        self.exitcode = exitcode
        self.rank = rank


class SpawnContext:
    """The running job of a ``spawn`` call."""

    def __init__(self, process: subprocess.Popen, workdir: str, nprocs: int):
        self.process = process
        self.nprocs = nprocs
        self._workdir = workdir
        self._error: Optional[SpawnError] = None

    def join(self, timeout: Optional[float] = None) -> bool:
        """Wait for the job; True once every rank succeeded, False if ``timeout`` ran out first.

        Raises :class:`SpawnError` when a rank failed (again on every later call).
        """
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        if self._workdir is not None:
            self._error = self._failure(code)
            shutil.rmtree(self._workdir, ignore_errors=True)
            self._workdir = None
        if self._error is not None:
            raise self._error
        return True

    def _failure(self, code: int) -> Optional[SpawnError]:
        """The error for exit status ``code``, with the first failed rank's report if it left one."""
        if code == 0:
            return None
        reports = sorted(glob.glob(os.path.join(self._workdir, "rank*.err")), key=os.path.getmtime)
        if not reports:
            return SpawnError(f"spawn: the job of {self.nprocs} ranks failed with exit status {code} "
                              f"(see the ranks' output above)", code, None)
        rank = int(os.path.basename(reports[0])[4:-4])
        with open(reports[0]) as f:
            text = f.read()
        return SpawnError(f"spawn: rank {rank} of {self.nprocs} failed (exit status {code}):\n\n{text}",
                          code, rank)


def _default_nprocs() -> int:
    return os.cpu_count() or 1


def spawn(func: Callable[..., Any], args: Tuple = (), nprocs: int = -1, join: bool = True,
          **options: Any) -> SpawnContext:
    """Run ``func(*args)`` on ``nprocs`` new ranks (-1: one per CPU core).

    ``func`` must be importable by the ranks: a module-level function of an importable module or
    of the main script. With ``join=True`` this returns once every rank finished (raising
    :class:`SpawnError` with the failed rank's traceback); otherwise call ``join()`` on the result.
    """
    if not callable(func):
        raise TypeError(f"spawn: func must be callable, got {type(func).__name__}")
    if not isinstance(args, tuple):
        raise TypeError(f"spawn: args must be a tuple, got {type(args).__name__}")
    if isinstance(nprocs, bool) or not isinstance(nprocs, int) or (nprocs < 1 and nprocs != -1):
        raise ValueError(f"spawn: nprocs={nprocs!r}; it must be a positive int or -1 (one per core)")
    if options:
        raise TypeError(f"spawn: unexpected options {sorted(options)}")
    if nprocs == -1:
        nprocs = _default_nprocs()
    main_path = None
    if getattr(func, "__module__", None) == "__main__":
        main_path = getattr(sys.modules["__main__"], "__file__", None)
        if main_path is None:
            raise ValueError("spawn: func is defined in an interactive __main__; define it in a script "
                             "or module so the new ranks can import it")
        main_path = os.path.abspath(main_path)
    try:
        payload = pickle.dumps((func, args))
    except Exception as exc:
        raise TypeError(f"spawn: func and args must be picklable: {exc}") from exc
    workdir = tempfile.mkdtemp(prefix="pycoll-spawn-")
    with open(os.path.join(workdir, "payload.pkl"), "wb") as f:
        pickle.dump({"sys_path": sys.path, "main_path": main_path}, f)
        f.write(payload)
    command = _mpiexec.rank_command(nprocs, ["-m", "pycoll.distributed._entry", "spawn", workdir])
    process = _mpiexec.start_job(command, _mpiexec.job_environment({JOB_DIR_VAR: workdir}, nprocs))
    context = SpawnContext(process, workdir, nprocs)
    if join:
        context.join()
    return context
