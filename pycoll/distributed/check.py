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

Point-to-point calls involve two ranks, not the group, so they are compared pairwise instead:
each send first sends a fixed-size descriptor of itself (:func:`p2p_descriptor`: the sender's
sequence number, dtype and shape) on a tag of its own, and the receiver compares it with its
buffer (:func:`p2p_difference`); see :mod:`pycoll.distributed.p2p`.
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


def array_text(arr: Any) -> str:
    """An array as the checks name it: ``float32[4]``."""
    return f"{arr.dtype}{list(arr.shape)}"


def describe(fn: str, seq: int, arr: Any, op: Any = None, root: Optional[int] = None,
             blocking: Optional[bool] = None) -> str:
    """One call as the check compares it, e.g. ``all_reduce #3 float32[4] op=ReduceOp.SUM``."""
    text = f"{fn} #{seq} {array_text(arr)}"
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
    """Compare this rank's coming call with the other ranks'; raise on any difference. The calls
    are numbered among the group's collectives alone (sends and receives, which only some ranks
    make, do not count)."""
    backend, seq = group.engine, group.seq - group.p2p_calls
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


# -- point to point -------------------------------------------------------------------------
_WORDS = 48  # int64 words of a descriptor: seq, nbytes, size, dtype digest, text length, text
_HEAD = 5
_TEXT_BYTES = 8 * (_WORDS - _HEAD)


class Sent:
    """What a descriptor says of the sender's call: its sequence number, bytes, elements, a
    digest of its dtype and its text (``float32[4]``, cut short past 344 bytes)."""

    __slots__ = ("seq", "nbytes", "size", "dtype_digest", "text")

    def __init__(self, seq: int, nbytes: int, size: int, dtype_digest: int, text: str):
        self.seq, self.nbytes, self.size = seq, nbytes, size
        self.dtype_digest, self.text = dtype_digest, text


def _dtype_digest(dtype: Any) -> int:
    return _digest(str(dtype).encode())


DESCRIPTOR_TAG = 8  # the tag of a send's descriptor (p2p's data messages carry another)


def p2p_descriptor(xp: Any, seq: int, arr: Any) -> Any:
    """The descriptor a send of ``arr`` (call number ``seq``) sends ahead of its data."""
    text = array_text(arr).encode()[:_TEXT_BYTES]
    words = np.zeros(_WORDS, np.int64)
    words[:_HEAD] = [seq, arr.nbytes, arr.size, _dtype_digest(arr.dtype), len(text)]
    words[_HEAD:].view(np.uint8)[:len(text)] = np.frombuffer(text, np.uint8)
    return xp.asarray(words)


def empty_descriptor(xp: Any) -> Any:
    """A buffer to receive a descriptor into."""
    return xp.zeros(_WORDS, np.int64)


def read_descriptor(descriptor: Any) -> Sent:
    """The sender's call, from a received descriptor (NumPy or CuPy)."""
    words = np.asarray(descriptor.tolist(), np.int64)
    seq, nbytes, size, digest, length = (int(w) for w in words[:_HEAD])
    text = words[_HEAD:].view(np.uint8)[:length].tobytes().decode(errors="replace")
    return Sent(seq, nbytes, size, digest, text)


def p2p_difference(sent: Sent, sender: int, fn: str, seq: int, receiver: int, arr: Any) -> Optional[str]:
    """None when ``arr`` takes what was sent (same dtype and number of elements: the shapes may
    differ, the elements arriving in C order), else both sides, e.g. ``send #2 on rank 0:
    float32[4]; recv #2 on rank 1: int32[4]``."""
    if sent.size == arr.size and sent.dtype_digest == _dtype_digest(arr.dtype):
        return None
    return (f"send #{sent.seq} on rank {sender}: {sent.text}; {fn} #{seq} on rank {receiver}: "
            f"{array_text(arr)}")
