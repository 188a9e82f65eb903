"""Stall notices: ranks stuck in calls that can never match end the job in seconds.

Without ``PYCOLL_CHECK`` nothing compares the ranks' calls, so a rank that calls ``barrier``
while its peer calls ``all_reduce`` (or, on MPI, a blocking call against a peer's ``sync_op=False``
one: MPI never matches the two) leaves both waiting until ``PYCOLL_TIMEOUT``. So once one of a
rank's waits on a group (a blocking call, a task's ``wait()``, an engine's enqueued call) has
lasted the watchdog's notice delay, the rank tells the group's other members what it waits in:
the group, the call's sequence number on it, its name, a rooted call's root and, on engines that
are not stream-ordered (MPI), whether it blocks and how many collectives the rank has made on the
group with it. A wait that ends is withdrawn, so a rank holds only its peers' waits in progress.
When every member of a group is stalled in that group and their waits prove it stuck
(:mod:`stall_rules`: all at the same sequence number in calls that can never match or in one
rooted call given different roots, a peer at a number this rank refused while this rank waits in
a later call that can never match it, or on MPI members that have made different numbers of
collectives on the group),
the rank asks each of them to confirm what it waits in now, and the watchdog ends the job with
a message naming each rank's call (or the refusal) only when every answer still proves it.

Why the confirmation: a notice is withdrawn by the watchdog thread of the rank that made it, on a
later tick. A rank that leaves the call and at once holds the interpreter's lock in one long C call
(sorting a large list, say) cannot run that thread, so its notice outlives its wait; with the
numbering shifted by point-to-point traffic (below) a peer's later collective can then carry the
stale notice's number. A rank stuck in a collective waits inside the engine, with the lock free,
so its watchdog thread answers at once; a rank that cannot answer gives no verdict.

Why every member and not any one peer: ``send``/``recv`` count in a group's sequence numbers on
the ranks that make them only, so on a group that also carries point-to-point traffic (a
pipeline's) two ranks at one number may be at different places of the program — one having
passed early a call that completes without its peers (a broadcast's root) while a third rank is
slow. When every member waits in the group's collectives, though, the earliest of those calls
has been made by all of them and would complete in a correct program; so the evidence holds
whatever the numbering. (On NCCL an engine's oldest unfinished call may be queued behind GPU
work rather than waiting for peers; a false conclusion there would still need point-to-point
traffic to line two different collectives up at one number.) Only the collectives a sequence
number names are told (:data:`stall_rules.NUMBERED`), and ``new_group``: point-to-point calls,
other set-up steps and the checks ``broadcast_object_list`` makes before numbering its
broadcasts are not.

A deadlock may also span groups or involve point-to-point calls (the world's ``all_reduce``
against a sub-group's, two ranks each in a ``send`` to the other, a collective against a
``send``), where no group has all its members in one call. So each rank also tells EVERY rank
the one wait its thread is blocked in (a :class:`job_deadlock.JobWait`: the group, number and
call, and for ``send``/``recv`` the peer, which :mod:`call_peers` keeps; none while it has other
tasks in flight, or on a stream-ordered engine, where the host does not block). When every rank
has told one and none of them can ever be matched (:func:`job_deadlock.deadlock_text`, whose
notes argue the rule), the rank asks every rank to confirm its wait, as above; with every answer
the wait told, it tells the others so and waits a moment for each to say it ends the job too
(with the same message, from the waits it holds, without asking again), so every rank writes the
message. These job-wide notices carry point-to-point calls and are read apart from the per-group
ones, whose numbering logic is the one above.

Groups are known by :func:`group_key`: their ranks and the order in which each rank made its
groups over those ranks (ids count each rank's own ``new_group`` calls and may differ between
ranks; on MPI the groups over one set of ranks pair up in their order of creation).

The messages travel on the private communicator of the exit notices (``exits``, a duplicate of
the world's, so they reach every rank), which owns this object. Only the watchdog thread sends
and polls, and only while a wait of this rank is stalled or one it told about has ended: the
collectives' path pays nothing, and ``send``/``recv`` one dict entry for their peer.
"""
from __future__ import annotations

