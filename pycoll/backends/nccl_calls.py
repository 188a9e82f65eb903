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
from typing import Any, Callable, Deque, Dict, List, Optional, Sequence, Tuple

PRUNE_AT = 64  # watched calls kept, at least, before the enqueuing thread drops the completed ones itself
SPARE_EVENTS = 256  # events of completed blocking calls kept for reuse; more are let go


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
    """A call enqueued on the communicator's streams: what it was, when, on which stream (its
    pointer) and the event behind it.

    ``seq`` is the caller's number for the call (0 for an engine used directly);
    ``warned`` is set by the watchdog once it has logged a stall warning for this call;
    ``spare``: the event is :class:`InFlight`'s own, recorded again for a later call once this
    one is seen complete (``completed``).
    """

    __slots__ = ("name", "seq", "started", "stream", "event", "spare", "completed", "warned")

    def __init__(self, name: str, seq: int, stream: int, event: Any, spare: bool = False):
        self.name, self.seq, self.stream, self.event, self.spare = name, seq, stream, event, spare
        self.started = time.monotonic()
        self.completed = self.warned = False

    @property
    def done(self) -> bool:
        # the event first: once ``completed`` is set a spare event may be recorded for a later
        # call, and ``completed`` is set before that, so a query that saw the later record is
        # followed by a read of ``completed`` that is True
        return self.event.done or self.completed


class InFlight:
    """The calls enqueued on one communicator, oldest first, until they are seen complete.

    Shared by the enqueuing thread and the watchdog thread. Appending needs no lock (a deque's
    appends and pops are thread-safe); the lock keeps two threads from dropping at once, and
    only the dropping thread takes calls off the front.

    A blocking call's event is watched by nothing else (:meth:`add` records it): once its call
    is seen complete it is kept (up to ``SPARE_EVENTS``) and recorded again behind a later call,
    which costs CUDA a third of a new event. Events handed to requests are never reused.
    ``record(stream, event)`` is :meth:`pycoll.backends.cuda_api.Cuda.record`.
    """

    def __init__(self, record: Callable[[Any, Any], Any]) -> None:
        self.calls: Deque[Launched] = deque()
        self._lock = threading.Lock()
        self._record = record
        self._spare: List[Any] = []  # events of calls seen complete; only the enqueuing thread takes
        self._limit = PRUNE_AT  # calls kept before add() drops completed ones

    def add(self, name: str, seq: int, stream: Any, event: Any = None) -> None:
        """Record a call just enqueued on ``stream``; ``event`` fires once it is complete. None:
        a blocking call's, watched by nothing else, so this list records one of its own behind
        the call (a spare one when it has one)."""
        spare = event is None
        if spare:
            events = self._spare
            event = self._record(stream, events.pop() if events else None)
        calls = self.calls
        calls.append(Launched(name, seq, stream.ptr, event, spare))
        if len(calls) > self._limit:
            self.drop_completed()

    def drop_completed(self) -> None:
        """Forget the oldest calls that have completed (up to the first that has not).

        Calls on one stream complete in the order they were enqueued, so each stream's calls
        are asked in a binary search, its newest first: one query when they have all completed,
        about log2(calls) otherwise. Then ``add`` waits for twice the calls still kept (at least
        ``PRUNE_AT``) before dropping again, so that a device far behind the host costs few queries.
        """
        with self._lock:
            calls, spare = self.calls, self._spare
            room = SPARE_EVENTS - len(spare)
            for _ in range(_completed_prefix(calls)):
                call = calls.popleft()
                call.completed = True
                if call.spare and room > 0:
                    spare.append(call.event)
                    room -= 1
            self._limit = max(PRUNE_AT, 2 * len(calls))

    def oldest(self) -> Optional[Launched]:
        """The oldest call that has not completed, or None."""
        self.drop_completed()
        try:
            return self.calls[0]
        except IndexError:
            return None


def _completed_prefix(calls: Deque[Launched]) -> int:
    """How many of the oldest ``calls`` have completed, before the first that has not."""
    known = calls.copy()  # one consistent copy: the enqueuing thread may append meanwhile
    if not known:
        return 0
    streams = [call.stream for call in known]
    if streams.count(streams[0]) == len(streams):  # one stream: the common case
        return _completed_on_stream(known, range(len(known)))
    by_stream: Dict[int, List[int]] = {}  # each stream's positions in ``known``, oldest first
    for position, stream in enumerate(streams):
        by_stream.setdefault(stream, []).append(position)
    first_open = len(known)
    for positions in by_stream.values():  # streams in the order of their oldest call
        if positions[0] >= first_open:
            break  # this stream's calls, and later streams', all come after a call not complete
        complete = _completed_on_stream(known, positions)
        if complete < len(positions):
            first_open = min(first_open, positions[complete])
    return first_open


def _completed_on_stream(known: Deque[Launched], positions: Sequence[int]) -> int:
    """How many of the calls at ``positions`` of ``known`` (calls on one stream, oldest first)
    have completed: they complete in order, so the newest is asked first, then a binary search."""
    if known[positions[-1]].event.done:
        return len(positions)
    low, high = 0, len(positions) - 1  # positions[:low] complete, positions[high] not
    while low < high:
        middle = (low + high) // 2
        if known[positions[middle]].event.done:
            low = middle + 1
        else:
            high = middle
    return low
