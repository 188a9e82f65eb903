"""``spawn``: start ranks from a plain ``python script.py`` (paddle's ``dist.spawn``).

The parent pickles ``func`` (by reference) and ``args`` into a scratch folder and starts
``nprocs`` ranks through MPI's launcher; each rank re-imports the parent's main script as
``__mp_main__`` (so ``func`` may live in ``__main__``, the seed's usage) and calls
``func(*args)``. The ranks leave in that folder what the parent needs once the job has ended
(``_jobdir``): a failing rank its traceback, then it stops the job and the parent raises
:class:`SpawnError` with it; every rank its function's return value, for the context's
``return_queues`` (paddle's). The folder goes with the job: when it is joined, when Ctrl-C
interrupts the wait, or at the parent's exit.
"""
from __future__ import annotations

import atexit
import contextlib
import io
import os
import pickle
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from typing import Any, Callable, Dict, FrozenSet, List, Optional, Sequence, Tuple

from pycoll._logging import logger
from pycoll.distributed import _jobdir, _mpiexec, _proctree, job_leftovers
from pycoll.distributed._end_order import EndOrder
from pycoll.distributed.placement import BACKENDS, paddle_backend_variable, selected_gpus

_START_METHODS = ("spawn", "fork", "forkserver")
_THIS_MACHINE = ("127.0.0.1", "localhost")
_CTRL_C_WAIT_S = 1.0  # how long MPI's launcher may take to end on a Ctrl-C it got itself
_STOP_WAIT_S = 10.0  # how long it may take to stop the ranks when told, before it is killed
_START_WAIT_S = 30.0  # how long a rank's pid is waited for, while the job runs, before it reads None
_JOIN_GRACE_S = 10.0  # how long a rank's join waits, once it has ended, for the job's end
_POLL_S = 0.02
_OPTIONS = ("gpus", "backend", "start_method", "ips", "print_config")
# paddle 3.3.1 still takes these, with a DeprecationWarning
_DEPRECATED_OPTIONS = ("selected_devices", "started_port", "cluster_node_ips", "node_ip", "use_paddlecloud")


class SpawnError(RuntimeError):
    """A spawned rank failed; the message carries its rank, exit status and traceback."""

    def __init__(self, message: str, exitcode: int, rank: Optional[int]):
        super().__init__(message)
        self.exitcode = exitcode
        self.rank = rank


class RankQueue:
    """One rank's entry of paddle's ``return_queues`` (its function's return value) or
    ``error_queues`` (its traceback, should it fail). ``get()`` waits, at most ``timeout``, for
    the job to end, as paddle's waits for the rank's process, then gives what the rank left,
    once; ``queue.Empty`` when it left nothing (it failed, or was stopped with the job)."""

    def __init__(self, context: "SpawnContext"):
        self._context = context
        self._items: "queue.SimpleQueue[Any]" = queue.SimpleQueue()

    def put(self, item: Any) -> None:
        self._items.put(item)

    def get(self, block: bool = True, timeout: Optional[float] = None) -> Any:
        if not self._context.ended(timeout if block else 0):
            raise queue.Empty
        return self._items.get(block=False)

    def empty(self) -> bool:
        return not self._context.ended(0) or self._items.empty()


