"""The per-group rules of the stall notices: when the waits of one group's members prove that
the group can never go on.

:mod:`stall_notices` gathers, for a group, the wait of every member stalled in one of the
group's numbered calls (:data:`NUMBERED`) and asks :func:`group_verdict` whether they can ever
complete. Three rules answer yes:

- every member waits at one sequence number and two of their calls can never match
  (:func:`never_match`: other collectives, or on MPI a blocking call against a task), or are
  one rooted collective given different roots (:func:`root_text`);
- a member waits at a number this rank refused itself (bad input, raised before anything
  moved: :meth:`Group.note_refused`) while this rank, having gone on, waits in a later call of
  the group that can never match it (:func:`refusal_text`). Numbers alone would never line up
  here (the refusing rank is one call ahead), so without the record such a job waited for
  ``PYCOLL_TIMEOUT``;
- on MPI, the members have made different numbers of collectives on the group (``made``:
  :attr:`Group.collectives_made`, refused calls left out), or the same number in calls that can
  never match (:func:`position_text`): a rank made a collective its peers skip, or skipped one.

Why the second is as sound as the first: with every member stalled in the group's collectives,
each member's current call is the one its engine pairs with the others' (each rank's earlier
calls on the group are complete, and a collective completes only with every member's part), so
two current calls that can never match stay stalled for good. The refused number is what names
the cause: the refusing rank gave no part to the call its peers wait in. (Point-to-point calls
count in a group's numbers on the ranks making them only, so on a group that also carries them
the peer's number may coincide with another refused call; the verdict holds, its naming of the
refusal is then a coincidence of numbers. A rank refusing a call and then waiting elsewhere, on
another group or in a point-to-point call, is the job-wide rule's case: :mod:`job_deadlock`.)

Why the third: MPI pairs the collectives on a communicator in the order each member makes them,
whatever the calls are, so a member's current call pairs with each other member's call at the
same count made. Members at one count wait in calls paired with each other, which can complete
only if they match. Where counts differ, the members at the highest count wait for calls the
others have not made (and will not, being blocked), and those at the lowest wait in a call
paired with calls the others have left: a member leaves a collective only once its part has
been handed over, so a correct pairing would complete within one transfer, not stay stalled for
the notice delay. Only on MPI: a stream-ordered engine's oldest unfinished call may be queued
behind GPU work while a peer, its tiny broadcast done, went on (its counts prove nothing there).
"""
from __future__ import annotations

from itertools import combinations
from typing import Any, Dict, List, Mapping, NamedTuple, Optional

from pycoll.distributed.job_deadlock import Call, describe_call

NUMBERED = frozenset({"all_reduce", "reduce", "broadcast", "all_gather", "gather", "scatter",
                      "reduce_scatter", "alltoall", "alltoall_single", "alltoallv", "barrier",
                      "new_group"})
"""The calls a wait is told for: collectives numbered before they run, whose every step is
watched under their own name and number (the NCCL engine's ``alltoallv`` is alltoall's data),
and ``new_group``: on nccl a collective of the world numbered on it, on the cpu backend a call
of the new group's members alone, watched as #0 of the group being made."""
_SAME_CALL = {"alltoall_single": "alltoall", "alltoallv": "alltoall"}  # one engine call underneath
_ONE_STEP = frozenset({"all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter"})
"""Calls whose ``sync_op`` decides their only engine call (gather and scatter share a blocking
verdict first, alltoall its sizes: there a blocking wait and a task may be one call)."""
_STOPPED = "they can never match (run with PYCOLL_CHECK=1 to catch this before the call); stopping the job"
ROOTED = frozenset({"broadcast", "reduce", "gather", "scatter"})  # the calls told with their root


class Wait(NamedTuple):
    """A member's wait on the group: the call's sequence number, the call, on MPI the
    collectives the member has made on the group with it (``Group.collectives_made``; -1 where
    unknown: a stream-ordered engine's), a rooted call's root (global rank; -1 unknown), and the
    line of the member's script that waits (``site``)."""

    seq: int
    call: Call
    made: int = -1
    root: int = -1
    site: str = ""


def never_match(a: Call, b: Call) -> bool:
    """Whether calls ``a`` and ``b``, each its rank's current call on one group, can never
    match: other collectives, or on MPI a blocking call against a task."""
    (name_a, blocking_a), (name_b, blocking_b) = a, b
    if _SAME_CALL.get(name_a, name_a) != _SAME_CALL.get(name_b, name_b):
        # a stream-ordered engine records a rooted call's verdict as a broadcast under its number
        return not (min(blocking_a, blocking_b) < 0 and "broadcast" in (name_a, name_b))
    return name_a in _ONE_STEP and min(blocking_a, blocking_b) >= 0 and blocking_a != blocking_b


