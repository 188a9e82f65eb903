"""Refusal checks: a collective refused on some ranks only ends the job instead of shifting the
group's calls.

A rank refuses a collective over bad input before anything moves (a ``ValueError`` naming the
argument), and where every member gave the same bad input, every member refuses it and the job
goes on. But where one rank alone refuses (its own ``src``, ``op`` or buffer is wrong), its peers
have made the call, and those that did not need the refusing rank to finish it (a broadcast's
root, a reduce's senders: MPI sends small messages without waiting) go on at once. The refusing
rank's next call of the same kind then takes the data its peers sent to the refused one: wrong
values, silently, and every call after is paired with the wrong one.

So a rank that refuses collective number ``k`` on a group (``Group.collectives_begun``:
point-to-point calls are not counted, as only some ranks make them) asks every other member,
on the exit notices' private communicator, how it settled its call ``k``; each answers, once it
knows, REFUSED or MADE (:func:`settled_call`). The refusing rank waits for the answers up to
``_ASK_S``, answering its peers' questions meanwhile (when every rank refused, they ask each
other). Every answer REFUSED: the refusal is raised and the job goes on. An answer MADE (a
peer sent or waits): the job ends at once, naming the call, the refusal and the ranks that made
the call, before the refusing rank can take a wrong value. Answers not in by then are taken by
the watchdog thread, which also ends the job on a MADE, or when the peer asked left the job
without answering; this rank's peers answer through their own watchdog threads (one probe a
tick, ``serve``), so the collectives' path pays one attribute write (``Group.settled``).
``PYCOLL_CHECK=1`` compares every call beforehand, so these questions are not asked under it.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, Iterable, List, Optional, Set, Tuple

import numpy as np

from pycoll.distributed import _failure
from pycoll.distributed.stall_notices import group_key

_QUERY_TAG, _ANSWER_TAG = 93, 94  # the exit notices use 91, the stall notices 92
REFUSED, MADE = 1, 2
_ASK_S = 1.0  # how long a refusing rank waits for its peers' answers before it lets the watchdog wait
_POLL_S = 0.001


def settled_call(group: Any, number: int) -> Optional[int]:
    """How this rank settled collective ``number`` on ``group``: REFUSED, MADE, or None while it
    has not settled it (it has not reached it, or is checking its arguments). The counters are
    read before the refusals: a refusal is noted before the next call is counted."""
    begun, p2p, settled = group.seq, group.p2p_calls, group.settled
    collectives = begun - p2p
    if number in group.refused_collectives:
        return REFUSED
    if collectives > number or (collectives == number and settled == begun):
        return MADE
    return None


class RefusalChecks:
    """The questions and answers on ``comm`` (the exit notices' private duplicate of the world,
    so its ranks are global ranks); the main thread asks (:meth:`confirm`), the watchdog thread
    answers and takes late answers (:meth:`serve`)."""

    def __init__(self, comm: Any):
        from mpi4py import MPI

        self._mpi = MPI
        self.comm = comm
        self.rank = comm.Get_rank()
        self._lock = threading.Lock()  # the main thread and the watchdog thread both receive
        self._sent: List[Tuple[Any, Any]] = []  # (request, buffer) until the send completes
        self._unanswered: List[Tuple[int, int, int]] = []  # (asker, group key, number) not settled here yet
        # (group key, number) -> the refusal asked about: group, call, error, answers so far, ranks asked
        self._asking: Dict[Tuple[int, int], Tuple[Any, str, str, Dict[int, int], List[int]]] = {}
        self._stopped = False  # at exit: MPI is about to be finalised

    def confirm(self, group: Any, call: str, error: str, live: Iterable[Any],
                exited: Callable[[], Set[int]]) -> None:
        """This rank refused ``call`` (its collective number ``group.collectives_begun``) over
        ``error``: return when every other member refused it too; end the job when one made it;
        else (answers not in within ``_ASK_S``) return and leave the question to the watchdog."""
        live = tuple(live)
        key, number = group_key(group, live), group.collectives_begun
        peers = [r for r in group.ranks if r != self.rank]
        with self._lock:
            self._asking[(key, number)] = (group, call, error, {}, peers)
            for peer in peers:
                self._send(peer, _QUERY_TAG, key, number, 0)
        deadline = time.monotonic() + _ASK_S
        while True:
            self.serve(live, exited)
            if (key, number) not in self._asking or time.monotonic() > deadline:
                return
            time.sleep(_POLL_S)

    def serve(self, live: Iterable[Any], exited: Callable[[], Set[int]]) -> None:
        """Answer the questions this rank can answer now, and take the answers that came."""
        live = tuple(live)
        with self._lock:
            if self._stopped:
                return
            self._sent = [(request, buffer) for request, buffer in self._sent if not request.Test()]
            status = self._mpi.Status()
            while self.comm.Iprobe(self._mpi.ANY_SOURCE, _QUERY_TAG, status):
                asker, key, number, _ = self._receive(status.Get_source(), _QUERY_TAG)
                self._unanswered.append((asker, key, number))
            while self.comm.Iprobe(self._mpi.ANY_SOURCE, _ANSWER_TAG, status):
                self._take(*self._receive(status.Get_source(), _ANSWER_TAG))
            self._unanswered = [question for question in self._unanswered if not self._answer(*question, live)]
            if self._asking:
                gone = exited()
                for (key, number), (group, call, error, answers, peers) in list(self._asking.items()):
                    silent = [r for r in peers if r in gone and r not in answers]
                    if silent:
                        self._end(group, call, number, error, silent, "left the job without saying how it settled it")

    def stop(self) -> None:
        """At exit (the exit notices call it while MPI still runs): no more probing, so that the
        watchdog thread never calls MPI once it is finalised."""
        with self._lock:
            self._stopped = True

    def _answer(self, asker: int, key: int, number: int, live: Tuple[Any, ...]) -> bool:
        """Answer ``asker``'s question if this rank has settled the call; False if not yet. A
        group this rank does not hold (not a member, destroyed) is never answered."""
        group = next((g for g in live if g.engine is not None and group_key(g, live) == key), None)
        verdict = None if group is None else settled_call(group, number)
        if verdict is None:
            return group is None
        self._send(asker, _ANSWER_TAG, key, number, verdict)
        return True

    def _take(self, sender: int, key: int, number: int, verdict: int) -> None:
        asking = self._asking.get((key, number))
        if asking is None:
            return
        group, call, error, answers, peers = asking
        answers[sender] = verdict
        made = sorted(r for r, v in answers.items() if v == MADE)
        if made:
            self._end(group, call, number, error, made, "made it")
        if len(answers) == len(peers):
            del self._asking[(key, number)]  # every member refused it: the group stays in step

    def _end(self, group: Any, call: str, number: int, error: str, ranks: List[int], what: str) -> None:
        _failure.abort_job(1, f"pycoll.CollectiveError: rank {self.rank} refused {call} #{number} on "
                              f"{group.describe()} ({error}), and rank(s) {ranks} {what}: the ranks' calls "
                              f"on the group are out of step, and their next calls would exchange the wrong "
                              f"data; give every rank the same arguments (PYCOLL_CHECK=1 compares them before "
                              f"each call); stopping the job")

    def _send(self, peer: int, tag: int, key: int, number: int, verdict: int) -> None:
        buffer = np.array([self.rank, key, number, verdict], np.int64)
        self._sent.append((self.comm.Isend([buffer, self._mpi.INT64_T], peer, tag), buffer))

    def _receive(self, source: int, tag: int) -> Tuple[int, int, int, int]:
        buffer = np.empty(4, np.int64)
        self.comm.Recv([buffer, self._mpi.INT64_T], source, tag)
        sender, key, number, verdict = (int(v) for v in buffer)
        return sender, key, number, verdict
