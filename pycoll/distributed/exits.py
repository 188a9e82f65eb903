"""Exit notices: a rank leaving the job tells the others, so nobody waits for it forever.

A rank that exits (normally, or by ``sys.exit`` under plain ``mpiexec``, where no wrapper sees
its status) while a peer sits in a collective that needs it would leave that peer waiting until
its timeout. So every rank, at exit, sends its number to every other rank on a private
communicator; the watchdog thread polls for such notices while a collective (or a task's wait)
is in progress and ends the job when a member of its group has left (see ``watchdog``). The
polling happens in the watchdog thread only, so the collectives' hot path pays nothing.

``os._exit`` skips the interpreter's exit handlers, so a rank leaving that way would neither
tell its peers nor finalise MPI, and MPI's launcher would take the job down with exit status 0,
its other ranks cut off mid-work. In the rank's own process (not in children it forks),
pycoll's ``os._exit`` therefore leaves as an exit should: with a non-zero status it ends the
whole job at once, naming the rank; with status 0 it sends the notice, waits (at most the
job's timeout) until every peer has finished too, and finalises MPI before the process ends.

Once every peer has said it exits, this rank looks for messages sent to it and never received
(``unreceived``: a ``send`` without its ``recv``), which would otherwise end the job silently.

The same communicator carries the stall notices (``stall_notices``, another tag): what a rank
stalled in a collective or point-to-point call waits in, to its group's members and to every
rank, so that ranks in calls that can never match end the job in seconds. They live and stop
with the exit notices. So do the refusal checks (``refusal_checks``, two more tags): a rank that
refused a collective asks its peers whether they refused it too.
"""
from __future__ import annotations

import atexit
import os
import threading
import time
from typing import Any, Callable, List, Set

import numpy as np

from pycoll.distributed import _failure
from pycoll.distributed.placement import mpi_running
from pycoll.distributed.refusal_checks import RefusalChecks
from pycoll.distributed.stall_notices import StallNotices

_TAG = 91
_PEER_POLL_S = 0.01


class ExitNotices:
    def __init__(self, comm: Any, timeout: float):
        from mpi4py import MPI

        self._mpi = MPI
        self.comm = comm  # a private duplicate of the world communicator
        self.rank = comm.Get_rank()
        self.timeout = timeout
        self.exited: Set[int] = set()
        self._inbox = np.zeros(1, np.int64)
        self._lock = threading.Lock()  # the watchdog thread and an exiting main thread both poll
        self._request = self._post()
        self.stalls = StallNotices(comm)  # read by the watchdog
        self.refusals = RefusalChecks(comm)  # asked by the collectives, answered by the watchdog
        self._sent: List[Any] = []  # keep the notices' buffers alive until MPI finalizes
        self._announced = False
        self.last_look: Callable[[], None] = lambda: None  # at exit, once every peer has exited
        atexit.register(self._stop_listening)  # atexit runs last-in first: after announce
        atexit.register(self.announce)
        leave_through(self._leave)

    def _post(self) -> Any:
        return self.comm.Irecv([self._inbox, self._mpi.INT64_T], self._mpi.ANY_SOURCE, _TAG)

    def poll(self) -> Set[int]:
        """The ranks known to have exited."""
        with self._lock:
            while self._request is not None and self._request.Test():
                self.exited.add(int(self._inbox[0]))
                self._request = self._post()
            return set(self.exited)

    def announce(self) -> None:
        """At exit: tell every other rank that this one is leaving (once)."""
        if self._announced:
            return
        self._announced = True
        me = np.array([self.rank], np.int64)
        self._sent.append(me)
        for peer in range(self.comm.Get_size()):
            if peer != self.rank:
                self.comm.Isend([me, self._mpi.INT64_T], peer, _TAG).Free()

    def _stop_listening(self) -> None:
        """At exit, after the announcement: once every peer has exited too (MPI's finalize waits
        for them anyway; at most the job's timeout), take ``last_look``; then take back the
        receives still posted for notices (the stall notices' too), so that MPI does not finalize
        with one pending (UCX then warns of a request not returned)."""
        if not mpi_running():
            return
        if self._all_exited():
            self.last_look()
        self.stalls.stop()
        self.refusals.stop()
        with self._lock:
            if self._request is not None:
                self._request.Cancel()
                self._request.Wait()
                self._request = None

    def _all_exited(self) -> bool:
        """Wait (at most the job's timeout) until every peer has said it exits; whether all have."""
        peers = set(range(self.comm.Get_size())) - {self.rank}
        deadline = time.monotonic() + self.timeout
        while not peers <= self.poll() and time.monotonic() < deadline:
            time.sleep(_PEER_POLL_S)
        return peers <= self.poll()

    def _leave(self, code: Any) -> None:
        """``os._exit(code)`` in this rank: see the module notes."""
        if code != 0:
            _failure.abort_job(code if isinstance(code, int) else 1,
                               f"pycoll: rank {self.rank} called os._exit({code!r}); stopping the job")
        self.announce()
        if not self._all_exited():
            running = sorted(set(range(self.comm.Get_size())) - {self.rank} - self.poll())
            _failure.abort_job(1, f"pycoll: rank {self.rank} called os._exit(0) while rank(s) {running} were still "
                                  f"running, and they did not finish within {self.timeout:g} s; stopping the job")
        if mpi_running():
            self._stop_listening()  # the last notice is in; then finalise as an exit would
            self._mpi.Finalize()


def leave_through(leave: Callable[[Any], None]) -> None:
    """Make ``os._exit`` call ``leave(code)`` first, in this process only."""
    real_exit = os._exit
    owner = os.getpid()

    def _exit(code: int) -> None:
        if os.getpid() == owner:
            leave(code)
        real_exit(code)

    _exit.__doc__ = real_exit.__doc__
    os._exit = _exit
