"""The watchdog that bounds every wait on a collective.

Three kinds of wait are watched by one daemon thread, sampled every ``_PERIOD_S``:

- A blocking MPI call (or a blocking set-up step: NCCL communicator creation, ``new_group``)
  cannot be interrupted from Python. The collective layer marks it (``group`` and ``name``: two
  attribute writes, so small messages stay cheap) for as long as it runs.
- A task's ``wait()`` marks itself in ``waiting`` (group, name, sequence number, collectives
  made). It enforces its own deadline (raising on the waiting rank), so the thread only warns
  about it and ends the job when a member of its group has left.
- A stream-ordered engine (NCCL) returns before its calls complete, so its waits happen later,
  wherever the user synchronizes. The engine records each call with an event behind it; the
  thread asks every group's engine for its oldest unfinished call (``stalled_call()``) and
  for its asynchronous errors (``async_error()``), as torch's NCCL watchdog does (the MPI
  engine has neither).

A wait longer than ``PYCOLL_STALL_WARN`` logs a warning; a wait past its group's timeout, or one
for a member that has left the job, aborts the group's communicator (NCCL) and ends the job with
a :class:`pycoll.CollectiveError` naming the collective, its sequence number, the group and how
long it waited.

Under MPI (where the exit notices' private communicator exists) a wait that has lasted
``min(_NOTICE_AFTER_S, PYCOLL_STALL_WARN)`` is also told to the group's other members
(:mod:`stall_notices`): when every member waits at the same sequence number and two of their
calls can never match (``barrier`` against ``all_reduce``; on MPI a blocking call against a
task), or on MPI the members have made different numbers of collectives on the group, the job
ends at once, the message naming each rank's call, instead of at the timeout.
The wait this thread is blocked in (a blocking call or a task's wait) is told to every rank too,
with the number of other tasks in flight: when every rank of the job waits and no wait can ever
be matched (across groups, point-to-point calls included: :mod:`job_deadlock`), the job ends the
same way.
Under ``PYCOLL_CHECK=1`` a wait in a call's comparison is a wait in the call: the notices go on
(a deadlock across groups is no difference the comparison can see).
"""
from __future__ import annotations

import contextlib
import itertools
import os
import threading
import time
from typing import Any, Callable, Iterable, Iterator, List, Optional, Tuple

from pycoll._errors import CollectiveError
from pycoll._logging import logger
from pycoll.distributed import _failure, check
from pycoll.distributed._failure import label, timeout_error

_PERIOD_S = 0.1
_EXIT_GRACE_S = 2.0  # a collective may still finish after a peer that took part in it has left
_ABORT_WAIT_S = 5.0  # how long an engine's abort may take before the job is ended regardless
_NOTICE_AFTER_S = 10.0  # a wait this long (or PYCOLL_STALL_WARN, if shorter) is told to the peers


def stall_warn_seconds() -> float:
    raw = os.environ.get("PYCOLL_STALL_WARN", "60")
    try:
        seconds = float(raw)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds < float("inf"):  # as PYCOLL_TIMEOUT is checked
        raise ValueError(f"PYCOLL_STALL_WARN={raw!r}: it must be a number of seconds above 0")
    return seconds


_serials = itertools.count(1)


class _Blocking:
    """The blocking call (or task's wait) in progress, as the thread first saw it (the fields of
    an engine's watched call: ``name``, ``seq``, ``started``, ``warned``); ``made`` is the group's
    ``collectives_made`` with the call, ``serial`` tells this wait from any other of the rank, a
    later wait for the same task included."""

    __slots__ = ("name", "seq", "made", "started", "warned", "serial")

    def __init__(self, name: str, seq: int, made: int, started: float):
        self.name, self.seq, self.made, self.started = name, seq, made, started
        self.warned = False
        self.serial = next(_serials)


