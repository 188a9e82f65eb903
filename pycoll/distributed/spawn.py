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
from typing import Any, Callable, Dict, Optional, Tuple

from pycoll._logging import logger
from pycoll.distributed import _mpiexec
from pycoll.distributed.placement import BACKENDS, selected_gpus
from pycoll.distributed.startup import JOB_DIR_VAR

_START_METHODS = ("spawn", "fork", "forkserver")
_THIS_MACHINE = ("127.0.0.1", "localhost")


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


def _job_options(options: Dict[str, Any], nprocs: int) -> Tuple[int, Dict[str, str]]:
    """paddle's ``spawn`` options, checked, as the job's rank count and environment.

    ``gpus`` (or its older name ``selected_devices``): the GPUs, one rank each (their number is
    the default ``nprocs``); ``backend``: ``"auto"`` or a backend name, for every rank;
    ``start_method``: accepted, though every rank is a fresh interpreter started by MPI's
    launcher (what paddle's default ``"spawn"`` gives, and what CUDA needs); ``ips``: this
    machine only; ``print_config``: the job's settings in a log line.
    """
    known = {"gpus", "selected_devices", "backend", "start_method", "ips", "print_config"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ValueError(f"spawn: option {unknown[0]!r} is not supported; supported: {', '.join(sorted(known))}")
    env: Dict[str, str] = {}
    spec = options.get("gpus", options.get("selected_devices"))
    if spec is not None:
        option = "gpus" if "gpus" in options else "selected_devices"
        gpus = selected_gpus(spec, f"spawn: {option}")
        if nprocs == -1:
            nprocs = len(gpus)
        if len(gpus) != nprocs:
            raise ValueError(f"spawn: {option}={spec!r} names {len(gpus)} GPU(s) for nprocs={nprocs} "
                             f"ranks; give one GPU per rank")
        env["CUDA_VISIBLE_DEVICES"] = ",".join(gpus)
    backend = str(options.get("backend", "auto")).lower()
    if backend not in ("auto", "gloo", *BACKENDS):
        raise ValueError(f"spawn: backend={options['backend']!r}; use 'auto', 'gloo' or one of "
                         f"{', '.join(BACKENDS)}")
    if backend != "auto":
        env["PYCOLL_BACKEND"] = backend
    if options.get("start_method", "spawn") not in _START_METHODS:
        raise ValueError(f"spawn: start_method={options['start_method']!r}; use one of "
                         f"{', '.join(_START_METHODS)}")
    hosts = [h.strip() for h in str(options.get("ips", "127.0.0.1")).split(",")]
    if any(h not in _THIS_MACHINE for h in hosts):
        raise ValueError(f"spawn: ips={options['ips']!r}: spawn starts ranks on this machine only; "
                         f"for several machines start the job with mpiexec and a host file")
    if options.get("print_config"):
        logger.info("spawn: %d ranks, environment %s", nprocs if nprocs != -1 else _default_nprocs(), env)
    return nprocs, env


def spawn(func: Callable[..., Any], args: Tuple = (), nprocs: int = -1, join: bool = True,
          daemon: bool = False, **options: Any) -> SpawnContext:
    """Run ``func(*args)`` on ``nprocs`` new ranks (-1: one per listed GPU with ``gpus``, else
    one per CPU core).

    ``func`` must be importable by the ranks: a module-level function of an importable module or
    of the main script. With ``join=True`` this returns once every rank finished (raising
    :class:`SpawnError` with the failed rank's traceback); otherwise call ``join()`` on the result.
    ``options`` are paddle's (:func:`_job_options`). The ranks never outlive this process, so
    every job behaves as paddle's ``daemon=True``; ``daemon`` is accepted for paddle's signature.
    """
    if not callable(func):
        raise TypeError(f"spawn: func must be callable, got {type(func).__name__}")
    if not isinstance(args, tuple):
        raise TypeError(f"spawn: args must be a tuple, got {type(args).__name__}")
    if isinstance(nprocs, bool) or not isinstance(nprocs, int) or (nprocs < 1 and nprocs != -1):
        raise ValueError(f"spawn: nprocs={nprocs!r}; it must be a positive int or -1 (one per core)")
    nprocs, job_env = _job_options(options, nprocs)
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
    process = _mpiexec.start_job(command, _mpiexec.job_environment({**job_env, JOB_DIR_VAR: workdir}, nprocs))
    context = SpawnContext(process, workdir, nprocs)
    if join:
        context.join()
    return context
