"""The watchdog that bounds blocking collectives.

A blocking MPI call cannot be interrupted from Python, so, as torch's NCCL watchdog does, a
daemon thread watches the collective in progress: when it has waited longer than its group's
timeout, the thread reports a :class:`pycoll.CollectiveError` naming the collective, its
sequence number, the group and the wait, and ends the job. Marking a collective costs two
attribute writes, so small messages stay cheap.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Optional, Tuple

from pycoll.distributed import _failure
from pycoll.distributed.task import timeout_error

_PERIOD_S = 0.1


class Watchdog:
    def __init__(self) -> None:
        self.current: Optional[Tuple[Any, str, int, float]] = None
        self._thread: Optional[threading.Thread] = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._watch, name="pycoll-watchdog", daemon=True)
            self._thread.start()

    def begin(self, group: Any, name: str) -> None:
        self.current = (group, name, group.seq, time.monotonic())

    def end(self) -> None:
        self.current = None

    def _watch(self) -> None:
        while True:
            time.sleep(_PERIOD_S)
            current = self.current
            if current is None:
                continue
            group, name, seq, started = current
            waited = time.monotonic() - started
            if waited > group.timeout and self.current is current:
                error = timeout_error(name, seq, group, group.timeout)
                _failure.abort_job(1, f"pycoll.CollectiveError: {error} (watchdog, after {waited:.1f} s); "
                                      f"stopping the job")


watchdog = Watchdog()
