"""What each rank runs under ``pycoll.launch`` and ``spawn``: the user's code, guarded so that a
failure on one rank prints its traceback and stops the whole job (see ``_failure``), and so
that the launcher can tell which rank failed and how (see ``_jobdir``).

``python -m pycoll.distributed._entry script PATH ARGS...`` runs a script as ``__main__``;
``... module NAME ARGS...`` runs a module; ``... spawn DIR`` runs a pickled ``spawn`` payload.
"""
from __future__ import annotations

import faulthandler
import json
import os
import pickle
import runpy
import signal
import sys
import traceback
import types
from typing import Any, Callable, List

from pycoll.distributed import _failure, _jobdir, _stop_peers, exits, startup
from pycoll.distributed.placement import LOCAL_RANK_VARS, first_int, launcher_rank, rank_variables


INTERRUPTED = 130  # a shell's status for a job stopped by Ctrl-C (128 + SIGINT)
LOG_DIR_VAR = "PYCOLL_LOG_DIR"  # set by the launcher's --log_dir: each rank writes DIR/workerlog.RANK
# A job of several machines: {"per_node": P, "dirs": [node 0's --log_dir, node 1's, ...]} ("" for
# none), from node 0's launcher; ranks are node-major, so rank R writes into dirs[R // P]
NODE_LOG_DIRS_VAR = "PYCOLL_NODE_LOG_DIRS"


def _rank() -> int:
    return launcher_rank() or 0


def _user_traceback(exc: BaseException) -> str:
    """The traceback of ``exc`` without the frames of this wrapper and of runpy."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename in (__file__, "<frozen runpy>"):
        tb = tb.tb_next
    # none of the user's frames: a SyntaxError in the script, which names its file and line itself
    return "".join(traceback.format_exception(type(exc), exc, tb))


def _finished() -> None:
    """This rank's work ended without a failure: say so in the job's folder (``_jobdir``); should
    another rank be stopping the job, wait to be ended as part of that stop (``_stop_peers``)."""
    startup.mark_left_unstarted()
    _jobdir.write("done", _rank(), b"")
    if _stop_peers.stopping_rank() is not None:
        _stop_peers.await_stop(_rank())


_ctrl_c: List[bool] = []  # one entry once SIGINT has reached this rank


def _note_ctrl_c(signum: int, frame: Any) -> None:
    """Python's own SIGINT handler (it raises KeyboardInterrupt), which also notes the signal:
    a KeyboardInterrupt the code raised itself is a rank's failure like any other exception."""
    _ctrl_c.append(True)
    signal.default_int_handler(signum, frame)


def guarded(run: Callable[[], None], quiet: bool = False) -> None:
    """Run ``run``; on an exception or a non-zero exit, report it and stop every rank.

    The report is printed, or with ``quiet`` only left in the job's folder (spawn's parent shows
    it in its exception). Once another rank stops the job (it failed first, and its SIGTERM may
    be what ended ``run`` here), this rank's end is part of that stop: it reports nothing, shows
    an exception's traceback as python would, and waits to be ended (``_stop_peers``).
    """
    traceback_text = ""
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _note_ctrl_c)
    _exit_through_guard(quiet)
    try:
        run()
        _finished()
        return
    except SystemExit as exc:
        code = _failure.exit_code(exc)
        if not code:
            _finished()
            raise
        said = f"{exc.code}\n" if isinstance(exc.code, str) else ""  # sys.exit("message") prints it
        text = f"{said}rank {_rank()} exited with status {code}\n"
    except KeyboardInterrupt as exc:
        if _ctrl_c:  # Ctrl-C reached every rank: the launcher says it once
            _failure.abort_job(INTERRUPTED)
        code, text = INTERRUPTED, _user_traceback(exc)  # raised by the code: like any failure
        traceback_text = text
    except BaseException as exc:
        code, text = 1, _user_traceback(exc)
        traceback_text = text
    _fail(code, text, traceback_text, quiet)


def _fail(code: int, text: str, traceback_text: str, quiet: bool) -> None:
    """Report this rank's failure (``text``; ``traceback_text``, its traceback, is shown where a
    peer failed first) and stop every rank with ``code``; never returns."""
    if _stop_peers.take_stop(_rank()) not in (None, _rank()):  # a peer failed first
        sys.stderr.write(traceback_text)
        _stop_peers.await_stop(_rank())
    if quiet:
        _failure.report(text, code)
        text = ""
    # its report first, then the other ranks here get SIGTERM and a moment (_stop_peers)
    _failure.abort_job(code, f"{text}pycoll: rank {_rank()} failed; stopping the job",
                       then=lambda: _stop_peers.terminate_peers(_rank()))


def _exit_through_guard(quiet: bool) -> None:
    """Before MPI starts, ``os._exit`` in this rank's process (not in children it forks) ends as
    an exit from ``guarded`` would: it skips the interpreter's exit handlers, so MPI's launcher
    would otherwise learn of it only when every rank has ended. A non-zero status stops the job
    at once, naming the rank and the call; 0 marks this rank finished. Once MPI runs, ``exits``
    routes ``os._exit`` (through this, which then passes it on)."""
    def leave(code: Any) -> None:
        mpi = sys.modules.get("mpi4py.MPI")
        if mpi is not None and mpi.Is_initialized():
            return
        if code == 0:
            _finished()
        else:
            _fail(code if isinstance(code, int) else 1, f"rank {_rank()} called os._exit({code!r})\n", "", quiet)

    exits.leave_through(leave)


