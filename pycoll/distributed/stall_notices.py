"""Stall notices: ranks stuck in collectives that can never match end the job in seconds.

Without ``PYCOLL_CHECK`` nothing compares the ranks' calls, so a rank that calls ``barrier``
while its peer calls ``all_reduce`` (or, on MPI, a blocking call against a peer's ``sync_op=False``
one: MPI never matches the two) leaves both waiting until ``PYCOLL_TIMEOUT``. So once one of a
rank's waits on a group (a blocking call, a task's ``wait()``, an engine's enqueued call) has
lasted the watchdog's notice delay, the rank tells the group's other members what it waits in:
the group, the call's sequence number on it, its name and, on engines that are not stream-ordered
(MPI), whether it blocks. A wait that ends is withdrawn, so a rank holds only its peers' waits in
progress. When every member of a group is stalled in that group at the same sequence number and
two of their calls can never match (:func:`never_match`), the watchdog ends the job with a
message naming each rank's call.

Why every member and not any one peer: ``send``/``recv`` count in a group's sequence numbers on
the ranks that make them only, so on a group that also carries point-to-point traffic (a
pipeline's) two ranks at one number may be at different places of the program — one having
passed early a call that completes without its peers (a broadcast's root) while a third rank is
slow. When every member waits in the group's collectives, though, the earliest of those calls
has been made by all of them and would complete in a correct program; so the evidence holds
whatever the numbering. (On NCCL an engine's oldest unfinished call may be queued behind GPU
work rather than waiting for peers; a false conclusion there would still need point-to-point
traffic to line two different collectives up at one number.) Only the collectives a sequence
number names are told (:data:`NUMBERED`): point-to-point calls, set-up steps and the checks
``broadcast_object_list`` makes before numbering its broadcasts are not.

The messages travel on the private communicator of the exit notices (``exits``), which owns this
object. Only the watchdog thread sends and polls, and only while a wait of this rank is stalled
or one it told about has ended: the collectives' path pays nothing.
"""
from __future__ import annotations

import hashlib
import threading
from itertools import combinations
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

_TAG = 92  # the exit notices use 91
_NOTICE, _WITHDRAWN = 1, 2
_RECORD = np.dtype([("sender", "<i8"), ("kind", "<i8"), ("group", "<i8"), ("seq", "<i8"),
                    ("blocking", "<i8"), ("name", "S40")])

NUMBERED = frozenset({"all_reduce", "reduce", "broadcast", "all_gather", "gather", "scatter",
                      "reduce_scatter", "alltoall", "alltoall_single", "alltoallv", "barrier"})
"""The calls a wait is told for: collectives numbered before they run, whose every step is
watched under their own name and number (the NCCL engine's ``alltoallv`` is alltoall's data)."""
_SAME_CALL = {"alltoall_single": "alltoall", "alltoallv": "alltoall"}  # one engine call underneath
_ONE_STEP = frozenset({"all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter"})
"""Calls whose ``sync_op`` decides their only engine call (gather and scatter share a blocking
verdict first, alltoall its sizes: there a blocking wait and a task may be one call)."""

Call = Tuple[str, int]  # name, and blocking: 1, 0 for a task's wait, -1 on a stream-ordered engine
Stalled = Tuple[Any, Any, int, Callable[[], bool]]  # group, call (name, seq, started), blocking, still waiting


def never_match(a: Call, b: Call) -> bool:
    """Whether calls ``a`` and ``b``, made at the same sequence number on one group, can never
    match: other collectives, or on MPI a blocking call against a task."""
    (name_a, blocking_a), (name_b, blocking_b) = a, b
    if _SAME_CALL.get(name_a, name_a) != _SAME_CALL.get(name_b, name_b):
        # a stream-ordered engine records a rooted call's verdict as a broadcast under its number
        return not (min(blocking_a, blocking_b) < 0 and "broadcast" in (name_a, name_b))
    return name_a in _ONE_STEP and min(blocking_a, blocking_b) >= 0 and blocking_a != blocking_b


def describe_call(call: Call) -> str:
    """``all_reduce (sync_op=True)``; just the name where blocking is unknown or a barrier's."""
    name, blocking = call
    return name if blocking < 0 or name == "barrier" else f"{name} (sync_op={bool(blocking)})"


