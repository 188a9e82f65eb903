"""Point to point: ``send``, ``recv``, ``isend``, ``irecv``, paddle's ``P2POp`` and
``batch_isend_irecv``, and ``wait``.

A receive never hands back wrong data silently:

- always on MPI (no extra message: the engine's status is read): a message shorter than the
  buffer raises :class:`pycoll.CollectiveError` once it has arrived (at ``wait()`` for a
  non-blocking receive) naming the call, the peer and both sizes; a longer one raises it too,
  naming the buffer's size (MPI writes the part that fits and drops the rest, without saying
  how much came: ``PYCOLL_CHECK`` names it). Either way the message is consumed, the engine
  stays usable and the job can go on. NCCL has no status and no probe: it cannot tell how much
  arrived, so there this check is skipped, and sizes that differ are NCCL's undefined
  behaviour (the pair may hang until the watchdog's timeout, or the buffer hold wrong data);
  ``PYCOLL_CHECK`` catches them before the data moves.
- under ``PYCOLL_CHECK`` each send first sends a descriptor of itself (dtype, shape, the
  sender's call number) on a tag no user message carries (on NCCL, which has no tags, in issue
  order: descriptor, then data, on both sides). A blocking receive compares it with its buffer
  before taking the data; on a difference it takes the data into a scratch buffer of the sent
  size, so that the sender is not left waiting and the next message from that rank is not
  confused with this one, and raises listing both sides. A non-blocking receive cannot wait for
  the descriptor before its data is posted (``irecv`` then ``send`` on both ranks would
  deadlock), so it posts both at once and compares at completion; on a difference its buffer
  holds whatever arrived. Either way the message is consumed and the job can go on.

A batch is checked whole before anything starts, so a bad entry leaves nothing half-sent. Its
transfers then start in list order as non-blocking sends and receives; on NCCL the engine holds
non-blocking transfers back and launches them together, so a batch is one NCCL group (launched
when a task of the batch is waited for or tested, or at the group's next collective), and
patterns that would deadlock as single calls (every rank sends before it receives) complete.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from pycoll._errors import CollectiveError, RefusedArgument
from pycoll.distributed import _arrays, check, call_peers
from pycoll.distributed._failure import label
from pycoll.distributed.collective import _begin, _group_rank, _launch
from pycoll.distributed.env import is_initialized, member_group, outside, world_group
from pycoll.distributed.group import Group
from pycoll.distributed.task import COMPLETED, Task, drain, poll

_DATA_TAG = 7  # a data message of a dtype the tables below do not list

# A data message's tag names its elements' dtype, so that a receive into a buffer of another
# dtype of the same byte size (whose bytes MPI takes as they are) is caught from the status the
# receive reads anyway. Keyed by dtype (``dtype.name`` costs a microsecond or two a call); the
# ml_dtypes ones (NumPy kind 'V') by name, for ml_dtypes is imported only where used.
_NUMPY_TAGS = {np.dtype(name): 32 + i for i, name in enumerate((
    "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "float16",
    "float32", "float64", "complex64", "complex128"))}
_ML_TAGS = {name: 48 + i for i, name in enumerate(("bfloat16", "float8_e4m3fn", "float8_e5m2"))}
_TAG_DTYPES = {**{tag: (dtype.name, dtype.itemsize) for dtype, tag in _NUMPY_TAGS.items()},
               **{tag: (name, 2 if name == "bfloat16" else 1) for name, tag in _ML_TAGS.items()}}


def _dtype_tag(dtype: np.dtype) -> int:
    """The tag of a data message of ``dtype``'s elements."""
    tag = _NUMPY_TAGS.get(dtype)
    if tag is None and dtype.kind == "V":
        tag = _ML_TAGS.get(dtype.name)
    return _DATA_TAG if tag is None else tag


def _empty_moves(g: Group) -> Any:
    """Whether a send or receive moves a message even when its tensor is empty: on MPI, yes (a
    0-byte message, so that an empty send met by a receive of 3 elements is that receive's error,
    not silently the next message's data; the status names the size); on NCCL, as before, the
    collectives' rule (nothing moves: a send of nothing to a receive of something is NCCL's
    undefined behaviour either way)."""
    return None if g.engine.stream_ordered else True