def run_script(path: str, args: list) -> None:
    """Run the script at ``path`` as ``__main__``, its ``__file__`` absolute as ``python path``
    and paddle's launcher make it: a script that changes directory still finds the files beside
    it. (runpy makes ``sys.argv[0]`` that absolute path too, where python leaves it as given.)
    Its import path begins with its own folder, not the folder it was launched from (a
    ``sqlite3.py`` there would hide the standard module)."""
    sys.argv = [path, *args]
    where = os.path.abspath(path)
    if sys.path and not sys.flags.safe_path and sys.path[0] in ("", os.getcwd()):
        del sys.path[0]  # `-m` put the launch folder first: `python script.py` puts the script's only
    sys.path.insert(0, os.path.dirname(where))
    guarded(lambda: runpy.run_path(where, run_name="__main__"))


def run_module(name: str, args: list) -> None:
    sys.argv = [name, *args]
    sys.path.insert(0, os.getcwd())
    guarded(lambda: runpy.run_module(name, run_name="__main__", alter_sys=True))


def _load_parent_main(path: str) -> None:
    """Make the parent's ``__main__`` importable, as multiprocessing's spawn does, without
    running its ``if __name__ == "__main__":`` block."""
    module = types.ModuleType("__mp_main__")
    module.__dict__.update(runpy.run_path(path, run_name="__mp_main__"))
    sys.modules["__main__"] = sys.modules["__mp_main__"] = module


def _keep_returned(value: Any) -> None:
    """Leave a spawned function's return value for the parent's ``return_queues`` (paddle's). One
    that cannot be pickled fails the rank, and so the job, as it does paddle's."""
    try:
        data = pickle.dumps(value)
    except Exception as exc:
        raise TypeError(f"spawn: rank {_rank()}'s function returned a {type(value).__name__}, which cannot be "
                        f"pickled for the parent's return_queues: {exc}") from exc
    _jobdir.write("returned", _rank(), data)


def run_spawned(workdir: str) -> None:
    def run() -> None:
        with open(os.path.join(workdir, "payload.pkl"), "rb") as f:
            header = pickle.load(f)
            sys.path[:] = header["sys_path"]
            if header["main_path"]:
                _load_parent_main(header["main_path"])
            func, args = pickle.load(f)
        _keep_returned(func(*args))

    guarded(run, quiet=True)


def _whole_lines() -> None:
    """Write the rank's output a line at a time (even under PYTHONUNBUFFERED), so the
    launcher's merged output never splits one rank's line with another's."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(line_buffering=True, write_through=False)


def _log_folder() -> str:
    """This rank's ``--log_dir``: in a job of several machines, the one its own machine's
    launcher was given (node 0's path may not even exist here), also as paddle's
    ``PADDLE_LOG_DIR``; else the launcher's. "" for none."""
    listed = os.environ.get(NODE_LOG_DIRS_VAR)
    if not listed:
        return os.environ.get(LOG_DIR_VAR, "")
    nodes = json.loads(listed)
    folder = nodes["dirs"][_rank() // nodes["per_node"]]
    for name in (LOG_DIR_VAR, "PADDLE_LOG_DIR"):
        os.environ.pop(name, None)
        if folder:
            os.environ[name] = folder
    return folder


def _output_to_log_dir() -> None:
    """Under the launcher's ``--log_dir`` (paddle's): this rank's stdout and stderr, its
    libraries' included, go to ``DIR/workerlog.RANK``, after what earlier jobs wrote there
    (paddle's; the launcher empties it first with ``--log_overwrite``)."""
    folder = _log_folder()
    if not folder:
        return
    fd = os.open(os.path.join(folder, f"workerlog.{_rank()}"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def _record_start() -> None:
    """Leave this rank's process id in the job folder, and have a fatal signal's Python stack
    written there (else to stderr), where the launcher shows it naming the rank (``_jobdir``).
    The file is a bare descriptor, open for the process's lifetime (a file object left open
    would say so at exit, as a ResourceWarning, where warnings are shown)."""
    _jobdir.write("pid", _rank(), str(os.getpid()).encode())
    where = _jobdir.path("fault", _rank())
    fault = os.open(where, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644) if where is not None else sys.stderr
    faulthandler.enable(file=fault, all_threads=False)


def _own_gpu() -> None:
    """Give this rank the one GPU of paddle's ``FLAGS_selected_gpus`` that is its own, when the
    launcher lists one per rank there (``--gpus``: the chosen GPUs' places among the visible ones,
    as paddle's launcher sets them for each rank)."""
    listed = [g.strip() for g in os.environ.get("FLAGS_selected_gpus", "").split(",") if g.strip()]
    if len(listed) > 1:
        os.environ["FLAGS_selected_gpus"] = listed[(first_int(LOCAL_RANK_VARS) or 0) % len(listed)]


def _stdin_for_rank_0_only() -> None:
    """MPI's launcher hands its standard input to rank 0 and to the others a pipe that never
    ends, so ``input()`` or ``sys.stdin.read()`` there would wait forever: they read an empty
    input instead (/dev/null, as every rank of paddle's launcher)."""
    if _rank() != 0:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)


def main() -> None:
    _stdin_for_rank_0_only()
    _output_to_log_dir()
    _whole_lines()
    _record_start()
    os.environ.update(rank_variables())  # RANK, LOCAL_RANK, ... as torchrun and paddle set them
    _own_gpu()
    mode, target, *args = sys.argv[1:]
    if mode == "script":
        run_script(target, args)
    elif mode == "module":
        run_module(target, args)
    else:
        run_spawned(target)


if __name__ == "__main__":
    main()
