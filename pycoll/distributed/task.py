"""Non-blocking work: the task a ``sync_op=False`` collective returns, and the group's ownership
of every task in flight.

mpi4py keeps no reference to the buffers of a non-blocking call, and neither does NCCL: if they
were freed before the call completed, the engine would write into memory reused by something
else. So a task holds every array its engine touches (the caller's and pycoll's own staging
buffers) and its group holds the task (``Group.pending``) until it is known to be complete,
whatever the caller does with the task. Later calls on the group retire completed tasks
(:func:`retire`, oldest first); ``barrier`` waits for the collectives among them, and
``destroy_process_group``, ``wait`` and the end of the process for the rest (:func:`drain`). An
error met by a task nobody waits for is kept in ``Group.failure`` and raised by the group's next
call.
"""
from __future__ import annotations

import datetime
import math
import os
import time
from typing import Any, Callable, List, Optional, Tuple, Union

import numpy as np

try:
    from numpy.lib.array_utils import byte_bounds
except ImportError:  # NumPy 1.x
    byte_bounds = np.byte_bounds

from pycoll._errors import CollectiveError
from pycoll.distributed._failure import call_failed, timeout_error
from pycoll.distributed.placement import timeout_seconds
from pycoll.distributed.watchdog import watchdog

_SPIN_S = 200e-6
POINT_TO_POINT = ("send", "recv")  # the tasks of sends and receives (named by their calls)


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


class Task:
    """A collective in flight (``sync_op=False``): ``wait()`` blocks, ``is_completed()`` polls.

    The output arrays hold their results once either reports completion. ``keep`` holds the
    arrays the engine reads and writes until then.
    """

    __slots__ = ("_request", "_group", "_name", "_seq", "_made", "_finish", "_keep", "_done", "_error", "_sync",
                 "_spans", "_touches", "_started")

    def __init__(self, request: Any, group: Any, name: str, seq: int,
                 finish: Optional[Callable[[], None]] = None, keep: Tuple[Any, ...] = (),
                 touches: "Touches" = ((), ()), made: int = -1):
        self._request = request
        self._group = group
        self._name = name
        self._seq = seq
        self._made = made  # the group's collectives_made with this one (the stall notices tell it)
        self._finish = finish
        self._keep: Optional[Tuple[Any, ...]] = keep
        self._done = request is None
        self._sync = request is None  # a blocking call's task: complete when made
        self._error: Optional[CollectiveError] = None
        self._touches = touches  # the caller's arrays it reads, and those it writes
        self._spans: Optional[Tuple[List[Span], List[Span]]] = None  # their memory, once asked
        self._started = time.monotonic()

    @property
    def settled(self) -> bool:
        """Whether the call is known to be over (completed or failed), without looking at the
        engine: what another thread (the watchdog) may read."""
        return self._done

    def spans(self) -> Tuple[List["Span"], List["Span"]]:
        """The memory of the caller's arrays the call reads, and of those it writes (empty once
        it is complete)."""
        if self._keep is None:
            return [], []
        if self._spans is None:
            reads, writes = self._touches
            self._spans = (memory_spans(reads), memory_spans(writes))
        return self._spans

    def _complete(self) -> None:
        self._done = True
        self._request = self._keep = None
        finish, self._finish = self._finish, None
        if finish is not None:
            finish()

    def _failed(self, exc: BaseException) -> CollectiveError:
        self._done = True
        self._request = self._keep = self._finish = None
        self._error = call_failed(self._name, self._seq, self._group, exc)
        return self._error

    def _test(self, start: bool = True) -> bool:
        """One look at the engine: True once complete (results in place); raises its error.
        ``start=False`` leaves a call the engine holds back unstarted (see ``Request.test``)."""
        if self._done:
            if self._error is not None:
                raise self._error
            return True
        try:
            complete = self._request.test(start)
        except Exception as exc:
            raise self._failed(exc) from exc
        if complete:
            self._complete()
        return complete

    def is_completed(self) -> bool:
        """Whether the call is complete (results in place). A call still incomplete past its
        group's timeout, or one a member of the group has left the job without, raises as
        ``wait()`` would: a loop polling this method does not wait forever."""
        if self._test():
            return True
        if watchdog.check_polled(self._group, self._name, self._seq, self._started,
                                 lambda grace: poll(self._request, grace)):
            self._complete()  # a member that left had given its part: the call completed meanwhile
            return True
        return False

    def is_sync(self) -> bool:
        """paddle's ``task.is_sync()``: whether the call was blocking (``sync_op=True``)."""
        return self._sync

    def synchronize(self) -> None:
        """paddle's ``task.synchronize()``: block until the collective completes."""
        self.wait()

    def wait(self, timeout: Union[None, float, datetime.timedelta] = None) -> bool:
        """Block until the collective completes, for at most ``timeout`` (seconds or a
        ``datetime.timedelta``, paddle's type); None or zero (paddle's default,
        ``timedelta(0)``) waits as long as the group's timeout. The group's collectives made
        before it are complete then too (see :func:`wait_earlier_collectives`).

        On a GPU engine nothing blocks the host: the current stream waits for the collective,
        as torch's ``Work.wait()`` does for NCCL. Meanwhile the watchdog ends the job if a
        member of the group leaves it.
        """
        self._wait_alone(timeout)
        if self._group is not None and self._name not in POINT_TO_POINT:
            wait_earlier_collectives(self._group, before=self)
        return True

    def _wait_alone(self, timeout: Union[None, float, datetime.timedelta] = None) -> bool:
        """``wait`` for this call only."""
        seconds = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else timeout
        if seconds is None or (isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and seconds == 0):
            limit = None  # the group's
        else:
            limit = timeout_seconds(seconds, "Task.wait: timeout")
        if self._test():
            return True
        if limit is None:
            limit = self._group.timeout
        try:
            if self._request.join_stream():
                self._complete()
                return True
            waiting = watchdog.waiting = (self._group, self._name, self._seq, self._made)
            try:
                complete = poll(self._request, limit)
            finally:
                if watchdog.waiting is waiting:
                    watchdog.waiting = None
        except Exception as exc:
            raise self._failed(exc) from exc
        if not complete:  # a shorter timeout given here, on a call younger than the group's: not fatal
            young = time.monotonic() - self._started < self._group.timeout
            raise timeout_error(self._name, self._seq, self._group, limit, given=young)
        self._complete()
        return True

    def __repr__(self) -> str:
        if self._group is None:
            return "Task(completed)"
        state = "failed" if self._error else "completed" if self._done else "pending"
        return f"Task({self._name} #{self._seq} on {self._group.name}, {state})"