import hashlib
import itertools
import os
import sys
import threading
import time
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Set, Tuple

import numpy as np

from pycoll.distributed.job_deadlock import P2P, JobWait, deadlock_text
from pycoll.distributed.call_peers import peer_of_call
from pycoll.distributed.stall_rules import NUMBERED, ROOTED, Wait, group_verdict

_TAG = 92  # the exit notices use 91
_NOTICE, _WITHDRAWN, _QUERY, _ANSWER = 1, 2, 3, 4  # a group's waits, to its members
_JOB_NOTICE, _JOB_WITHDRAWN, _JOB_QUERY, _JOB_ANSWER, _CONCLUDED = 5, 6, 7, 8, 9  # to every rank
_NONE = -1  # an answer's sequence number when the rank waits in nothing numbered on the group
_REQUERY_S = 2.0  # a confirmation not complete by then is asked again (a peer may be busy)
_CONCLUDE_WAIT_S = 1.0  # how long a rank that found a job-wide deadlock waits for the peers to say so
_RECORD = np.dtype([("sender", "<i8"), ("kind", "<i8"), ("group", "<i8"), ("seq", "<i8"),
                    ("blocking", "<i8"), ("nonce", "<i8"), ("name", "S40"), ("peer", "<i8"),
                    ("size", "<i8"), ("ranks", "<i8"), ("where", "S96"), ("serial", "<i8"),
                    ("made", "<i8"), ("site", "S120")])

_PYCOLL_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # pycoll's own frames
Stalled = Tuple[Any, Any, int, Callable[[], bool]]  # group, call (name, seq, started), blocking, still waiting


def _hash(value: Any) -> int:
    digest = hashlib.blake2b(repr(value).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


def group_key(group: Any, live: Iterable[Any]) -> int:
    """The same number on every member of ``group``: its ranks and how many of this rank's
    ``live`` groups over the same ranks it made before, hashed. Not its id: ids count each
    rank's own ``new_group`` calls (on MPI a sub-group is made by its members alone), while
    the groups over one set of ranks pair up in the order each rank made them."""
    made_before = sum(1 for g in live if g.id < group.id and g.ranks == group.ranks)
    return _hash((list(group.ranks), made_before))


def job_wait(host: Optional[Stalled], others: int, live: Sequence[Any]) -> Optional[JobWait]:
    """What this rank tells every rank of its ``host`` wait (the blocking call or task's wait
    past the notice delay), or None: when it has ``others`` tasks in flight besides, runs on a
    stream-ordered engine (the host is then not blocked), or waits in neither a numbered
    collective nor a point-to-point call with a known peer."""
    if host is None or others or host[2] < 0:
        return None
    group, call, blocking = host[0], host[1], host[2]
    peer = -1
    if call.name in P2P:
        peer = peer_of_call(group, call.seq)
        if peer is None:
            return None
    elif call.name not in NUMBERED:
        return None
    return JobWait(group_key(group, live), group.nranks, _hash(list(group.ranks)), call.seq,
                   call.name, blocking, peer, group.describe()[:96], call.serial, waiting_line())


def waiting_line() -> str:
    """Where the main thread waits, as ``script.py:LINE (in function)``: the frame that called
    into pycoll (outside the frames of pycoll and what it calls; '' where there is none). Read
    from the watchdog's thread once a wait has stalled: the calls themselves pay nothing for it."""
    frame = sys._current_frames().get(threading.main_thread().ident)
    inside = False
    while frame is not None:
        ours = frame.f_code.co_filename.startswith(_PYCOLL_DIR)
        if inside and not ours:
            return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno} (in {frame.f_code.co_name})"[:120]
        inside = inside or ours
        frame = frame.f_back
    return ""