def _listing(calls: Dict[int, Call]) -> str:
    """``ranks [0, 2] in all_reduce (sync_op=True), rank 1 in barrier``: the ranks by call."""
    ranks_of: Dict[Call, List[int]] = {}
    for rank in sorted(calls):
        ranks_of.setdefault(calls[rank], []).append(rank)
    return ", ".join((f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {ranks}") + " in "
                     + describe_call(call) for call, ranks in ranks_of.items())


def mismatch_text(group: Any, seq: int, calls: Dict[int, Call]) -> Optional[str]:
    """The reason to end the job when two of ``calls`` (global rank: call, every member of
    ``group`` at #``seq``) can never match, else None."""
    if not any(never_match(a, b) for a, b in combinations(set(calls.values()), 2)):
        return None
    return (f"the ranks of {group.describe()} wait in different collectives at #{seq}: "
            f"{_listing(calls)}; {_STOPPED}")


def root_text(group: Any, seq: int, waits: Dict[int, Wait]) -> Optional[str]:
    """The reason to end the job when every member (``waits``, global rank: wait) waits at #``seq``
    in one rooted collective, given different roots (known for all), else None."""
    names = {wait.call[0] for wait in waits.values()}
    roots = {wait.root for wait in waits.values()}
    if len(names) != 1 or not names <= ROOTED or len(roots) == 1 or min(roots) < 0:
        return None
    listing = ", ".join(f"rank {rank} with root {waits[rank].root}" for rank in sorted(waits))
    return (f"the ranks of {group.describe()} wait in {names.pop()} #{seq} given different roots: "
            f"{listing}; {_STOPPED}")


def refusal_text(group: Any, me: int, waits: Dict[int, Wait], refused: Mapping[int, str]) -> Optional[str]:
    """The reason to end the job when a member waits at a number this rank (global rank ``me``)
    refused, ``refused`` (its ``Group.refused``), while this rank's own wait in ``waits`` (global
    rank: wait, every member) is a later call that can never match it; else None."""
    seq, mine = waits[me].seq, waits[me].call
    stuck: Dict[int, Wait] = {}
    why: Dict[int, str] = {}
    for rank, wait in waits.items():
        reason = refused.get(wait.seq) if wait.seq < seq else None  # one read: the main thread may add
        if reason is not None and never_match(wait.call, mine):
            stuck[rank], why[wait.seq] = wait, reason
    if not stuck:
        return None
    first = min(wait.seq for wait in stuck.values())
    calls = {rank: wait.call for rank, wait in stuck.items() if wait.seq == first}
    ranks = sorted(calls)
    if len(set(calls.values())) == 1:
        who = (f"rank {ranks[0]} waits" if len(ranks) == 1 else f"ranks {ranks} wait") + " in " \
            + describe_call(calls[ranks[0]])
    else:
        who = f"{_listing(calls)} wait at"
    return (f"{who} #{first} on {group.describe()}, which rank {me} refused ({why[first]}); rank "
            f"{me} went on to {describe_call(mine)} #{seq}: {_STOPPED}")


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def position_text(group: Any, waits: Dict[int, Wait]) -> Optional[str]:
    """The reason to end the job when ``waits`` (global rank: wait, every member's), all on MPI,
    are calls at different counts of collectives made on ``group``, or at one count in calls that
    can never match (the module notes); else None."""
    if any(wait.call[1] < 0 or wait.made < 1 for wait in waits.values()):
        return None
    counts = {wait.made for wait in waits.values()}
    if len(counts) == 1:
        calls = {rank: wait.call for rank, wait in waits.items()}
        if not any(never_match(a, b) for a, b in combinations(set(calls.values()), 2)):
            return None
        return (f"the ranks of {group.describe()} wait in different collectives, each its "
                f"{_ordinal(counts.pop())} on the group: {_listing(calls)}; {_STOPPED}")
    listing = ", ".join(f"rank {rank} in {describe_call(waits[rank].call)} #{waits[rank].seq} (its "
                        f"{_ordinal(waits[rank].made)} collective on the group)" for rank in sorted(waits))
    return (f"the ranks of {group.describe()} wait in collectives after making different numbers of "
            f"collectives on it: {listing}; a rank made a collective its peers did not, or skipped one: "
            f"{_STOPPED}")


def group_verdict(group: Any, me: int, waits: Dict[int, Wait], refused: Mapping[int, str]) -> Optional[str]:
    """The reason to end the job when ``waits`` (global rank: its wait on ``group``, every
    member's, this rank ``me`` included) can never complete (the module notes), else None."""
    if len(waits) < group.nranks:
        return None
    numbers = {wait.seq for wait in waits.values()}
    if len(numbers) == 1:
        seq = numbers.pop()
        reason = (mismatch_text(group, seq, {rank: wait.call for rank, wait in waits.items()})
                  or root_text(group, seq, waits))
    else:
        reason = refusal_text(group, me, waits, refused)
    return reason if reason is not None else position_text(group, waits)