COMPLETED = Task(None, None, "", 0)
"""What a collective with ``sync_op=True`` returns: its work is already done."""


# an array's memory: its first byte's address, one past its last, and the array where it is a
# host one (None: a device array, known by its bounds only)
Span = Tuple[int, int, Optional[np.ndarray]]
_TOO_HARD = getattr(np, "exceptions", np).TooHardError  # (NumPy 1.x has it at the top)
_OVERLAP_WORK = 1000  # how hard np.shares_memory may look before a pair counts as overlapping
Touches = Tuple[Tuple[Any, ...], Tuple[Any, ...]]  # a call's arrays (or lists of them): read, written


def _interface_span(face: dict) -> Optional[Span]:
    """The memory of an array described by ``__array_interface__`` / ``__cuda_array_interface__``."""
    shape, strides = face["shape"], face.get("strides")
    itemsize = np.dtype(face["typestr"]).itemsize
    if not all(shape):
        return None
    start = face["data"][0]
    if strides is None:  # C-contiguous
        return start, start + math.prod(shape) * itemsize, None
    low = sum((n - 1) * st for n, st in zip(shape, strides) if st < 0)
    high = sum((n - 1) * st for n, st in zip(shape, strides) if st > 0)
    return start + low, start + high + itemsize, None


def memory_spans(objs: Any) -> List[Span]:
    """The memory of each array among ``objs`` (lists and tuples of them too): a pycoll Tensor's
    array, a NumPy array's byte bounds (a strided view's too), a CuPy array's device memory, or
    another framework's array through its array interface. Other objects take no memory here."""
    spans: List[Span] = []
    for obj in objs:
        obj = getattr(obj, "_array", obj)  # a pycoll Tensor: its array
        if isinstance(obj, (list, tuple)):
            spans += memory_spans(obj)
        elif isinstance(obj, np.ndarray):
            if obj.nbytes:
                spans.append((*byte_bounds(obj), obj))
        else:
            face = _interface(obj)
            span = _interface_span(face) if face is not None else None
            if span is not None:
                spans.append(span)
    return spans