def where_they_wait(waits: Dict[int, Any]) -> str:
    """``; where the ranks wait: rank 0 at train.py:12 (in main), rank 1 at ...`` for the
    ``waits`` (global rank: a Wait or JobWait) whose line is known, '' for none."""
    known = [f"rank {rank} at {waits[rank].site}" for rank in sorted(waits) if waits[rank].site]
    return f"; where the ranks wait: {', '.join(known)}" if known else ""


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
        self._heard: Dict[Tuple[int, int], Wait] = {}  # (peer, group key): its wait
        self._sending: List[Tuple[Any, Any]] = []  # (request, buffer) until each send completes
        self._asked: List[Tuple[int, int, int]] = []  # queries to answer: (asker, group key, nonce)
        self._asking: Dict[int, Tuple[int, int, float]] = {}  # group key: (nonce, seq, when) of my query
        # (nonce, peer): the Wait answering a group's query, the JobWait (False: none) a job's
        self._answers: Dict[Tuple[int, int], Any] = {}
        self._nonces = itertools.count(1)
        self.nranks = comm.Get_size()
        self._everyone = [r for r in range(self.nranks) if r != self.rank]
        self._told_job: Optional[JobWait] = None  # this rank's wait, as told to every rank
        self._heard_job: Dict[int, JobWait] = {}  # peer: its wait, as told
        self._job_asked: List[Tuple[int, int]] = []  # job queries to answer: (asker, nonce)
        self._job_asking: Optional[Tuple[int, Dict[int, JobWait], float]] = None  # nonce, waits, when
        self._concluded: Set[int] = set()  # the peers that end the job over a job-wide deadlock

    def _post(self) -> Any:
        return self.comm.Irecv([self._inbox.view(np.uint8), self._mpi.BYTE], self._mpi.ANY_SOURCE, _TAG)

    def update(self, stalled: Sequence[Stalled], host: Optional[Stalled] = None, others: int = 0,
               live: Sequence[Any] = ()) -> Optional[Tuple[Any, str]]:
        """One look (the watchdog's, every tick): ``stalled`` holds this rank's waits past the
        notice delay, ``host`` the one its thread is blocked in (if among them), ``others`` how
        many tasks it has in flight besides, ``live`` its groups. Tells the peers of new waits,
        withdraws ended ones, and returns (group, reason) when the members of a group wait in
        calls that can never match, or no wait of the job can ever complete (``job_deadlock``)."""
        with self._lock:
            if self._request is None:  # stopped, at exit
                return None
            mine: Dict[int, Stalled] = {}  # group key: its oldest stalled wait
            for wait in stalled:
                group, call = wait[0], wait[1]
                if call.name in NUMBERED:
                    key = group_key(group, live)
                    if key not in mine or call.started < mine[key][1].started:
                        mine[key] = wait
            for key, (call, peers) in list(self._told.items()):
                if key not in mine or mine[key][1] is not call:
                    self._send(peers, _WITHDRAWN, key)
                    del self._told[key]
            for key, (group, call, blocking, _) in mine.items():
                if key not in self._told:
                    peers = [r for r in group.ranks if r != self.rank]
                    self._send_wait(peers, _NOTICE, key, _wait_of(group, call, blocking))
                    self._told[key] = (call, peers)
            job = job_wait(host, others, live) if self.nranks > 1 else None
            if job != self._told_job:
                if self._told_job is not None:
                    self._send(self._everyone, _JOB_WITHDRAWN, 0)
                if job is not None:
                    self._send_job(self._everyone, _JOB_NOTICE, job)
                self._told_job = job
            self._sending = [(r, b) for r, b in self._sending if not r.Test()]
            if not mine and job is None:
                return None
            self._receive()
            self._answer(mine)
            for asker, nonce in self._job_asked:  # this rank's wait now, or none (key 0)
                if job is not None and host is not None and host[3]():
                    self._send_job([asker], _JOB_ANSWER, job, nonce)
                else:
                    self._send([asker], _JOB_ANSWER, 0, nonce=nonce)
            self._job_asked = []
            for key, (group, call, blocking, still_waiting) in mine.items():
                wait = _wait_of(group, call, blocking)
                reason = self._verdict(group, key, wait)
                if reason is not None and self._confirmed(group, key, wait) and still_waiting():
                    return group, reason
            if job is not None and host is not None:
                reason = self._job_verdict(job, live)
                if reason is not None and host[3]():
                    return host[0], reason
            return None

    def _job_verdict(self, mine: JobWait, live: Sequence[Any]) -> Optional[str]:
        """The reason to end the job when every rank has told a wait and none can ever complete,
        once every rank has confirmed its wait (or a peer has, and says so); it names the peers'
        waits in calls this rank refused (``Group.refused`` of its ``live`` groups)."""
        waits = {**self._heard_job, self.rank: mine}

        def refused(key: int, seq: int) -> Optional[str]:
            for g in live:
                if g.rank >= 0 and group_key(g, live) == key:
                    return g.refused.get(seq)
            return None

        reason = deadlock_text(waits, self.nranks, self.rank, refused)
        if reason is not None:
            reason += where_they_wait(waits)
        if reason is None:
            if self._job_asking is not None:
                self._forget(self._job_asking[0])
                self._job_asking = None
            return None
        if self._concluded:  # a peer has confirmed it: say so too, and end the job with it
            self._send(self._everyone, _CONCLUDED, 0)
            return reason
        asked = self._job_asking
        if asked is not None and asked[1] == waits:
            answers = [self._answers.get((asked[0], peer)) for peer in self._everyone]
            if all(a is not None for a in answers):
                self._forget(asked[0])
                self._job_asking = None
                if all(answer == waits[peer] for peer, answer in zip(self._everyone, answers)):
                    self._send(self._everyone, _CONCLUDED, 0)  # the peers need not ask again
                    self._await_peers()
                    return reason
                return None  # some rank waits elsewhere now: no verdict from this query
            if time.monotonic() - asked[2] < _REQUERY_S:
                return None
        if asked is not None:
            self._forget(asked[0])
        nonce = next(self._nonces)
        self._job_asking = (nonce, waits, time.monotonic())
        self._send(self._everyone, _JOB_QUERY, 0, nonce=nonce)
        return None

    def _await_peers(self) -> None:
        """Wait (at most ``_CONCLUDE_WAIT_S``) until every peer says it ends the job too, so that
        each rank writes the message before the first to end it takes the job down."""
        deadline = time.monotonic() + _CONCLUDE_WAIT_S
        while not self._concluded.issuperset(self._everyone) and time.monotonic() < deadline:
            time.sleep(0.01)
            self._receive()

    def _answer(self, mine: Dict[int, Stalled]) -> None:
        """Answer the peers' queries with this rank's wait on their group now (or none)."""
        for asker, key, nonce in self._asked:
            wait = mine.get(key)
            if wait is not None and wait[3]():
                self._send_wait([asker], _ANSWER, key, _wait_of(wait[0], wait[1], wait[2]), nonce)
            else:
                self._send([asker], _ANSWER, key, _NONE, nonce=nonce)
        self._asked = []

    def _confirmed(self, group: Any, key: int, mine: Wait) -> bool:
        """Whether every other member of ``group`` has answered this rank's latest query with a
        wait that, with ``mine``, still proves the group stuck (:func:`group_verdict`); asks
        (again) when no query is out for ``mine``'s number or the last one is old."""
        peers = [r for r in group.ranks if r != self.rank]
        seq = mine[0]
        asked = self._asking.get(key)
        if asked is not None and asked[1] == seq:
            nonce = asked[0]
            answers = [self._answers.get((nonce, peer)) for peer in peers]
            if all(a is not None for a in answers):
                waits = {self.rank: mine, **{p: a for p, a in zip(peers, answers) if a.seq != _NONE}}
                if group_verdict(group, self.rank, waits, group.refused) is not None:
                    return True
                self._forget(nonce)  # some member waits elsewhere now: no verdict from this query
                del self._asking[key]
                return False
            if time.monotonic() - asked[2] < _REQUERY_S:
                return False
            self._forget(nonce)
        nonce = next(self._nonces)
        self._asking[key] = (nonce, seq, time.monotonic())
        self._send(peers, _QUERY, key, seq, nonce=nonce)
        return False

    def _forget(self, nonce: int) -> None:
        self._answers = {k: v for k, v in self._answers.items() if k[0] != nonce}

    def _send_job(self, peers: List[int], kind: int, wait: JobWait, nonce: int = 0) -> None:
        self._send(peers, kind, wait.key, wait.seq, wait.name, wait.blocking, nonce, wait.peer,
                   (wait.size, wait.ranks_hash, wait.where.encode(), wait.serial), site=wait.site)

    def _send_wait(self, peers: List[int], kind: int, key: int, wait: Wait, nonce: int = 0) -> None:
        self._send(peers, kind, key, wait.seq, wait.call[0], wait.call[1], nonce, wait.root, made=wait.made,
                   site=wait.site)

    def _send(self, peers: List[int], kind: int, key: int, seq: int = 0, name: str = "",
              blocking: int = 0, nonce: int = 0, peer: int = -1,
              job: Tuple[int, int, bytes, int] = (0, 0, b"", 0), made: int = -1, site: str = "") -> None:
        record = np.array([(self.rank, kind, key, seq, blocking, nonce, name.encode(), peer, *job, made,
                            site.encode(errors="replace")[:120])], _RECORD)
        for peer in peers:
            self._sending.append((self.comm.Isend([record.view(np.uint8), self._mpi.BYTE], peer, _TAG),
                                  record))

    def _receive(self) -> None:
        while self._request.Test():
            record = self._inbox[0]
            sender, kind, key = int(record["sender"]), int(record["kind"]), int(record["group"])
            call = (record["name"].decode(), int(record["blocking"]))
            wait = Wait(int(record["seq"]), call, int(record["made"]), int(record["peer"]),
                        record["site"].decode(errors="replace"))
            if kind == _NOTICE:
                self._heard[(sender, key)] = wait
            elif kind == _WITHDRAWN:
                self._heard.pop((sender, key), None)
            elif kind == _QUERY:
                self._asked.append((sender, key, int(record["nonce"])))
            elif kind == _ANSWER:
                if any(asked[0] == int(record["nonce"]) for asked in self._asking.values()):
                    self._answers[(int(record["nonce"]), sender)] = wait
            elif kind == _JOB_NOTICE:
                self._heard_job[sender] = _job_of(record)
            elif kind == _JOB_WITHDRAWN:
                self._heard_job.pop(sender, None)
            elif kind == _JOB_QUERY:
                self._job_asked.append((sender, int(record["nonce"])))
            elif kind == _JOB_ANSWER:
                if self._job_asking is not None and self._job_asking[0] == int(record["nonce"]):
                    self._answers[(int(record["nonce"]), sender)] = _job_of(record) if key else False
            elif kind == _CONCLUDED:
                self._concluded.add(sender)
            self._request = self._post()

    def _verdict(self, group: Any, key: int, mine: Wait) -> Optional[str]:
        """The reason to end the job when every other member of ``group`` has told of a wait too
        and, with this rank's (``mine``), they can never complete (:func:`group_verdict`)."""
        waits = {self.rank: mine}
        for peer in group.ranks:
            if peer != self.rank:
                heard = self._heard.get((peer, key))
                if heard is None:
                    return None
                waits[peer] = heard
        reason = group_verdict(group, self.rank, waits, group.refused)
        return None if reason is None else reason + where_they_wait(waits)

    def stop(self) -> None:
        """At exit (the exit notices call it while MPI still runs): take back the receive still
        posted, and tell nothing more."""
        with self._lock:
            if self._request is not None:
                self._request.Cancel()
                self._request.Wait()
                self._request = None


def _wait_of(group: Any, call: Any, blocking: int) -> Wait:
    """This rank's ``call`` on ``group`` as told: the collectives made on the group with it (on
    MPI only: ``stall_rules``), and a rooted call's root where known."""
    root = peer_of_call(group, call.seq) if call.name in ROOTED else None
    return Wait(call.seq, (call.name, blocking), call.made if blocking >= 0 else -1,
                -1 if root is None else root, waiting_line())


def _job_of(record: Any) -> JobWait:
    return JobWait(int(record["group"]), int(record["size"]), int(record["ranks"]), int(record["seq"]),
                   record["name"].decode(), int(record["blocking"]), int(record["peer"]),
                   record["where"].decode(errors="replace"), int(record["serial"]),
                   record["site"].decode(errors="replace"))
