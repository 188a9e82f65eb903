"""The order in which the ranks of a job on this machine end, watched by the launcher and by
spawn's parent.

A rank killed by a signal (SIGKILL from the out-of-memory killer, say) cannot say so, and MPI's
launcher then kills the others and reports one process id, not necessarily the first to die
(measured: rank 1 SIGKILLed, MPICH's banner names rank 0's pid). So the launcher watches the
ranks' processes (their ids are in the job's folder, ``_jobdir``) through Linux's pidfds, which
become readable the moment a process ends, and keeps the order in which they ended: the first
rank to end that had neither finished its work nor reported a failure is the one that died.
Without ``os.pidfd_open`` (not Linux, or a kernel before 5.3) the order stays empty.
"""
from __future__ import annotations

import os
import select
import threading
from typing import Dict, List

from pycoll.distributed import _jobdir

_PERIOD_S = 0.05  # how often new ranks' process ids are looked for


class EndOrder:
    """Watches the ``nprocs`` ranks of the job folder ``where`` from a thread until ``stop()``;
    ``ranks`` is the order in which they ended."""

    def __init__(self, where: str, nprocs: int):
        self.where, self.nprocs = where, nprocs
        self.ranks: List[int] = []
        self._watched: Dict[int, int] = {}  # pidfd -> rank
        self._seen: set = set()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pycoll-rank-ends", daemon=True)
        if hasattr(os, "pidfd_open"):
            self._thread.start()

    def _watch_new(self) -> None:
        for rank, pid in _jobdir.pids(self.where, self.nprocs).items():
            if rank in self._seen:
                continue
            self._seen.add(rank)
            try:
                self._watched[os.pidfd_open(pid)] = rank
            except ProcessLookupError:  # it ended before it was seen
                self.ranks.append(rank)
            except OSError:  # not allowed here: its end stays unknown
                pass

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._watch_new()
            if not self._watched:
                self._stopping.wait(_PERIOD_S)
                continue
            ended, _, _ = select.select(list(self._watched), [], [], _PERIOD_S)
            for fd in ended:
                self.ranks.append(self._watched.pop(fd))
                os.close(fd)

    def stop(self) -> List[int]:
        """Stop watching; the ranks in the order they ended (those still running left out)."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join()
        for fd in self._watched:
            os.close(fd)
        self._watched.clear()
        return list(self.ranks)