def peer_of(g: Group, rank: int, fn: str, arg: str, itself: bool = False) -> int:
    """The group rank of global rank ``rank``, which must be another member of ``g`` (or, with
    ``itself``, this rank: a batch's transfer to itself, whose receive the batch posts too)."""
    peer = _group_rank(g, rank, fn, arg)
    if peer == g.rank and not itself:
        raise ValueError(f"pycoll.distributed.{fn}: {arg}={rank} is this rank itself (a transfer to itself "
                         f"goes in a batch_isend_irecv with its receive)")
    return peer


class _Both:
    """Two requests (a descriptor's and its data's) as one, complete when both are. ``forgive``
    (a receive's) says whether an engine error of the second may be dropped: when the descriptor
    has shown a mismatch, which the receive reports itself."""

    __slots__ = ("_parts", "_forgive", "_error")

    def __init__(self, first: Any, second: Any, forgive: Optional[Callable[[], bool]] = None):
        self._parts = [first, second]
        self._forgive = forgive
        self._error: Optional[BaseException] = None

    def test(self, start: bool = True) -> bool:
        first, second = self._parts
        if first is not None and first.test(start):
            self._parts[0] = first = None
        if second is not None:
            try:
                if second.test(start):
                    self._parts[1] = second = None
            except Exception as exc:  # kept until the descriptor says whether it is the mismatch's
                self._parts[1], self._error = None, exc
        if first is not None or second is not None:
            return False
        if self._error is not None and not (self._forgive is not None and self._forgive()):
            raise self._error
        return True

    def join_stream(self) -> bool:
        joined = [part.join_stream() for part in self._parts if part is not None]
        if joined and all(joined):  # (with nothing left to join, the host polls test())
            self._parts = [None, None]
            return True
        return False


def _send_described(engine: Any, descriptor: Any, buf: Any, peer: int, blocking: bool,
                    seq: int) -> Optional[_Both]:
    """PYCOLL_CHECK's send: the descriptor, then the data (even empty: the receiver takes one).

    The descriptor is started non-blocking so that NCCL, which holds it back, launches it with
    the data as one group (launched apart, a ring of ``irecv`` then ``send`` would wait on itself).
    """
    first = engine.send(descriptor, peer, check.DESCRIPTOR_TAG, False, seq)
    second = engine.send(buf, peer, _dtype_tag(buf.dtype), blocking, seq)
    if not blocking:
        return _Both(first, second)
    if not first.join_stream() and not poll(first, engine.timeout):
        raise TimeoutError(f"rank {peer} did not take this send's PYCOLL_CHECK descriptor within "
                           f"{engine.timeout:g} s")
    return None


def send(tensor: Any, dst: int = 0, group: Optional[Group] = None, sync_op: bool = True) -> Task:
    """Send ``tensor`` to rank ``dst``, which must post a matching ``recv`` (the same number of
    elements and dtype)."""
    return _send_call(tensor, dst, group, sync_op, "send")


def _send_call(tensor: Any, dst: int, group: Optional[Group], sync_op: bool, fn: str) -> Task:
    """``send`` or ``isend`` (``fn``, the name its errors give)."""
    g = _begin(group, fn, reads=(tensor,), p2p=True)
    if g is None:
        return COMPLETED
    return _send(g, tensor, dst, sync_op, fn)


def _send(g: Group, tensor: Any, dst: int, sync_op: bool, fn: str = "send", itself: bool = False) -> Task:
    """``send`` on a member's group whose call is already numbered (``itself``: see `peer_of`)."""
    try:
        peer = peer_of(g, dst, fn, "dst", itself)
        buf = _arrays.send_buffer(tensor, g.engine.xp, fn, "tensor")
    except (TypeError, ValueError) as exc:
        g.note_refused(exc, collective=False)  # as the collectives do (collective._begin)
        raise
    call_peers.note(g, int(dst))  # for the stall notices, should this call stall
    if not check.enabled:
        return _launch(g, "send", g.engine.send, (buf, peer, _dtype_tag(buf.dtype)), buf, sync_op,
                       compared=False, moves=_empty_moves(g))
    descriptor = check.p2p_descriptor(g.engine.xp, g.seq, buf)
    return _launch(g, "send", _send_described, (g.engine, descriptor, buf, peer), buf, sync_op,
                   compared=False, moves=True)


