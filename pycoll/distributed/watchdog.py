"""The watchdog that bounds blocking collectives.

A blocking MPI call cannot be interrupted from Python, so, as torch's NCCL watchdog does, a
daemon thread watches the collective in progress: when it has waited longer than its group's
timeout, the thread reports a :class:`pycoll.CollectiveError` naming the collective, its
sequence number, the group and the wait, and ends the job. Marking a collective costs two
attribute writes, so small messages stay cheap.
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any, List, Optional, Tuple

from pycoll._logging import logger
from pycoll.distributed import _failure
from pycoll.distributed.task import timeout_error

_PERIOD_S = 0.1
_EXIT_GRACE_S = 2.0  # a collective may still finish after a peer that took part in it has left


def _stall_warn_seconds() -> float:
    raw = os.environ.get("PYCOLL_STALL_WARN", "60")
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"PYCOLL_STALL_WARN={raw!r}: it must be a number of seconds") from None


class Watchdog:
    """The blocking collective in progress (``group`` and ``name``, set by the collective layer
    around each blocking call: two attribute writes, so small messages stay cheap). A daemon
    thread samples them every ``_PERIOD_S`` and ends the job when the same collective has been
    in progress past its group's timeout."""

    def __init__(self) -> None:
        self.group: Optional[Any] = None  # the group of the blocking collective in progress
        self.name = ""
        self._thread: Optional[threading.Thread] = None
        self._stall_warn = 60.0
        self.exits: Optional[Any] = None  # ExitNotices, under MPI

    def start(self, exits: Optional[Any] = None) -> None:
        self.exits = exits
        if self._thread is None:
            self._stall_warn = _stall_warn_seconds()
            self._thread = threading.Thread(target=self._watch, name="pycoll-watchdog", daemon=True)
            self._thread.start()

    def _watch(self) -> None:
        seen: Optional[Tuple[Any, int]] = None  # (group, seq) of the collective being timed
        since = 0.0
        warned = False
        while True:
            time.sleep(_PERIOD_S)
            group = self.group
            if group is None:
                seen = None
                continue
            now = time.monotonic()
            if seen != (group, group.seq):
                seen, since, warned = (group, group.seq), now, False
            elif not warned and now - since > self._stall_warn and self.group is group:
                warned = True
                logger.warning("pycoll: %s #%d on %s has waited %.0f s (PYCOLL_STALL_WARN); it fails "
                               "after %g s", self.name, group.seq, group.describe(), now - since,
                               group.timeout)
            gone = self._departed(group)
            if gone and now - since > _EXIT_GRACE_S and self.group is group:
                _failure.abort_job(1, f"pycoll.CollectiveError: {self.name} #{group.seq} on "
                                      f"{group.describe()} cannot complete: rank(s) {gone} left the job "
                                      f"(exited); stopping the job")
            if now - since > group.timeout and self.group is group:
                error = timeout_error(self.name, group.seq, group, group.timeout)
                abort = getattr(group.backend, "abort", None)
                if abort is not None:  # NCCL: release the GPU communicator before exiting
                    abort()
                _failure.abort_job(1, f"pycoll.CollectiveError: {error} (watchdog, after "
                                      f"{now - since:.1f} s); stopping the job")

    def _departed(self, group: Any) -> List[int]:
        """Members of ``group`` that have exited the job."""
        if self.exits is None:
            return []
        return sorted(set(group.ranks) & self.exits.poll())


watchdog = Watchdog()
