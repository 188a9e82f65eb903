"""The peer of each recent point-to-point call, and the root of each recent rooted collective,
for the stall notices.

The watchdog sees a wait by its group, name and sequence number only (``send``/``recv`` are
numbered on the group like collectives). To tell whether two ranks' point-to-point waits can
match, the stall notices (:mod:`stall_notices`) also need the peer; to tell two ranks in one
broadcast, reduce, gather or scatter with different roots (which can never match), the root:
each such call notes it here as it starts, one dict entry per call, and the watchdog thread
looks a stalled wait up. Only the latest ``_LIMIT`` calls are kept: a wait on an older call has
no known peer, and a wait without one leads to no verdict that needs it.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

_LIMIT = 4096
_peers: Dict[Tuple[int, int], int] = {}  # (group id, sequence number): the peer's (root's) global rank


def note(group: Any, peer: int) -> None:
    """Call ``group.seq`` on ``group`` (a ``send`` or ``recv``, or a rooted collective, starting)
    has global rank ``peer`` on its other side (as its root)."""
    _peers[(group.id, group.seq)] = peer
    if len(_peers) > _LIMIT:
        del _peers[next(iter(_peers))]  # the oldest (only the main thread writes)


def peer_of_call(group: Any, seq: int) -> Optional[int]:
    """The global rank on the other side of call #``seq`` on ``group`` (its root), if known."""
    return _peers.get((group.id, seq))