def _amount(nbytes: int, itemsize: int) -> str:
    if nbytes % itemsize == 0:
        return f"{nbytes // itemsize} elements"
    return f"{nbytes} bytes ({nbytes / itemsize:g} elements)"


class _Receipt:
    """One receive: its buffer, what the engine says arrived, and under PYCOLL_CHECK the
    sender's descriptor. ``start`` is the engine call ``_launch`` makes; ``finish`` runs once
    the data is in place and raises what went wrong, else copies a staged buffer back."""

    def __init__(self, g: Group, peer: int, buf: Any, copy_back: Optional[Callable[[], None]]):
        self.g, self.peer, self.buf, self.copy_back = g, peer, buf, copy_back
        self.seq = g.seq
        self.arrived: Optional[int] = None  # bytes; None until told, or where the engine can't tell
        self.arrived_tag: Optional[int] = None  # the message's (its dtype's), where the engine tells
        self.descriptor: Any = None  # (the task keeps this receipt, through finish, until done)
        self._difference: Optional[str] = None
        self._compared = False
        self._sent_nbytes = 0
        self._scratch = False  # the data went into scratch, not the buffer

    def _where(self) -> str:
        return f"{label('recv', self.seq)} from rank {self.g.ranks[self.peer]} on {self.g.describe()}"

    def _count(self, nbytes: Optional[int], tag: Optional[int]) -> None:
        self.arrived, self.arrived_tag = nbytes, tag

    def difference(self) -> Optional[str]:
        """Both sides' calls when the descriptor that came does not fit the buffer, else None."""
        if not self._compared:
            sent = check.read_descriptor(self.descriptor)
            self._difference = check.p2p_difference(sent, self.g.ranks[self.peer], "recv", self.seq,
                                                    self.g.ranks[self.g.rank], self.buf)
            self._sent_nbytes = sent.nbytes
            self._compared = True
        return self._difference

    def start(self, blocking: bool, seq: int) -> Any:
        engine, peer = self.g.engine, self.peer
        if not check.enabled:
            return engine.recv(self.buf, peer, None, blocking, seq, self._count)
        self.descriptor = check.empty_descriptor(engine.xp)
        if not blocking:
            first = engine.recv(self.descriptor, peer, check.DESCRIPTOR_TAG, False, seq)
            second = engine.recv(self.buf, peer, None, False, seq, self._count)
            return _Both(first, second, forgive=lambda: self.difference() is not None)
        engine.recv(self.descriptor, peer, check.DESCRIPTOR_TAG, True, seq)
        if self.difference() is None:
            return engine.recv(self.buf, peer, None, True, seq, self._count)
        # taken whole into scratch: the sender is not left waiting, and the next receive from
        # that rank gets the next message
        self._scratch = True
        return engine.recv(engine.xp.empty(self._sent_nbytes, np.uint8), peer, None, True, seq)

    def finish(self) -> None:
        if self.descriptor is not None and self.difference() is not None:
            raise CollectiveError(
                f"PYCOLL_CHECK: {self._where()}: the calls differ: {self.difference()}; send and "
                f"recv must have the same size and dtype (the message was taken "
                f"{'into scratch and dropped' if self._scratch else 'and the buffer holds no result'}"
                f"; the job can go on)")
        buf = self.buf
        sent = _TAG_DTYPES.get(self.arrived_tag)  # the sender's dtype (name, itemsize), where told
        if sent is not None and self.arrived_tag == _dtype_tag(buf.dtype):
            sent = None  # the buffer's own
        if sent is None and (self.arrived is None or self.arrived == buf.nbytes):
            if self.copy_back is not None:
                self.copy_back()
            return
        longer = self.arrived > buf.nbytes  # the engine's count then says only "more than fits"
        if sent is None:
            came = "a message longer than the buffer" if longer else _amount(self.arrived, buf.itemsize)
            after = " (MPI dropped what did not fit; PYCOLL_CHECK=1 names the size sent)" if longer else ""
        else:
            name, itemsize = sent
            came = (f"{'an' if name[0] in 'aeiou' else 'a'} {name} message longer than the buffer" if longer
                    else f"{_amount(self.arrived, itemsize)} of {name}")
            after = " (the buffer holds the bytes that came, not values)"
        raise CollectiveError(
            f"{self._where()}: {came} arrived, the buffer holds {buf.size} (shape {list(buf.shape)}, "
            f"{buf.dtype}); send and recv must have the same size and dtype{after}")