class Watchdog:
    """The blocking call in progress (``group`` and ``name``, set by the collective layer), the
    task being waited for (``waiting``) and the groups whose engines watch their own calls; see
    the module notes."""

    def __init__(self, groups: Callable[[], Iterable[Any]] = tuple) -> None:
        self.group: Optional[Any] = None  # the group of the blocking call in progress
        self.name = ""
        self.waiting: Optional[Tuple[Any, str, int, int]] = None  # (group, name, seq, made) of a task's wait
        self.exits: Optional[Any] = None  # ExitNotices, under MPI
        self.stalls: Optional[Any] = None  # the exit notices' StallNotices
        self.refusals: Optional[Any] = None  # the exit notices' RefusalChecks
        self._groups = groups  # every live group
        self._thread: Optional[threading.Thread] = None
        self.stall_warn = 60.0  # seconds before a wait is logged (PYCOLL_STALL_WARN, read by start)
        self.notice_after = _NOTICE_AFTER_S  # seconds before a wait is told to the peers
        self._blocking: Optional[Tuple[Any, _Blocking]] = None  # (group, the call) being timed
        self._waited: Optional[Tuple[Any, _Blocking]] = None  # (waiting as seen, its timing)

    def start(self, exits: Optional[Any] = None,
              groups: Optional[Callable[[], Iterable[Any]]] = None) -> None:
        """Start the thread (once); ``exits`` and ``groups`` (the live groups) are kept when given."""
        if exits is not None:
            self.exits, self.stalls, self.refusals = exits, exits.stalls, exits.refusals
        if groups is not None:
            self._groups = groups
        if self._thread is None:
            self.stall_warn = stall_warn_seconds()
            self.notice_after = min(_NOTICE_AFTER_S, self.stall_warn)
            self._thread = threading.Thread(target=self._watch, name="pycoll-watchdog", daemon=True)
            self._thread.start()

    def live_groups(self) -> Tuple[Any, ...]:
        """Every live group (the world and those made since)."""
        return tuple(self._groups())

    @contextlib.contextmanager
    def guard(self, group: Any, name: str) -> Iterator[None]:
        """Watch a blocking step that is not a collective call (set-up, ``new_group``)."""
        self.name, self.group = name, group
        try:
            yield
        finally:
            self.group = None

    def _watch(self) -> None:
        failing = False
        while True:
            time.sleep(_PERIOD_S)
            try:
                self.tick(time.monotonic())
                failing = False
            except Exception:  # e.g. a CUDA error the main thread will meet too: say it once, go on
                if not failing:
                    logger.exception("the watchdog's check failed")
                failing = True

    def tick(self, now: float) -> None:
        """One look at every wait (the thread calls it every ``_PERIOD_S``)."""
        stalled: List[Tuple[Any, Any, int, Callable[[], bool]]] = []  # waits past notice_after
        # the main thread's wait once past notice_after (None before): its blocking call's, a task's
        hosts: List[Optional[Tuple[Any, Any, int, Callable[[], bool]]]] = []
        group = self.group
        if group is None:
            self._blocking = None
        else:
            # the collective layer writes the name, then the group: read after the group, the
            # name is this call's (or, were the call just over, a later one's, seen next tick)
            seq, name, made = group.seq, self.name, group.collectives_made
            seen = self._blocking
            if seen is None or seen[0] is not group or seen[1].seq != seq or seen[1].name != name:
                seen = self._blocking = (group, _Blocking(name, seq, made, now))
            hosts.append(self._observe(stalled, group, seen[1], now, _blocking_flag(group, True),
                                       lambda: self.group is group and group.seq == seq))
        waiting = self.waiting
        if waiting is None:
            self._waited = None
        else:
            if self._waited is None or self._waited[0] is not waiting:
                self._waited = (waiting, _Blocking(waiting[1], waiting[2], waiting[3], now))
            hosts.append(self._observe(stalled, waiting[0], self._waited[1], now,
                                       _blocking_flag(waiting[0], False), lambda: self.waiting is waiting,
                                       own_deadline=True))
        live = tuple(self._groups())
        for g in live:
            backend = g.engine  # read once: the main thread may destroy the group meanwhile
            if backend is None:
                continue
            error = backend.async_error()
            if error is not None:
                _end_job(backend, f"pycoll.CollectiveError: NCCL reported an error on "
                                  f"{g.describe()}: {error}; stopping the job")
            call = backend.stalled_call()
            if call is not None:
                self._observe(stalled, g, call, now, -1, lambda: not call.done)
        if self.refusals is not None and not check.enabled:
            self.refusals.serve(live, self.exits.poll)  # peers' questions about calls refused
        if self.stalls is not None:  # under PYCOLL_CHECK too: a wait in the comparison is one in its call
            host = hosts[0] if len(hosts) == 1 else None
            # the tasks in flight besides the one waited for (a task waited for to its end is not,
            # though its group lets go of it at its next call only: it would hide every later deadlock)
            others = sum(not t.settled for g in live for t in tuple(g.pending)) - (waiting is not None) if host else 0
            found = self.stalls.update(stalled, host, others, live)
            if found is not None:
                _end_job(found[0].engine, f"pycoll.CollectiveError: {found[1]}")

    def _observe(self, stalled: List[Tuple[Any, Any, int, Callable[[], bool]]], group: Any, call: Any,
                 now: float, blocking: int, still_waiting: Callable[[], bool],
                 own_deadline: bool = False) -> Optional[Tuple[Any, Any, int, Callable[[], bool]]]:
        """``_check`` the wait, and add it to ``stalled`` (and return it) once it has lasted
        ``notice_after`` (``blocking``: 1, 0 for a task's wait, -1 on a stream-ordered engine)."""
        self._check(group, call, now, still_waiting, own_deadline)
        if now - call.started < self.notice_after:
            return None
        stalled.append((group, call, blocking, still_waiting))
        return stalled[-1]

    def _check(self, group: Any, call: Any, now: float, still_waiting: Callable[[], bool],
               own_deadline: bool = False) -> None:
        """Warn about, or end the job over, ``call`` on ``group``, unfinished since ``call.started``
        (past the group's timeout unless the wait enforces ``own_deadline``)."""
        waited = now - call.started
        if not call.warned and waited > self.stall_warn and still_waiting():
            call.warned = True
            logger.warning("%s on %s has waited %.0f s (PYCOLL_STALL_WARN); it fails after %g s",
                           _label(call), group.describe(), waited, group.timeout)
        gone = self._departed(group)
        if gone and waited > _EXIT_GRACE_S and still_waiting():
            _end_job(group.engine, f"pycoll.CollectiveError: {_label(call)} on {group.describe()} cannot "
                                   f"complete: rank(s) {gone} left the job (exited){_left_hint()}; stopping the job")
        if not own_deadline and waited > group.timeout and still_waiting():
            error = timeout_error(call.name, call.seq, group, group.timeout)
            _end_job(group.engine, f"pycoll.CollectiveError: {error} (watchdog, after {waited:.1f} s); "
                                   f"stopping the job")

    def _departed(self, group: Any) -> List[int]:
        """Members of ``group`` that have exited the job."""
        if self.exits is None:
            return []
        return sorted(set(group.ranks) & self.exits.poll())

    def check_polled(self, group: Any, name: str, seq: int, started: float,
                     settle: Callable[[float], bool]) -> bool:
        """For a task polled (``is_completed()``) and found incomplete, ``started`` (monotonic)
        seconds ago: raise what its ``wait()`` would meet, a timeout past the group's, or the
        members that left the job (the thread watches waits, not polls). A member that gave its
        part before it left leaves the call to complete here: ``settle(seconds)`` progresses it
        that long at most, and True (complete) is returned instead of an error."""
        waited = time.monotonic() - started
        if waited > group.timeout:
            raise timeout_error(name, seq, group, group.timeout)
        gone = self._departed(group)
        if not gone:
            return False
        if settle(_EXIT_GRACE_S):
            return True
        raise CollectiveError(f"{label(name, seq)} on {group.describe()} cannot complete: "
                              f"rank(s) {gone} left the job (exited){_left_hint()}")


