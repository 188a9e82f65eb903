"""The job-wide rule of the stall notices: every rank waits, and no wait can ever be matched.

:mod:`stall_notices` ends the job when the members of ONE group wait at one sequence number in
calls that can never match. A deadlock may also span groups and point-to-point calls: rank 0 in
the world's ``all_reduce`` while rank 1 waits in a sub-group's, two ranks each in a ``send`` to
the other, a collective against a ``send``. No group then has all its members in one call, so
that rule sees nothing. This one looks at the whole job: each rank's wait (a :class:`JobWait`),
known to every rank.

Why it is sound. Suppose every rank of the job is blocked in one wait, all of them in progress
at one moment Q, and no rank has other work in flight (no task but the one it waits for: a rank
with more tells no wait). ``stall_notices`` makes sure of Q: once it has heard every rank's wait
it asks each rank (at Q), and each answers with the wait it told, by its serial number, so that
wait went on without a break from before Q until the answer. A rank posts nothing new until its
wait ends, so the first wait to end after Q would end through calls in progress at Q alone:

- a point-to-point wait needs its peer's matching call on the same group, a ``recv`` from this
  rank against a ``send`` to it (pycoll's ``recv`` always names its source: there is no
  any-source receive; and MPI never matches a point-to-point call with a collective);
- a collective needs every member's part, from a call on the group in progress or one the
  member has left. A member leaves a collective before the others only once its part has been
  handed over (a broadcast's root, a rank whose share of an all_reduce is done); the calls left
  then need nothing more from it and would complete within one transfer, not stay stalled for
  the notice delay.

So when (1) no group has all its members waiting in its collectives (at any sequence numbers:
point-to-point calls count in them on the ranks that make them only, so a number is no
position) and (2) no two point-to-point waits match, no wait can end first: nothing ever
completes. Where all members of a group wait in its collectives, the per-group rule of
``stall_notices`` decides. Limits: a single transfer lasting the notice delay (tens of GB)
could pass for a stall, and communication from threads other than the waiting one is not seen.

A ``new_group`` on the cpu backend is made by the new group's members alone, so a wait inside
it counts as a collective of the group in the making (its own key, number 0): every member
there completes it; a member there while another waits elsewhere is stuck like any collective.

Groups are told apart by :func:`stall_notices.group_key` (their ranks and the order in which
each rank made its groups over those ranks): group ids count each rank's own ``new_group``
calls, so the same group may carry other ids on other ranks, and each rank's call is named with
its own rank's name of the group.
"""
from __future__ import annotations

from typing import Callable, Dict, NamedTuple, Optional, Tuple

P2P = frozenset({"send", "recv"})
Call = Tuple[str, int]  # name, and blocking: 1, 0 for a task's wait, -1 on a stream-ordered engine


_NO_SYNC_OP = frozenset({"barrier", "new_group"})  # calls that take no sync_op


def describe_call(call: Call) -> str:
    """``all_reduce (sync_op=True)``; just the name where blocking is unknown or the call takes
    no ``sync_op`` (a barrier, new_group)."""
    name, blocking = call
    return name if blocking < 0 or name in _NO_SYNC_OP else f"{name} (sync_op={bool(blocking)})"


class JobWait(NamedTuple):
    """One rank's wait, as told to every rank: the group (``key``, ``size``, a hash of its
    ranks, and how the rank names it), the call's number and name, whether it blocks (1) or is
    a task's wait (0), for ``send``/``recv`` the peer's global rank (-1 for a collective), the
    rank's serial number of this wait (an answer naming it confirms the wait has gone on since it
    was told, without a break), and the line of the rank's script that waits (``site``)."""

    key: int
    size: int
    ranks_hash: int
    seq: int
    name: str
    blocking: int
    peer: int
    where: str
    serial: int = 0
    site: str = ""


def _matches(rank: int, wait: JobWait, waits: Dict[int, JobWait]) -> bool:
    """Whether ``rank``'s point-to-point ``wait`` has its match posted by its peer."""
    other = waits.get(wait.peer)
    return (other is not None and other.name in P2P and other.name != wait.name
            and other.key == wait.key and other.peer == rank)


def _describe(wait: JobWait) -> str:
    if wait.name == "new_group" and not wait.seq:  # the cpu backend's: its members make the group
        return f"new_group making {wait.where}"
    call = describe_call((wait.name, wait.blocking))
    side = "" if wait.peer < 0 else f" {'to' if wait.name == 'send' else 'from'} rank {wait.peer}"
    return f"{call} #{wait.seq}{side} on {wait.where}"


def deadlock_text(waits: Dict[int, JobWait], nranks: int, me: int = -1,
                  refused: Callable[[int, int], Optional[str]] = lambda key, seq: None) -> Optional[str]:
    """The reason to end the job when ``waits`` (global rank: its wait) holds all ``nranks``
    ranks and none of the waits can ever complete (the module notes), else None. ``refused``
    (group key, number) gives the error with which this rank (global rank ``me``) refused that
    call, if it did: the message then says so of each peer waiting in such a call."""
    if len(waits) < nranks:
        return None
    in_collectives: Dict[int, int] = {}  # group key: its members waiting in its collectives
    for wait in waits.values():
        if wait.name not in P2P:
            in_collectives[wait.key] = in_collectives.get(wait.key, 0) + 1
            if in_collectives[wait.key] >= wait.size:
                return None
    if any(wait.name in P2P and _matches(rank, wait, waits) for rank, wait in waits.items()):
        return None
    listing = ", ".join(f"rank {rank} in {_describe(waits[rank])}" for rank in sorted(waits))
    for rank in sorted(waits):
        wait = waits[rank]
        reason = refused(wait.key, wait.seq) if rank != me else None
        if reason is not None:
            listing += f"; rank {rank}'s {wait.name} #{wait.seq} is a call rank {me} refused ({reason})"
    same_ranks: Dict[int, set] = {}  # ranks' hash: the group keys of the waits on them
    for wait in waits.values():
        if wait.name != "new_group":  # a group in the making is no group made in another order
            same_ranks.setdefault(wait.ranks_hash, set()).add(wait.key)
    hint = ("; groups over the same ranks are different groups (ranks pair their groups over the "
            "same ranks in the order each made them, and group ids count each rank's own new_group "
            "calls)" if any(len(keys) > 1 for keys in same_ranks.values()) else "")
    return (f"every rank waits in a call that no other rank's call can ever match: {listing}{hint}; "
            f"stopping the job")
