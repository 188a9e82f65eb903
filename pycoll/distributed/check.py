"""``PYCOLL_CHECK=1``: before each collective the ranks compare what they are about to call.

Without it, ranks that call different collectives, or the same one with a different dtype, size,
op or root, can receive wrong data silently, or fail deep inside MPI. With it, each rank
describes its coming call — collective, sequence number (refused calls count, so a call one
rank refused shows up), dtype, shape, op, root, and on MPI whether it blocks (MPI never matches
a blocking collective with a non-blocking one) — hashes it (once per kind of call, the sequence
number mixed in arithmetically), and the group all-gathers every rank's record of it (hash,
number, description: :class:`Comparison`), non-blocking whatever the call, so every rank reads
the same table and reaches the same verdict. On a difference every rank raises a
:class:`pycoll.CollectiveError` listing each rank's call (a non-blocking call, already started,
ends the job instead: :class:`Checked`); a rank that refused its call takes part as refused
(:func:`refused`). It costs one small collective per call (bench/check_cost.py measures it),
which is why it is opt-in.
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
from pycoll.backends.reduce_op import is_reduce_op, op_name
from pycoll.distributed._failure import abort_job, call_failed, timeout_error


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
_RECORD_WORDS = 40  # int64 words of a call's record: digest, sequence number, text length, text
_RECORD_HEAD = 3
_RECORD_TEXT = 8 * (_RECORD_WORDS - _RECORD_HEAD)
_templates: Dict[Tuple[Any, ...], np.ndarray] = {}  # a kind of call's record, numbered 0


def _record(text: str) -> np.ndarray:
    """The record of a call numbered 0 (``text`` says ``#0``): its digest, 0, and its text (cut
    short past 296 bytes; the digest is the whole text's)."""
    raw = text.encode()
    words = np.zeros(_RECORD_WORDS, np.int64)
    words[:_RECORD_HEAD] = [_digest(raw), 0, min(len(raw), _RECORD_TEXT)]
    words[_RECORD_HEAD:].view(np.uint8)[:words[2]] = np.frombuffer(raw[:_RECORD_TEXT], np.uint8)
    return words


def _numbered(template: np.ndarray, seq: int) -> np.ndarray:
    """``template`` as the record of call number ``seq`` (the number mixed into its digest)."""
    words = template.copy()
    words[0] = (int(template[0]) + seq * _SEQ_MIX) & _MASK
    words[1] = seq
    return words


def _call_record(fn: str, seq: int, arr: Any, op: Any, root: Optional[int], blocking: Optional[bool]) -> np.ndarray:
    """The record of a call, its description built once per kind of call."""
    key = (fn, arr.dtype, arr.shape, op, root, blocking)
    try:
        template = _templates[key]
    except KeyError:
        template = _templates[key] = _record(describe(fn, 0, arr, op, root, blocking))
    except TypeError:  # an unhashable op: rare, and refused by the engines anyway
        template = _record(describe(fn, 0, arr, op, root, blocking))
    return _numbered(template, seq)


def compare(group: Any, fn: str, arr: Any, op: Any = None, root: Optional[int] = None,
            blocking: bool = True) -> "Comparison":
    """The comparison of this rank's coming call with the other ranks', under way (the caller
    waits for it: :meth:`Comparison.test`, then :meth:`Comparison.raise_on_difference`). The
    calls are numbered among the group's collectives alone (sends and receives, which only some
    ranks make, do not count). A non-blocking call leaves it to its task (:class:`Checked`):
    waiting before the call would block where the call does not (a non-blocking call on one
    group, then a blocking call on another that a peer makes first, is a valid program)."""
    backend, seq = group.engine, group.seq - group.p2p_calls
    described = None if backend.stream_ordered else blocking
    if debug:
        logger.debug("%s on %s", describe(fn, seq, arr, op, root, described), group.describe())
    return Comparison(group, fn, seq, _call_record(fn, seq, arr, op, root, described))


def refused(group: Any, fn: str, problem: str) -> "Comparison":
    """The comparison a rank that refused its call ``fn`` (``problem``: the error it raises)
    takes part in, as ``all_reduce #3 refused (ValueError: ...)``: every peer then raises,
    naming the refusal, and none makes the call, so the group's calls stay in step and the job
    goes on. Where every rank refused alike, all agree and each raises its own refusal."""
    seq = group.seq - group.p2p_calls
    return Comparison(group, fn, seq, _numbered(_record(f"{fn} #0 refused ({problem})"), seq))


class Comparison:
    """Every rank's record of its coming call (digest, number and description), gathered by one
    non-blocking all-gather, whichever way the call itself runs: ranks whose calls differ in
    ``sync_op`` still take part in the same collective (MPI never matches a blocking one with a
    non-blocking one), and every rank reads the same table, so all reach the same verdict with
    no second round. A request: ``test`` progresses it, ``join_stream`` hands it to the stream."""

    __slots__ = ("group", "_fn", "_seq", "_mine", "_table", "_request")

    def __init__(self, group: Any, fn: str, seq: int, record: np.ndarray):
        backend = group.engine
        self.group, self._fn, self._seq = group, fn, seq
        self._mine = backend.xp.asarray(record)
        self._table = backend.xp.empty(backend.size * _RECORD_WORDS, np.int64)
        try:
            self._request = backend.all_gather(self._table, self._mine, False, seq)
        except Exception as exc:
            raise call_failed(fn, seq, group, exc) from exc

    def join_stream(self) -> bool:
        return self._request.join_stream()

    def test(self, start: bool = True) -> bool:
        try:
            return self._request.test(start)
        except Exception as exc:
            raise call_failed(self._fn, self._seq, self.group, exc) from exc

    def timed_out(self) -> CollectiveError:
        return timeout_error(self._fn, self._seq, self.group, self.group.engine.timeout)

    def differences(self) -> Optional[str]:
        """Once complete: None when every rank's call is this rank's, else each rank's, listed."""
        digests = self._table[0::_RECORD_WORDS].tolist()
        if digests.count(digests[0]) == len(digests):
            return None
        table = np.asarray(self._table.tolist(), np.int64).reshape(-1, _RECORD_WORDS)
        texts = []
        for digest, seq, length, *text in table:
            words = np.array(text, np.int64).view(np.uint8)[:length].tobytes().decode(errors="replace")
            texts.append(words.replace(" #0", f" #{seq}", 1))
        return "; ".join(f"rank {r}: {c}" for r, c in zip(self.group.ranks, texts))

    def problem(self) -> Optional[str]:
        """Once complete: None when every rank's call is this rank's, else what differs."""
        listing = self.differences()
        if listing is None:
            return None
        return f"PYCOLL_CHECK: the ranks of {self.group.describe()} called different collectives: {listing}"

    def raise_on_difference(self) -> None:
        """Once complete: a CollectiveError listing each rank's call where they differ."""
        problem = self.problem()
        if problem is not None:
            raise CollectiveError(problem)


class Checked:
    """A non-blocking call's request behind its comparison (a :class:`Comparison`, or a
    ``agreement.Comparison``: anything with ``test`` and ``problem``): complete once both are. A
    difference ends the job, naming it: this rank's call has already started, and MPI cannot take
    it back, so the group's calls can never be put in step again."""

    __slots__ = ("_comparison", "_request")

    def __init__(self, comparison: Comparison, request: Any):
        self._comparison: Optional[Comparison] = comparison
        self._request = request

    def join_stream(self) -> bool:
        return False  # the comparison's records are read on the host

    def test(self, start: bool = True) -> bool:
        comparison = self._comparison
        if comparison is not None:
            if not comparison.test(start):
                return False
            self._comparison = None
            problem = comparison.problem()
            if problem is not None:
                abort_job(1, f"pycoll: {problem}; this rank's call (sync_op=False) had started, so the group "
                             f"cannot go on: stopping the job")
        return self._request is None or self._request.test(start)


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
