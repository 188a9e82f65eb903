"""Checks only one rank can make, shared before anything moves.

A rooted call's list (``scatter``'s ``tensor_list`` on the source, ``gather``'s ``gather_list``
on the destination, the objects of ``scatter_object_list`` and ``broadcast_object_list``) exists
on the root alone. Were the root to refuse it by itself, the other ranks would sit in the
collective until ``PYCOLL_TIMEOUT``. So the root's verdict is shared first (one small broadcast,
or for scatter the small all-gather in which the ranks also compare their roots, :mod:`agreement`;
the reason follows in a broadcast when it refuses), and every rank raises the same error: the
job goes on, nothing having been sent.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from pycoll.distributed import agreement
from pycoll.distributed._failure import call_failed
from pycoll.distributed.watchdog import watchdog

_KINDS = {"TypeError": TypeError, "ValueError": ValueError}


def shared(group: Any, fn: str, root: int, problem: Optional[Exception], arg: Optional[str] = None,
           received: Any = None) -> None:
    """Every rank learns whether the root (a group rank) refused call ``fn``: the root passes
    its ``problem`` (None: none), and on a refusal every rank raises it. With ``arg`` (the
    root's argument, for a call that MPI completes with different roots: scatter) the ranks
    compare their roots in it, and the dtype and size of the arrays they receive into
    (``received``), and where they differ all raise a ValueError naming each one's; without,
    the root broadcasts it (gather's different roots stall, which the stall notices name; the
    object collectives compare their ``src`` before)."""
    backend, seq = group.engine, group.seq
    xp = backend.xp
    text = f"{type(problem).__name__}:{problem}".encode() if problem is not None else b""
    watchdog.name, watchdog.group = fn, group
    try:
        if arg is not None:
            signed = agreement.signature(received) if received is not None else agreement.UNSIGNED
            size = agreement.agreed(group, fn, arg, root, len(text), signed)[root][0]
        else:
            try:
                head = xp.asarray(np.array([len(text)], np.int64))
                backend.broadcast(head, root, True, seq)
                size = int(head.tolist()[0])
            except Exception as exc:
                raise call_failed(fn, seq, group, exc) from exc
        if size == 0:
            return
        try:
            body = xp.asarray(np.frombuffer(text, np.uint8)) if group.rank == root else xp.empty(size, np.uint8)
            backend.broadcast(body, root, True, seq)
            received = np.asarray(body.tolist(), np.uint8).tobytes().decode(errors="replace")
        except Exception as exc:
            raise call_failed(fn, seq, group, exc) from exc
    finally:
        watchdog.group = None
    if problem is not None:
        raise problem
    kind, _, message = received.partition(":")
    raise _KINDS.get(kind, ValueError)(f"{message} (refused on rank {group.ranks[root]}, which "
                                       f"alone could check it; nothing was sent)")
