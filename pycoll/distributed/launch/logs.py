"""The launcher's rank logs (``--log_dir``, paddle's ``DIR/workerlog.RANK``): made ready before the
job, shown as they grow (``LogFollower``, under paddle's launcher name, as paddle shows them), and
their failed ranks' ends shown after a failure."""
from __future__ import annotations

import os
import sys
import threading
from typing import Dict, Optional, Tuple

_FOLLOW_PERIOD_S = 0.05


def prepare_logs(log_dir: Optional[str], node_rank: int, nproc_per_node: int, overwrite: bool) -> Dict[str, int]:
    """This machine's rank logs under ``log_dir``, emptied first with ``overwrite``: where each
    one's new part will start (its size now), by path."""
    if log_dir is None:
        return {}
    first = node_rank * nproc_per_node
    starts = {}
    for rank in range(first, first + nproc_per_node):
        path = os.path.join(log_dir, f"workerlog.{rank}")
        if overwrite and os.path.exists(path):
            os.truncate(path, 0)
        starts[path] = os.path.getsize(path) if os.path.exists(path) else 0
    return starts


# what a failed rank's log holds: a traceback, or any of pycoll's reasons for ending a job (each
# ends "...; stopping the job": a rank's failure, the watchdog's verdicts, a peer that left, a timeout)
FAILURE_MARKS = ("Traceback", "stopping the job")
STOPPING_MARK = "stopping the job"  # written last, with the traceback, by a rank that stops the job


def failed_ends(starts: Dict[str, int], tail: int = 30, marks: Tuple[str, ...] = FAILURE_MARKS) -> Dict[str, str]:
    """The last ``tail`` lines this job wrote in each rank log of ``starts`` (log -> where the
    job's part starts) that holds one of ``marks``, by path."""
    found = {}
    for path, start in sorted(starts.items()):
        try:
            with open(path, errors="replace") as f:
                f.seek(start)
                lines = f.read().splitlines()
        except OSError:
            continue
        if any(mark in line for line in lines for mark in marks):
            found[path] = "\n".join(lines[-tail:])
    return found


def show_failed_logs(starts: Dict[str, int], tail: int = 30) -> None:
    """The end of each rank log of ``starts`` that tells of a failure (:func:`failed_ends`)."""
    for path, text in failed_ends(starts, tail).items():
        sys.stderr.write(f"pycoll.launch: the end of {path}:\n{text}\n")


class LogFollower:
    """Copies what the job writes to the rank logs of ``starts`` (path -> where its new part
    starts) to this process's stdout, a whole line at a time, from a thread, until ``stop()``
    (which copies what is left). The files stay complete whatever happens to a rank: the
    ranks write them, this only reads."""

    def __init__(self, starts: Dict[str, int]):
        self._offsets = dict(starts)
        self._partial = {path: b"" for path in starts}
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pycoll-log-follower", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stopping.wait(_FOLLOW_PERIOD_S):
            self._copy(final=False)

    def _copy(self, final: bool) -> None:
        out = sys.stdout.buffer
        for path in sorted(self._offsets):
            try:
                with open(path, "rb") as f:
                    f.seek(self._offsets[path])
                    data = f.read()
            except OSError:  # not made yet: the rank has not started
                continue
            self._offsets[path] += len(data)
            pending = self._partial[path] + data
            whole, newline, rest = pending.rpartition(b"\n")
            if final:
                whole, newline, rest = pending, (b"\n" if pending and not pending.endswith(b"\n") else b""), b""
            self._partial[path] = rest
            if whole or newline:
                out.write(whole + newline)
        out.flush()

    def stop(self) -> None:
        """Stop following and copy whatever the logs hold that was not copied yet."""
        self._stopping.set()
        self._thread.join()
        self._copy(final=True)