def _interface(obj: Any) -> Optional[dict]:
    """``obj``'s ``__cuda_array_interface__`` or ``__array_interface__``; None where it has
    neither or refuses to give one (torch's CUDA tensor that requires grad raises RuntimeError):
    this runs before the call's own checks, which then refuse the object, naming the argument."""
    for name in ("__cuda_array_interface__", "__array_interface__"):
        try:
            face = getattr(obj, name, None)
        except Exception:
            return None
        if isinstance(face, dict):
            return face
    return None


def _meet(ours: List[Span], theirs: List[Span]) -> bool:
    return any(lo < their_hi and their_lo < hi and _share(mine, other)
               for lo, hi, mine in ours for their_lo, their_hi, other in theirs)


def _share(a: Optional[np.ndarray], b: Optional[np.ndarray]) -> bool:
    """Whether two arrays whose bounds meet share a byte: for host arrays, exactly where NumPy
    tells it cheaply (two columns of one matrix interleave and share none: waiting for one to
    send before the other receives could deadlock a halo exchange); otherwise, yes."""
    if a is None or b is None:
        return True
    try:
        return bool(np.shares_memory(a, b, max_work=_OVERLAP_WORK))
    except _TOO_HARD:
        return True


def wait_overlapping(group: Any, touches: Touches) -> None:
    """Wait for the tasks of ``group`` in flight that write memory a call about to start on it
    reads or writes, or read memory it writes (``touches``: the caller's arrays it reads, and
    those it writes, before any is staged). paddle's and torch's process groups run a group's calls
    in the order they are made; MPI runs non-blocking calls side by side and pycoll's NCCL engine
    runs them on its own stream, so a call on a tensor that a task still writes
    (``all_reduce(x, sync_op=False)`` twice, or then ``broadcast(x)``, or ``all_gather(outs, x,
    sync_op=False)`` then a call on ``outs[0]``) would mix their data. Calls that only read what
    tasks only read (sending one tensor twice, gathering a tensor being sent) go on beside them,
    as calls on other memory do."""
    reads: Optional[List[Span]] = None
    writes: List[Span] = []
    for task in group.pending:
        their_reads, their_writes = task.spans()
        if not their_reads and not their_writes:
            continue
        if reads is None:
            reads, writes = memory_spans(touches[0]), memory_spans(touches[1])
            if not reads and not writes:
                return
        if _meet(reads + writes, their_writes) or _meet(writes, their_reads):
            task._wait_alone()  # (the tasks before it may run on)


def wait_earlier_collectives(group: Any, before: Optional[Task] = None) -> None:
    """Wait for the collectives of ``group`` still in flight (those made before task ``before``),
    once a blocking call on it has returned (or a task has been waited for). paddle's process
    groups run a group's calls in order (NCCL's stream, gloo's blocking calls), so when a call
    is complete every earlier one is: a Paddle user reads the tensor of a task they dropped after
    the next blocking call, or the next task's wait. Every rank made those collectives before
    this one, so they complete. Sends and receives go on beside it: a receive may wait for a
    send its peer makes after its own blocking call. Other groups' calls are not ordered with
    this group's (paddle's are not either: each group has its own stream)."""
    for task in list(group.pending):
        if task is before:
            break
        if task._name not in POINT_TO_POINT:
            task._wait_alone()


def retire(group: Any) -> None:
    """Let go of the group's completed tasks, oldest first (without waiting); the first error
    met is kept in ``group.failure`` for the group's next call."""
    pending = group.pending
    while pending:
        try:
            if not pending[0]._test(start=False):  # the engine's own grouping decides starts
                return
        except CollectiveError as exc:
            group.failure = group.failure or exc
        pending.popleft()


def drain(group: Any) -> None:
    """Wait for every task of ``group`` (each within the group's timeout). A task that failed
    is let go and the first such error raised once the others are complete; a task that timed
    out stays pending (its engine may still write into its arrays) and its error is raised."""
    first: Optional[CollectiveError] = None
    pending = group.pending
    while pending:
        task = pending[0]
        try:
            task.wait()
        except CollectiveError as exc:
            if not task._done:
                raise
            first = first or exc
        pending.popleft()
    if first is not None:
        raise first


def take_failure(group: Any) -> Optional[CollectiveError]:
    """The error a task of ``group`` met while nobody waited for it (once; None if none)."""
    failure, group.failure = group.failure, None
    return failure