def recv(tensor: Any, src: int = 0, group: Optional[Group] = None, sync_op: bool = True) -> Task:
    """Receive into ``tensor`` what rank ``src`` sends (the same number of elements and dtype:
    a shorter message raises :class:`pycoll.CollectiveError` once it has arrived). A read-only
    ``tensor`` is refused as the collectives refuse it: the message is taken into scratch first."""
    return _recv_call(tensor, src, group, sync_op, "recv")


def _recv_call(tensor: Any, src: int, group: Optional[Group], sync_op: bool, fn: str) -> Task:
    """``recv`` or ``irecv`` (``fn``, the name its errors give)."""
    g = _begin(group, fn, writes=(tensor,), p2p=True)
    if g is None:
        return COMPLETED
    return _recv(g, tensor, src, sync_op, (fn, "tensor"))


def _recv(g: Group, tensor: Any, src: int, sync_op: bool, names: Tuple[str, str] = ("recv", "tensor"),
          itself: bool = False) -> Task:
    """``recv`` on a member's group whose call is already numbered; ``names`` (the call's and
    the tensor's) name a read-only ``tensor`` (``itself``: see `peer_of`)."""
    try:
        peer = peer_of(g, src, names[0], "src", itself)
        buf, copy_back = _arrays.recv_buffer(tensor, g.engine.xp, *names)
    except (TypeError, ValueError) as exc:
        g.note_refused(exc, collective=False)
        raise
    call_peers.note(g, int(src))  # for the stall notices, should this call stall
    if type(copy_back) is _arrays.Refusal:  # taken into scratch, then refused (the checks first)
        receipt = _Receipt(g, peer, buf, None)
        finish = copy_back.after(receipt.finish)
    else:
        receipt = _Receipt(g, peer, buf, copy_back)
        finish = receipt.finish
    return _launch(g, "recv", receipt.start, (), buf, sync_op, finish, compared=False,
                   moves=True if check.enabled else _empty_moves(g))


def isend(tensor: Any, dst: int, group: Optional[Group] = None) -> Task:
    """``send`` that returns at once with a pending task."""
    return _send_call(tensor, dst, group, False, "isend")


def irecv(tensor: Any, src: Optional[int] = None, group: Optional[Group] = None) -> Task:
    """``recv`` that returns at once with a pending task (``src`` is required, as in paddle)."""
    if src is None:
        raise ValueError("pycoll.distributed.irecv: src is None; give the rank to receive from")
    return _recv_call(tensor, src, group, False, "irecv")


class P2POp:
    """One transfer of a :func:`batch_isend_irecv`: ``op`` is ``isend`` or ``irecv`` (paddle's
    functions, or these names), ``peer`` the other side's global rank."""

    def __init__(self, op: Any, tensor: Any, peer: int, group: Optional[Group] = None):
        if op not in (isend, irecv, "isend", "irecv"):
            raise RefusedArgument(f"pycoll.distributed.P2POp: op={op!r}; it must be "
                                  f"pycoll.distributed.isend or pycoll.distributed.irecv")
        self.op = isend if op in (isend, "isend") else irecv
        self.tensor = tensor
        self.peer = peer
        self.group = group if group is not None or not is_initialized() else world_group("P2POp")  # paddle's

    def __repr__(self) -> str:
        return f"P2POp({self.op.__name__}, peer={self.peer})"


