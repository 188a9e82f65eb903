"""``PYCOLL_CHECK=1``: before each collective the ranks compare what they are about to call.

Without it, ranks that call different collectives, or the same one with a different dtype, size,
op or root, can receive wrong data silently, or fail deep inside MPI. With it, each rank
describes its coming call — collective, sequence number (refused calls count, so a call one
rank refused shows up), dtype, shape, op, root, and on MPI whether it blocks (MPI never matches
a blocking collective with a non-blocking one) — hashes the description (once per kind of call,
the sequence number mixed in arithmetically), and the group all-reduces ``[hash, -hash]`` with MAX: every rank then sees the largest and smallest hash, so
every rank agrees whether they all match. When they do not, the full descriptions are gathered
and every rank raises a :class:`pycoll.CollectiveError` listing each rank's call. It costs one
small all-reduce per collective (bench/check_cost.py measures it), which is why it is opt-in.
``PYCOLL_DEBUG=1`` turns it on too, and also logs every collective at DEBUG level.

The check runs under the watchdog, inside the collective's own watch: a peer that never comes,
or has left, ends the job as the collective itself would.
"""
from __future__ import annotations

import hashlib
import os
from typing import Any, Dict, Optional, Tuple

import numpy as np

from pycoll._errors import CollectiveError
from pycoll._logging import logger
from pycoll.backends.reduce_op import ReduceOp, is_reduce_op, op_name
from pycoll.distributed._failure import call_failed


def _flag(name: str) -> bool:
    return os.environ.get(name, "") not in ("", "0")


debug = _flag("PYCOLL_DEBUG")
enabled = debug or _flag("PYCOLL_CHECK")
BARRIER_TOKEN = np.zeros(1, np.uint8)  # what a barrier stands for, in its description


def describe(fn: str, seq: int, arr: Any, op: Any = None, root: Optional[int] = None,
             blocking: Optional[bool] = None) -> str:
    """One call as the check compares it, e.g. ``all_reduce #3 float32[4] op=ReduceOp.SUM``."""
    text = f"{fn} #{seq} {arr.dtype}{list(arr.shape)}"
    if op is not None:
        text += " op=" + (op_name(op) if is_reduce_op(op) else repr(op))
    if root is not None:
        text += f" root={root}"
    if blocking is not None:
        text += " sync_op=True" if blocking else " sync_op=False"
    return text


def _digest(text: bytes) -> int:
    """63 bits of a hash of ``text`` (so that its negative fits an int64 too)."""
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little") >> 1


_MASK = (1 << 63) - 1
_SEQ_MIX = 0x9E3779B97F4A7C15 & _MASK  # odd: consecutive sequence numbers never share a digest
_digests: Dict[Tuple[Any, ...], int] = {}  # the digest of a call without its sequence number


def _call_digest(fn: str, seq: int, arr: Any, op: Any, root: Optional[int],
                 blocking: Optional[bool]) -> int:
    """The digest of a call: its description's (built once per kind of call) mixed with ``seq``."""
    key = (fn, arr.dtype, arr.shape, op, root, blocking)
    try:
        base = _digests[key]
    except KeyError:
        base = _digests[key] = _digest(describe(fn, 0, arr, op, root, blocking).encode())
    except TypeError:  # an unhashable op: rare, and refused by the engines anyway
        base = _digest(describe(fn, 0, arr, op, root, blocking).encode())
    return (base + seq * _SEQ_MIX) & _MASK


def compare(group: Any, fn: str, arr: Any, op: Any = None, root: Optional[int] = None,
            blocking: bool = True) -> None:
    """Compare this rank's coming call with the other ranks'; raise on any difference."""
    backend, seq = group.engine, group.seq
    blocking = None if backend.stream_ordered else blocking
    if debug:
        logger.debug("%s on %s", describe(fn, seq, arr, op, root, blocking), group.describe())
    try:
        if _all_agree(backend, _call_digest(fn, seq, arr, op, root, blocking), seq):
            return
        mine = describe(fn, seq, arr, op, root, blocking).encode()
        calls = _gather_texts(backend, mine, seq)
    except Exception as exc:
        raise call_failed(fn, seq, group, exc) from exc
    listing = "; ".join(f"rank {r}: {c}" for r, c in zip(group.ranks, calls))
    raise CollectiveError(f"PYCOLL_CHECK: the ranks of {group.describe()} called different "
                          f"collectives: {listing}")


def _all_agree(backend: Any, digest: int, seq: int) -> bool:
    """Whether every rank's ``digest`` equals this one: the largest and the smallest over the
    ranks are the same on every rank, so every rank reaches the same answer."""
    extremes = backend.xp.asarray(np.array([digest, -digest], np.int64))
    backend.all_reduce(extremes, backend.plan(extremes.dtype, ReduceOp.MAX), True, seq)
    return extremes.tolist() == [digest, -digest]


def _gather_texts(backend: Any, mine: bytes, seq: int) -> list:
    """Every rank's ``mine`` (any length), in rank order, through the engine directly."""
    xp = backend.xp
    lengths = xp.empty(backend.size, np.int64)
    backend.all_gather(lengths, xp.asarray(np.array([len(mine)], np.int64)), True, seq)
    lengths = [int(n) for n in lengths.tolist()]
    padded = np.zeros(max(lengths), np.uint8)
    padded[:len(mine)] = np.frombuffer(mine, np.uint8)
    rows = xp.empty(backend.size * len(padded), np.uint8)
    backend.all_gather(rows, xp.asarray(padded), True, seq)
    table = np.asarray(rows.tolist(), np.uint8).reshape(backend.size, len(padded))
    return [bytes(row[:n]).decode(errors="replace") for row, n in zip(table, lengths)]