def mismatch_text(group: Any, seq: int, calls: Dict[int, Call]) -> Optional[str]:
    """The reason to end the job when two of ``calls`` (global rank: call, every member of
    ``group`` at #``seq``) can never match, else None."""
    if not any(never_match(a, b) for a, b in combinations(set(calls.values()), 2)):
        return None
    ranks_of: Dict[Call, List[int]] = {}
    for rank in sorted(calls):
        ranks_of.setdefault(calls[rank], []).append(rank)
    listing = ", ".join((f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {ranks}") + " in "
                        + describe_call(call) for call, ranks in ranks_of.items())
    return (f"the ranks of {group.describe()} wait in different collectives at #{seq}: {listing}; "
            f"they can never match (run with PYCOLL_CHECK=1 to catch this before the call); "
            f"stopping the job")


def group_key(group: Any) -> int:
    """The same number on every member of ``group``: its id and ranks, hashed."""
    digest = hashlib.blake2b(repr((group.id, list(group.ranks))).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


class StallNotices:
    """This rank's notices to its peers, and theirs to it, on ``comm`` (the exit notices'
    private duplicate of the world communicator, so global ranks)."""

    def __init__(self, comm: Any):
        from mpi4py import MPI

        self._mpi = MPI
        self.comm = comm
        self.rank = comm.Get_rank()
        self._inbox = np.zeros(1, _RECORD)
        self._lock = threading.Lock()  # the watchdog thread updates, the exiting main thread stops
        self._request: Optional[Any] = self._post()
        self._told: Dict[int, Tuple[Any, List[int]]] = {}  # group key: (the call told, the peers told)
        self._heard: Dict[Tuple[int, int], Tuple[int, Call]] = {}  # (peer, group key): (seq, call)
        self._sending: List[Tuple[Any, Any]] = []  # (request, buffer) until each send completes

    def _post(self) -> Any:
        return self.comm.Irecv([self._inbox.view(np.uint8), self._mpi.BYTE], self._mpi.ANY_SOURCE, _TAG)

    def update(self, stalled: Sequence[Stalled]) -> Optional[Tuple[Any, str]]:
        """One look (the watchdog's, every tick): ``stalled`` holds this rank's waits past the
        notice delay. Tells the peers of new ones, withdraws ended ones, and returns (group,
        reason) when the members of a group wait in calls that can never match."""
        with self._lock:
            if self._request is None:  # stopped, at exit
                return None
            mine: Dict[int, Stalled] = {}  # group key: its oldest stalled wait
            for wait in stalled:
                group, call = wait[0], wait[1]
                if call.name in NUMBERED:
                    key = group_key(group)
                    if key not in mine or call.started < mine[key][1].started:
                        mine[key] = wait
            for key, (call, peers) in list(self._told.items()):
                if key not in mine or mine[key][1] is not call:
                    self._send(peers, _WITHDRAWN, key)
                    del self._told[key]
            for key, (group, call, blocking, _) in mine.items():
                if key not in self._told:
                    peers = [r for r in group.ranks if r != self.rank]
                    self._send(peers, _NOTICE, key, call.seq, call.name, blocking)
                    self._told[key] = (call, peers)
            self._sending = [(r, b) for r, b in self._sending if not r.Test()]
            if not mine:
                return None
            self._receive()
            for key, (group, call, blocking, still_waiting) in mine.items():
                reason = self._verdict(group, key, call.seq, (call.name, blocking))
                if reason is not None and still_waiting():
                    return group, reason
            return None

    def _send(self, peers: List[int], kind: int, key: int, seq: int = 0, name: str = "",
              blocking: int = 0) -> None:
        record = np.array([(self.rank, kind, key, seq, blocking, name.encode())], _RECORD)
        for peer in peers:
            self._sending.append((self.comm.Isend([record.view(np.uint8), self._mpi.BYTE], peer, _TAG),
                                  record))

    def _receive(self) -> None:
        while self._request.Test():
            record = self._inbox[0]
            where = (int(record["sender"]), int(record["group"]))
            if record["kind"] == _NOTICE:
                self._heard[where] = (int(record["seq"]), (record["name"].decode(), int(record["blocking"])))
            else:
                self._heard.pop(where, None)
            self._request = self._post()

    def _verdict(self, group: Any, key: int, seq: int, mine: Call) -> Optional[str]:
        """The reason to end the job when every other member of ``group`` has told of a wait at
        #``seq`` too and two of the calls can never match."""
        calls = {self.rank: mine}
        for peer in group.ranks:
            if peer != self.rank:
                heard = self._heard.get((peer, key))
                if heard is None or heard[0] != seq:
                    return None
                calls[peer] = heard[1]
        return mismatch_text(group, seq, calls)

    def stop(self) -> None:
        """At exit (the exit notices call it while MPI still runs): take back the receive still
        posted, and tell nothing more."""
        with self._lock:
            if self._request is not None:
                self._request.Cancel()
                self._request.Wait()
                self._request = None
