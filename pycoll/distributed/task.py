"""The task of a ``sync_op=False`` collective: polled, and waited on with a deadline that
raises :class:`pycoll.CollectiveError` on the waiting rank."""
from __future__ import annotations

import os
import time
from typing import Any, Callable, Optional

from pycoll._errors import CollectiveError
from pycoll.distributed import _failure

_SPIN_S = 200e-6


def poll(request: Any, timeout: float) -> bool:
    """Progress ``request`` until it completes (True) or ``timeout`` seconds pass (False).

    Spins for the first ``_SPIN_S`` (as MPI's blocking calls do: most collectives finish
    within that), then yields the core between polls so that ranks oversubscribing the cores
    still progress.
    """
    test = request.test
    now = time.monotonic
    start = now()
    spin_until, deadline = start + _SPIN_S, start + timeout
    while not test():
        if now() > spin_until:
            break
    else:
        return True
    while not test():
        os.sched_yield()
        if now() > deadline:
            return False
    return True


def label(name: str, seq: int) -> str:
    """A call as messages name it: ``all_reduce #3``, or just the name of a set-up step (seq 0)."""
    return f"{name} #{seq}" if seq else name


def timeout_error(name: str, seq: int, group: Any, waited: float) -> CollectiveError:
    _failure.mark_broken()
    return CollectiveError(
        f"{label(name, seq)} on {group.describe()} did not complete within {waited:g} s on rank "
        f"{group.rank} of that group (PYCOLL_TIMEOUT / the group's timeout): a peer is dead, "
        f"stalled or called a different collective")


class Task:
    """A collective in flight (``sync_op=False``): ``wait()`` blocks, ``is_completed()`` polls.

    The output arrays hold their results once either reports completion.
    """

    __slots__ = ("_request", "_group", "_name", "_seq", "_finish", "_done")

    def __init__(self, request: Any, group: Any, name: str, seq: int,
                 finish: Optional[Callable[[], None]] = None):
        self._request = request
        self._group = group
        self._name = name
        self._seq = seq
        self._finish = finish
        self._done = request is None

    def _mark_done(self) -> None:
        self._done = True
        finish, self._finish = self._finish, None
        if finish is not None:
            finish()

    def is_completed(self) -> bool:
        if not self._done and self._request.test():
            self._mark_done()
        return self._done

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Block until the collective completes (at most ``timeout`` or the group's timeout).

        On a GPU engine (a request with ``join_stream``) nothing blocks the host: the current
        stream waits for the collective, as torch's ``Work.wait()`` does for NCCL.
        """
        join_stream = getattr(self._request, "join_stream", None)
        if not self._done and join_stream is not None:
            join_stream()
            self._mark_done()
        if not self._done:
            limit = self._group.timeout if timeout is None else timeout
            if not poll(self._request, limit):
                raise timeout_error(self._name, self._seq, self._group, limit)
            self._mark_done()
        return True

    def __repr__(self) -> str:
        if self._group is None:
            return "Task(completed)"
        state = "completed" if self._done else "pending"
        return f"Task({self._name} #{self._seq} on {self._group.name}, {state})"


COMPLETED = Task(None, None, "", 0)
"""What a collective with ``sync_op=True`` returns: its work is already done."""