def _left_hint() -> str:
    """Why a peer that left may have left this call waiting: it ended before making it, or made
    it unlike this rank (under ``PYCOLL_CHECK`` that would have been caught: it ended before)."""
    if check.enabled:
        return " (it ended without making this call)"
    return (" (it ended without making this call, or made it otherwise: another sync_op, size or dtype; "
            "PYCOLL_CHECK=1 compares the calls)")


def _end_job(backend: Any, message: str) -> None:
    """End the job with ``message``, aborting ``backend``'s communicator once the message is out:
    a call blocked inside NCCL (its first call connecting to a peer that never comes) fails
    when the communicator is aborted, and the main thread would otherwise race to end the job
    with NCCL's own words for that ("internal error")."""
    _failure.abort_job(1, message, then=lambda: _abort_engine(backend))


def _abort_engine(backend: Any) -> None:
    """Abort ``backend``'s communicator (NCCL: its kernels stop, its GPU memory is released)
    before the job ends, waiting at most ``_ABORT_WAIT_S``: ``ncclCommAbort`` can itself block
    behind a call stuck inside NCCL, and the job must end regardless."""
    if backend is None:
        return
    aborting = threading.Thread(target=backend.abort, name="pycoll-abort", daemon=True)
    aborting.start()
    aborting.join(_ABORT_WAIT_S)


def _blocking_flag(group: Any, blocking: bool) -> int:
    """How a wait on ``group`` is told: 1 blocking, 0 a task, -1 where the engine is stream-ordered
    (NCCL orders a blocking call and a task alike) or gone."""
    engine = group.engine
    return -1 if engine is None or engine.stream_ordered else int(blocking)


def _label(call: Any) -> str:
    return label(call.name, call.seq)


watchdog = Watchdog()
