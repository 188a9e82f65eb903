"""Exit notices: a rank leaving the job tells the others, so nobody waits for it forever.

A rank that exits (normally, or by ``sys.exit`` under plain ``mpiexec``, where no wrapper sees
its status) while a peer sits in a blocking collective that needs it would leave that peer
waiting until its timeout. So every rank, at exit, sends its number to every other rank on a
private communicator; the watchdog thread polls for such notices while a blocking collective is
in progress and ends the job when a member of its group has left (see ``watchdog``). The polling
happens in the watchdog thread only, so the collectives' hot path pays nothing.
"""
from __future__ import annotations

import atexit
from typing import Any, List, Set

import numpy as np

_TAG = 91


class ExitNotices:
    def __init__(self, comm: Any):
        from mpi4py import MPI

        self._mpi = MPI
        self.comm = comm  # a private duplicate of the world communicator
        self.rank = comm.Get_rank()
        self.exited: Set[int] = set()
        self._inbox = np.zeros(1, np.int64)
        self._request = self._post()
        self._sent: List[Any] = []  # keep the notices' buffers alive until MPI finalizes
        atexit.register(self.announce)

    def _post(self) -> Any:
        return self.comm.Irecv([self._inbox, self._mpi.INT64_T], self._mpi.ANY_SOURCE, _TAG)

    def poll(self) -> Set[int]:
        """The ranks known to have exited (called from the watchdog thread)."""
        while self._request.Test():
            self.exited.add(int(self._inbox[0]))
            self._request = self._post()
        return self.exited

    def announce(self) -> None:
        """At exit: tell every other rank that this one is leaving."""
        me = np.array([self.rank], np.int64)
        self._sent.append(me)
        for peer in range(self.comm.Get_size()):
            if peer != self.rank:
                self.comm.Isend([me, self._mpi.INT64_T], peer, _TAG).Free()
