"""The NCCL engine's calls once issued: the requests of non-blocking calls, and the watched list
of every enqueued call.

Watching. Nothing in the engine waits on the host, so a peer that never joins shows as a hang
at the user's next synchronize. Every enqueued call is therefore recorded (:class:`Launched`,
in an :class:`InFlight` list) with an event behind it; the watchdog thread
(``pycoll.distributed.watchdog``) asks the engine's ``stalled_call()`` for the oldest call whose
event has not fired and ``async_error()`` for NCCL's asynchronous errors, and aborts the
communicator when a call is overdue, as torch's NCCL watchdog does.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any, Deque, Optional, Tuple

PRUNE_AT = 64  # watched calls kept before the enqueuing thread drops the completed ones itself


class NCCLRequest:
    """A non-blocking call: ``test()`` polls it, ``join_stream()`` hands it to the current stream.

    A held-back send/receive (see ``pycoll.backends.nccl``) is launched by the first ``test()``
    or ``join_stream()``. Both raise :class:`pycoll.CollectiveError` when NCCL reports an error
    on the communicator (which is then aborted).
    """

    __slots__ = ("_backend", "_name", "_seq", "_event", "_keep")

    def __init__(self, backend: Any, name: str, seq: int, event: Any, keep: Tuple[Any, ...]):
        self._backend = backend  # the NCCLBackend that issued the call
        self._name, self._seq = name, seq
        self._event = event  # None while a held-back send/receive waits for its launch
        self._keep: Optional[Tuple[Any, ...]] = keep  # None once done

    def launched(self, event: Any) -> None:
        """The held-back transfer was launched; ``event`` fires once it is complete."""
        self._event = event

    def _started(self) -> Any:
        if self._event is None:
            self._backend._flush(self._name, self._seq)
        return self._event

    def test(self, start: bool = True) -> bool:
        """True once the call is complete (its results are in place); a held-back transfer is
        launched first, unless ``start`` is False (it then counts as incomplete)."""
        if self._keep is None:
            return True
        if self._event is None and not start:
            return False
        self._backend._usable(self._name)  # after an abort, events complete without results
        if self._started().done:
            self._keep = None
            return True
        self._backend._check(self._name)
        return False

    def join_stream(self) -> bool:
        """Make the current stream wait for the call; later work on it sees the results.

        Returns (True) without waiting on the host; the request counts as complete afterwards.
        """
        if self._keep is None:
            return True
        event = self._started()
        self._backend._check(self._name)
        self._backend._current().wait_event(event)
        self._keep = None
        return True


class Launched:
    """A call enqueued on the communicator's streams: what it was, when, and the event behind it.

    ``seq`` is the caller's number for the call (0 for an engine used directly);
    ``warned`` is set by the watchdog once it has logged a stall warning for this call.
    """

    __slots__ = ("name", "seq", "started", "event", "warned")

    def __init__(self, name: str, seq: int, event: Any):
        self.name, self.seq, self.event = name, seq, event
        self.started = time.monotonic()
        self.warned = False

    @property
    def done(self) -> bool:
        return self.event.done


class InFlight:
    """The calls enqueued on one communicator, oldest first, until they are seen complete.

    Shared by the enqueuing thread and the watchdog thread. Appending needs no lock (a deque's
    appends and pops are thread-safe); the lock keeps two threads from dropping at once.
    """

    def __init__(self) -> None:
        self.calls: Deque[Launched] = deque()
        self._lock = threading.Lock()

    def add(self, name: str, seq: int, event: Any) -> None:
        """Record an enqueued call; ``event`` fires once it is complete."""
        self.calls.append(Launched(name, seq, event))
        if len(self.calls) > PRUNE_AT:
            self.drop_completed()

    def drop_completed(self) -> None:
        """Forget the oldest calls that have completed."""
        with self._lock:
            calls = self.calls
            while calls and calls[0].event.done:
                calls.popleft()

    def oldest(self) -> Optional[Launched]:
        """The oldest call that has not completed, or None."""
        self.drop_completed()
        try:
            return self.calls[0]
        except IndexError:
            return None