class SpawnedRank:
    """One rank, as paddle's ``processes`` list them (``multiprocessing.Process`` objects
    there): ``pid``, ``exitcode``, ``is_alive()``, ``terminate()``, ``kill()`` and ``join()``.
    ``exitcode`` is None while the job runs; then 0, or for the rank that failed its status
    (minus the signal's number for one a signal killed, as in ``multiprocessing``), and -9 for
    the ranks MPI's launcher stopped with it (SIGKILL). A rank ended by a signal ends the job, as
    any failed rank does."""

    def __init__(self, context: "SpawnContext", rank: int):
        self._context = context
        self.rank = rank

    @property
    def pid(self) -> Optional[int]:
        """The rank's process id. Right after ``spawn`` returns the rank may still be starting:
        this waits for it (at most ``_START_WAIT_S``) while the job runs; None for a rank that
        never started."""
        return self._context.wait_pid(self.rank)

    @property
    def exitcode(self) -> Optional[int]:
        return self._context.exitcodes[self.rank] if self._context.ended(0) else None

    def is_alive(self) -> bool:
        """True from ``spawn``'s return until this rank's process ends (or the job does)."""
        if self._context.ended(0):
            return False
        pid = self.pid
        if pid is None:  # still starting, after _START_WAIT_S
            return not self._context.ended(0)
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True

    def terminate(self) -> None:
        """SIGTERM to the rank's process (nothing once it has ended)."""
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL to the rank's process (nothing once it has ended)."""
        self._signal(signal.SIGKILL)

    def _signal(self, signum: int) -> None:
        pid = None if self._context.ended(0) else self.pid
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)

    def join(self, timeout: Optional[float] = None) -> None:
        """Wait (at most ``timeout`` seconds) until the rank's process has ended; then, where its
        end ends the job (a failure, a signal), until the job has, so that ``exitcode`` is known
        (it is read from the job's end: a rank that finished while others work keeps None)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.is_alive() and (deadline is None or time.monotonic() < deadline):
            time.sleep(_POLL_S)
        if not self.is_alive():
            left = _JOIN_GRACE_S if deadline is None else max(deadline - time.monotonic(), 0.0)
            self._context.ended(min(left, _JOIN_GRACE_S))


class _ParentUnpickler(pickle.Unpickler):
    """Reads a rank's return value in the parent, where what the ranks know as ``__mp_main__``
    (the parent's main script, see ``_entry``) is ``__main__``."""

    def find_class(self, module: str, name: str) -> Any:
        return super().find_class("__main__" if module == "__mp_main__" else module, name)


class SpawnContext:
    """The running job of a ``spawn`` call (paddle's ``MultiprocessContext``): ``join()``,
    ``return_queues``, ``error_queues``, ``processes``; ``exitcodes`` (each rank's, once the job
    has ended: see :class:`SpawnedRank`); ``process`` is MPI's launcher."""

    def __init__(self, process: subprocess.Popen, workdir: str, nprocs: int, daemon: bool,
                 leftovers_before: FrozenSet[str] = frozenset()):
        self.process = process
        self.nprocs = nprocs
        self.return_queues = [RankQueue(self) for _ in range(nprocs)]
        self.error_queues = [RankQueue(self) for _ in range(nprocs)]
        self.processes = [SpawnedRank(self, rank) for rank in range(nprocs)]
        self.exitcodes: List[Optional[int]] = [None] * nprocs
        self._workdir: Optional[str] = workdir
        self._daemon = daemon
        self._pids: Dict[int, int] = {}
        self._error: Optional[SpawnError] = None
        self._leftovers_before = leftovers_before  # the files of job_leftovers's kinds before the job
        self._ends = EndOrder(workdir, nprocs)  # names a rank a signal kills (_jobdir.failure)
        atexit.register(self._at_exit)

    def join(self, timeout: Optional[float] = None) -> bool:
        """Wait for the job; True once every rank succeeded, False if ``timeout`` ran out first.

        Raises :class:`SpawnError` when a rank failed (again on every later call).
        """
        if not self.ended(timeout):
            return False
        if self._error is not None:
            raise self._error
        return True

    def ended(self, timeout: Optional[float] = None) -> bool:
        """Whether the job has ended, waiting at most ``timeout`` seconds; Ctrl-C (or another
        exception raised by a signal handler) meanwhile stops it. Once it has, what its ranks left
        is read and their folder removed."""
        if self._workdir is None:
            return True
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            return False
        except BaseException:
            self._stop()
            self._finish(None)
            raise
        self._finish(code)
        return True

    def wait_pid(self, rank: int) -> Optional[int]:
        """Rank ``rank``'s process id, waiting at most ``_START_WAIT_S`` for it to start while
        the job runs."""
        deadline = time.monotonic() + _START_WAIT_S
        while rank not in self.pids() and self.process.poll() is None and time.monotonic() < deadline:
            time.sleep(_POLL_S)
        return self.pids().get(rank)

    def pids(self) -> Dict[int, int]:
        """The process id of each rank that has started."""
        if self._workdir is not None:
            self._pids = _jobdir.pids(self._workdir, self.nprocs)
        return self._pids

    def _stop(self) -> None:
        """Have MPI's launcher stop every rank, as Ctrl-C does (unless a Ctrl-C at the terminal
        reached it too: a second one makes it abort untidily), and kill it if it lingers."""
        for signum, wait in ((None, _CTRL_C_WAIT_S), (signal.SIGINT, _STOP_WAIT_S), (signal.SIGKILL, None)):
            if signum is not None:
                self.process.send_signal(signum)
            try:
                self.process.wait(wait)
                return
            except subprocess.TimeoutExpired:
                continue

    def _finish(self, code: Optional[int]) -> None:
        """Read what the ranks left (``code``: MPI's launcher's status; None when interrupted),
        then remove their folder."""
        workdir, self._workdir = self._workdir, None
        atexit.unregister(self._at_exit)
        self._pids = _jobdir.pids(workdir, self.nprocs)
        job_leftovers.remove_left(self._leftovers_before, self._pids.values())
        for rank in range(self.nprocs):
            returned = _jobdir.read(workdir, "returned", rank)
            if returned is not None:
                try:
                    self.return_queues[rank].put(_ParentUnpickler(io.BytesIO(returned)).load())
                except Exception as exc:
                    logger.warning("spawn: rank %d's return value cannot be read here: %s", rank, exc)
            self.exitcodes[rank] = 0 if code == 0 or returned is not None else -signal.SIGKILL
        ended = self._ends.stop()
        if code:
            failed = _jobdir.failure(workdir, code, self.nprocs, ended)
            self._error = self._spawn_error(failed)
            if failed.rank is not None:
                self.error_queues[failed.rank].put(failed.text)
                self.exitcodes[failed.rank] = failed.status if failed.reported else -failed.status
        shutil.rmtree(workdir, ignore_errors=True)

    def _spawn_error(self, failed: _jobdir.Failure) -> SpawnError:
        if failed.reported:
            message = f"rank {failed.rank} of {self.nprocs} failed (exit status {failed.status}):\n\n{failed.text}"
        elif failed.rank is not None or _jobdir.signal_name(failed.status):
            message = failed.text
        else:
            message = f"the job of {self.nprocs} ranks failed: {failed.text} (see the ranks' output above)"
        return SpawnError(f"spawn: {message}", failed.status, failed.rank)

    def _at_exit(self) -> None:
        """At the parent's exit, for a job never joined: wait for it (paddle's default, as
        ``multiprocessing`` waits for its non-daemon processes), or with ``daemon=True`` stop its
        ranks, quietly (paddle's daemon processes end with their parent, without a word); then
        say if it failed on its own, since no one will see its SpawnError."""
        stopping = self._daemon and self.process.poll() is None
        if stopping:
            if _proctree.available():
                _proctree.kill_quietly(self.process)
            else:
                self._stop()
        self.ended()
        if self._error is not None and not stopping:
            logger.error("%s", self._error)


def _default_nprocs() -> int:
    return os.cpu_count() or 1


def _this_machine(option: str, value: Any) -> None:
    """ValueError unless every host of ``value`` ("h1,h2") is this machine."""
    hosts = [h.strip() for h in str(value).split(",")]
    if any(h not in _THIS_MACHINE for h in hosts):
        raise ValueError(f"spawn: {option}={value!r}: spawn starts ranks on this machine only (127.0.0.1); "
                         f"for several machines start the job with mpiexec and a host file")


def _endpoints(started_port: Any, nprocs: int) -> str:
    """paddle's ``PADDLE_TRAINER_ENDPOINTS`` for ``started_port``: 127.0.0.1:PORT+i, rank i."""
    if isinstance(started_port, bool) or not isinstance(started_port, int) or not 0 < started_port <= 65536 - nprocs:
        raise ValueError(f"spawn: started_port={started_port!r}; it must be an int port from 1 to "
                         f"{65536 - nprocs}, so that each of the {nprocs} ranks has one")
    return ",".join(f"127.0.0.1:{started_port + rank}" for rank in range(nprocs))


def _job_options(options: Dict[str, Any], nprocs: int) -> Tuple[int, Dict[str, str]]:
    """paddle's ``spawn`` options, checked, as the job's rank count (-1 resolved) and environment.

    ``gpus`` (or its older name ``selected_devices``): the GPUs, one rank each (their number is
    the default ``nprocs``); ``backend``: ``"auto"`` or a backend name, for every rank;
    ``start_method``: accepted, though every rank is a fresh interpreter started by MPI's
    launcher (what paddle's default ``"spawn"`` gives, and what CUDA needs); ``ips`` (or its older
    name ``cluster_node_ips``) and ``node_ip``: this machine only; ``started_port``: the ranks'
    ``PADDLE_TRAINER_ENDPOINTS`` are ``127.0.0.1:started_port+i``; ``use_paddlecloud``: accepted
    (pycoll reads no PaddleCloud variables); ``print_config``: the job's settings printed.
    The older names warn with a DeprecationWarning, as paddle 3.3.1's do.
    """
    for key in options:
        if key in _DEPRECATED_OPTIONS:
            warnings.warn(f"spawn: the option {key!r} is deprecated (paddle's too); see spawn's documented "
                          f"options: {', '.join(_OPTIONS)}", DeprecationWarning, stacklevel=3)
        elif key not in _OPTIONS:
            raise ValueError(f"spawn: option {key!r} is not supported; supported: {', '.join(_OPTIONS)} "
                             f"(deprecated, still taken: {', '.join(_DEPRECATED_OPTIONS)})")
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
        env["FLAGS_selected_gpus"] = ",".join(str(i) for i in range(len(gpus)))  # each rank's own: _entry
    if nprocs == -1:
        nprocs = _default_nprocs()
    backend = str(options.get("backend", "auto")).lower()
    if backend not in ("auto", "gloo", *BACKENDS):
        raise ValueError(f"spawn: backend={options['backend']!r}; use 'auto', 'gloo' or one of "
                         f"{', '.join(BACKENDS)}")
    if backend != "auto":
        env["PYCOLL_BACKEND"] = backend
    env.update(paddle_backend_variable(None if backend == "auto" else backend, "spawn"))
    if options.get("start_method", "spawn") not in _START_METHODS:
        raise ValueError(f"spawn: start_method={options['start_method']!r}; use one of "
                         f"{', '.join(_START_METHODS)}")
    hosts_option = "ips" if "ips" in options else "cluster_node_ips"
    _this_machine(hosts_option, options.get(hosts_option, "127.0.0.1"))
    if options.get("node_ip") is not None:
        _this_machine("node_ip", options["node_ip"])
    if options.get("started_port") is not None:
        env["PADDLE_TRAINER_ENDPOINTS"] = _endpoints(options["started_port"], nprocs)
    if options.get("print_config"):  # (paddle prints its settings too)
        print(f"spawn: {nprocs} ranks, environment {env}", flush=True)
    return nprocs, env


def _refuse_while_importing_main() -> None:
    """RuntimeError when this ``spawn`` call runs at the top level of a parent's main script that
    a new rank is importing (as ``__mp_main__``) to find its function: without the guard every
    rank would start a job of its own."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_name == "<module>" and frame.f_globals.get("__name__") == "__mp_main__":
            raise RuntimeError(
                f"spawn: called at the top level of {frame.f_code.co_filename}, which each new rank "
                f"imports to find the function it runs, so every rank would spawn again. Put the "
                f"spawn call under `if __name__ == \"__main__\":` (as multiprocessing's spawn start "
                f"method needs; freeze_support() matters only for frozen executables)")
        frame = frame.f_back


class UnpicklableArguments(TypeError, pickle.PicklingError):
    """``spawn``'s func or args cannot be pickled for the new ranks: a TypeError, and the
    ``pickle.PicklingError`` paddle's and torch's spawn raise there (a lambda, say)."""


def spawn(func: Callable[..., Any], args: Sequence[Any] = (), nprocs: int = -1, join: bool = True,
          daemon: bool = False, **options: Any) -> SpawnContext:
    """Run ``func(*args)`` on ``nprocs`` new ranks (-1: one per listed GPU with ``gpus``, else
    one per CPU core); ``args`` is a tuple or a list.

    ``func`` must be importable by the ranks: a module-level function of an importable module or
    of the main script, whose spawn call sits under ``if __name__ == "__main__":`` (each rank
    imports that script; a call it meets there raises a RuntimeError saying so). With ``join=True`` this returns once every rank finished (raising
    :class:`SpawnError` with the failed rank's traceback); otherwise call ``join()`` on the result.
    Either way the result holds each rank's return value in ``return_queues`` (paddle's).
    ``options`` are paddle's (:func:`_job_options`). The ranks never outlive this process: at its
    exit a job not yet joined is waited for, or with ``daemon=True`` stopped, quietly (paddle's meaning).
    """
    if not callable(func):
        raise TypeError(f"spawn: func must be callable, got {type(func).__name__}")
    if not isinstance(args, (tuple, list)):
        raise TypeError(f"spawn: args must be a tuple or a list, got {type(args).__name__}")
    if isinstance(nprocs, bool) or not isinstance(nprocs, int) or (nprocs < 1 and nprocs != -1):
        raise ValueError(f"spawn: nprocs={nprocs!r}; it must be a positive int or -1 (one per core)")
    _refuse_while_importing_main()
    nprocs, job_env = _job_options(options, nprocs)
    main_path = None
    if getattr(func, "__module__", None) == "__main__":
        main_path = getattr(sys.modules["__main__"], "__file__", None)
        if main_path is None:
            raise ValueError("spawn: func is defined in an interactive __main__; define it in a script "
                             "or module so the new ranks can import it")
        main_path = os.path.abspath(main_path)
    try:
        payload = pickle.dumps((func, tuple(args)))
    except Exception as exc:
        raise UnpicklableArguments(f"spawn: func and args must be picklable: {exc}") from exc
    workdir = tempfile.mkdtemp(prefix="pycoll-spawn-")
    try:
        with open(os.path.join(workdir, "payload.pkl"), "wb") as f:
            pickle.dump({"sys_path": sys.path, "main_path": main_path}, f)
            f.write(payload)
        command = _mpiexec.rank_command(nprocs, ["-m", "pycoll.distributed._entry", "spawn", workdir])
        leftovers_before = job_leftovers.snapshot()
        process = _mpiexec.start_job(command, _mpiexec.job_environment(
            {**job_env, _jobdir.JOB_DIR_VAR: workdir}, nprocs))
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    context = SpawnContext(process, workdir, nprocs, daemon, leftovers_before)
    if join:
        context.join()
    return context
