"""Which rank of a spawned job ended first, as the waiting parent sees it.

When a signal kills a rank, MPI's launcher kills the others at once and exits with the signal's
number, naming no rank (the process id in its message need not be the killed rank's). While the
parent waits for the job it watches each rank's process through a pidfd (Linux 5.3+, Python
3.9+): a rank seen to end alone, before the others and without leaving a word in the job's
folder, is the one the signal killed. Elsewhere, or when the parent was not waiting, nobody is
named.
"""
from __future__ import annotations

import os
import select
import subprocess
import time
from typing import Callable, Dict, List, Optional, Set

_POLL_S = 0.02  # how often the ranks' process ids are looked for while some have not started


class RankWatch:
    """The ranks of one job, watched while the parent waits for its launcher."""

    def __init__(self, nprocs: int):
        self._nprocs = nprocs
        self._fds: Dict[int, int] = {}  # rank -> pidfd, while the rank runs
        self._gone: Set[int] = set()
        self._batches: List[List[int]] = []  # ranks seen ended, in the order seen, by batch

    def wait(self, process: subprocess.Popen, pids: Callable[[], Dict[int, int]],
             timeout: Optional[float]) -> int:
        """``process.wait(timeout)`` (``subprocess.TimeoutExpired`` when it runs out), noting
        meanwhile which ranks end, and in what order."""
        code = process.poll()
        if code is not None:
            return code
        try:
            launcher = os.pidfd_open(process.pid)
        except (AttributeError, OSError):  # no pidfds here
            return process.wait(timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            while True:
                code = process.poll()
                if code is not None:
                    return code
                known = pids()
                self._open(known)
                left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
                step = left if len(known) == self._nprocs else min(_POLL_S, _POLL_S if left is None else left)
                ready, _, _ = select.select([launcher, *self._fds.values()], [], [], step)
                self._note([rank for rank, fd in self._fds.items() if fd in ready])
                if left == 0.0 and launcher not in ready:  # checked once more, even with no time left
                    raise subprocess.TimeoutExpired(process.args, timeout)
        finally:
            os.close(launcher)

    def _open(self, known: Dict[int, int]) -> None:
        ended = []
        for rank, pid in known.items():
            if rank in self._fds or rank in self._gone:
                continue
            try:
                self._fds[rank] = os.pidfd_open(pid)
            except OSError:  # it has ended already
                ended.append(rank)
        self._note(ended, opened=False)

    def _note(self, ended: List[int], opened: bool = True) -> None:
        for rank in ended:
            if opened:
                os.close(self._fds.pop(rank))
            self._gone.add(rank)
        if ended:
            self._batches.append(ended)

    def first_killed(self, left_word: Callable[[int], bool]) -> Optional[int]:
        """The rank seen to end first, alone, among those that left no word (``left_word``:
        whether a rank returned or reported a failure); None when none can be told."""
        for batch in self._batches:
            silent = [rank for rank in batch if not left_word(rank)]
            if silent:
                return silent[0] if len(silent) == 1 else None
        return None

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()
