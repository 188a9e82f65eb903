"""``PYCOLL_DEBUG=1``: before each collective the ranks compare what they are about to call.

Each rank describes its call (collective, sequence number, dtype, shape, op, root, group) in a
fixed-size fingerprint and the group gathers them through its engine directly (so the check
itself is not a checked collective). If they differ, every rank raises a CollectiveError that
lists what each rank called, instead of hanging or mixing data. With the variable unset the
check is one boolean test per collective.
"""
from __future__ import annotations

import os
from typing import Any, Optional

import numpy as np

from pycoll._errors import CollectiveError
from pycoll.backends.reduce_op import is_reduce_op, op_name

enabled = os.environ.get("PYCOLL_DEBUG", "") not in ("", "0")
_WIDTH = 192  # bytes per fingerprint


def _describe(fn: str, seq: int, arr: Any, op: Any, root: Optional[int]) -> str:
    text = f"{fn} #{seq} {arr.dtype}{list(arr.shape)}"
    if op is not None:
        text += " op=" + (op_name(op) if is_reduce_op(op) else repr(op))
    if root is not None:
        text += f" root={root}"
    return text


def check(group: Any, fn: str, arr: Any, op: Any = None, root: Optional[int] = None) -> None:
    """Compare this rank's coming call with the other ranks'; raise on any difference."""
    mine = _describe(fn, group.seq + 1, arr, op, root).encode()[:_WIDTH]
    xp = group.backend.xp
    fingerprint = np.zeros(_WIDTH, np.uint8)
    fingerprint[:len(mine)] = np.frombuffer(mine, np.uint8)
    gathered = xp.empty(_WIDTH * group.nranks, np.uint8)
    group.backend.all_gather(gathered, xp.asarray(fingerprint), True)
    rows = np.asarray(gathered.tolist(), np.uint8).reshape(group.nranks, _WIDTH)
    calls = [bytes(row).rstrip(b"\0").decode(errors="replace") for row in rows]
    if len(set(calls)) > 1:
        listing = "; ".join(f"rank {r}: {c}" for r, c in zip(group.ranks, calls))
        raise CollectiveError(f"PYCOLL_DEBUG: the ranks of {group.describe()} called different "
                              f"collectives: {listing}")