def batch_isend_irecv(p2p_op_list: List[P2POp]) -> List[Task]:
    """Start every transfer of ``p2p_op_list`` (in its order, which the peers' batches must
    match) and return their tasks. The ops may use different groups (paddle's; a group of None
    is the world); a rank outside an op's group gets a completed task for it. A read-only
    receive buffer is refused once every transfer has started (its own into scratch), as
    ``irecv`` refuses it."""
    fn = "batch_isend_irecv"
    if not isinstance(p2p_op_list, (list, tuple)) or not p2p_op_list:
        raise ValueError(f"pycoll.distributed.{fn}: p2p_op_list must be a non-empty list of P2POp")
    for i, item in enumerate(p2p_op_list):
        if not isinstance(item, P2POp):
            raise TypeError(f"pycoll.distributed.{fn}: p2p_op_list[{i}] is {type(item).__name__}, "
                            f"not a P2POp")
    groups = _batch_groups(p2p_op_list, fn)  # each op's group on this rank, None outside it
    to_itself: Dict[int, List[int]] = {}  # by group: the ops with this rank itself, +1 a send, -1 a receive
    for i, (item, g) in enumerate(zip(p2p_op_list, groups)):  # every check first: nothing starts unless all pass
        if g is None:
            continue
        if peer_of(g, item.peer, fn, f"p2p_op_list[{i}].peer", itself=True) == g.rank:  # (a ring of one rank)
            to_itself.setdefault(id(g), []).append(1 if item.op is isend else -1)
        if item.op is isend:
            _arrays.send_buffer(item.tensor, g.engine.xp, fn, f"p2p_op_list[{i}].tensor")
        else:
            _arrays.recv_buffer(item.tensor, g.engine.xp, fn, f"p2p_op_list[{i}].tensor")
    for ops in to_itself.values():
        if sum(ops):  # a send to itself that no receive of the batch takes would never be received
            raise ValueError(f"pycoll.distributed.{fn}: p2p_op_list sends to this rank itself {ops.count(1)} time(s) "
                             f"and receives from it {ops.count(-1)} time(s) on one group; a transfer to this rank "
                             f"itself needs its send and its receive in the batch")
    for g in {id(g): g for g in groups if g is not None}.values():  # each group's first call, numbered
        mine = [item for item, of in zip(p2p_op_list, groups) if of is g]
        _begin(g, fn, tuple(item.tensor for item in mine if item.op is isend),
               tuple(item.tensor for item in mine if item.op is not isend), p2p=True)
    tasks: List[Task] = []
    begun, refused = set(), None
    for i, (item, g) in enumerate(zip(p2p_op_list, groups)):  # and none between two: a batch starts whole
        if g is None:
            tasks.append(COMPLETED)
            continue
        if id(g) in begun:
            g.seq += 1  # each transfer is a call of its own
            g.p2p_calls += 1
        begun.add(id(g))
        if item.op is isend:
            tasks.append(_send(g, item.tensor, item.peer, False, itself=True))
            continue
        try:
            tasks.append(_recv(g, item.tensor, item.peer, False, (fn, f"p2p_op_list[{i}].tensor"), itself=True))
        except _arrays.ReadOnlyReceive as exc:  # started into scratch (its group keeps the task)
            refused = refused or exc
    if refused is not None:  # once every transfer has started
        raise refused
    return tasks


def _batch_groups(ops: List[P2POp], fn: str) -> List[Optional[Group]]:
    """The group each op runs on, as this rank's member group (the world for None), or None
    where this rank is outside it."""
    found: Dict[int, Optional[Group]] = {}  # by the group object given
    out: List[Optional[Group]] = []
    for item in ops:
        group = item.group if item.group is not None else world_group(fn)
        if id(group) not in found:
            found[id(group)] = None if outside(group, fn) else member_group(group, fn)
        out.append(found[id(group)])
    return out


def wait(tensor: Any, group: Optional[Group] = None, use_calc_stream: bool = True) -> None:
    """Wait until the group's non-blocking work is complete (paddle's ``wait``; on nccl the
    current stream waits for it, the host does not). ``tensor`` names the device, as in paddle."""
    if outside(group, "wait"):
        return
    g = member_group(group, "wait")
    _arrays.array_of(tensor, g.engine.xp, "wait", "tensor")
    drain(g)
