"""Collectives of picklable Python objects: ``all_gather_object``, ``broadcast_object_list``,
``scatter_object_list``, and point to point ``send_object_list`` / ``recv_object_list`` (paddle's
names and signatures).

Objects are pickled, their sizes exchanged first, and the bytes travel through the group's own
collectives (on GPU memory under nccl). Unpickling runs whatever the pickled bytes say, so these
trust the job's own ranks, as torch's and paddle's do: never feed them data from elsewhere.
An object that cannot be pickled is refused on its rank before anything is sent.
"""
from __future__ import annotations

import pickle
from typing import Any, Callable, List, Optional, Tuple

import numpy as np

from pycoll.distributed import verdict
from pycoll.distributed.collective import all_gather, broadcast, scatter
from pycoll.distributed.env import member_group, not_a_member, outside
from pycoll.distributed.group import Group, as_rank
from pycoll.distributed.p2p import recv, send


def _dumps(obj: Any, fn: str, arg: str) -> bytes:
    try:
        return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        raise TypeError(f"pycoll.distributed.{fn}: {arg} holds an object of type "
                        f"{type(obj).__module__}.{type(obj).__name__} that cannot be pickled: {exc}") from None


def _bytes(data: bytes, size: int, xp: Any) -> Any:
    """``data`` in a ``size``-byte ``xp`` array (zero-padded)."""
    host = np.zeros(size, np.uint8)
    host[:len(data)] = np.frombuffer(data, np.uint8)
    return xp.asarray(host)


def _host(arr: Any) -> bytes:
    """The bytes of a NumPy or CuPy array."""
    return (arr if isinstance(arr, np.ndarray) else arr.get()).tobytes()


def _root(g: Group, src: Any, fn: str) -> int:
    """The group rank of global rank ``src`` (any integer); ValueError (on every rank alike) when
    not a member."""
    root = g.index_of(as_rank(src, f"pycoll.distributed.{fn}", "src"))
    if root < 0:
        raise ValueError(f"pycoll.distributed.{fn}: src={src!r} is not a rank of {g.describe()}")
    return root


_OBJECT_CALLS = ("all_gather_object", "broadcast_object_list", "scatter_object_list")


def _headers(g: Group, fn: str, bad: bool, root: int, number: int, group: Optional[Group]) -> List[List[int]]:
    """Every rank's [call, refused, root, number] (one small all-gather, the same in each object
    collective, so that ranks in different ones are told so by name: they met in the collectives
    underneath, under those names, before); ValueError on every rank alike where the calls differ."""
    records: List[Any] = []
    words = [_OBJECT_CALLS.index(fn), int(bad), root, number]
    all_gather(records, g.array_module.asarray(np.array(words, np.int64)), group)
    table = [[int(v) for v in r.tolist()] for r in records]
    calls = [_OBJECT_CALLS[row[0]] for row in table]
    if len(set(calls)) > 1:
        named = "; ".join(f"rank {rank}: {call}" for rank, call in zip(g.ranks, calls))
        raise ValueError(f"pycoll.distributed.{fn}: the ranks of {g.describe()} are in different collectives "
                         f"({named}); every rank must make the same calls in the same order; nothing was sent")
    return table


def _agreed(g: Group, fn: str, root: int, problem: Optional[Exception], group: Optional[Group],
            length: int = -1) -> None:
    """Every rank's own checks (its list, its ``src``: ``problem``, and the group rank ``root``
    it names; with ``length``, its list's, which must be the root's), agreed before anything is
    sent, by `_headers`: a rank that refused raises its own error and every other rank a
    ValueError naming it, and ranks given different ``src`` or lists of other lengths all raise,
    naming each one's. Without it, the root's broadcasts complete without a rank that refused,
    whose next call then takes them: stale objects, silently."""
    table = _headers(g, fn, problem is not None, root, length, group)
    if problem is not None:
        raise problem
    refused = [g.ranks[i] for i, row in enumerate(table) if row[1]]
    if refused:
        raise ValueError(f"pycoll.distributed.{fn}: rank(s) {refused} of {g.describe()} refused this call "
                         f"(each says why); nothing was sent")
    roots = [g.ranks[row[2]] for row in table]
    if len(set(roots)) > 1:
        raise ValueError(f"pycoll.distributed.{fn}: the ranks of {g.describe()} gave different src "
                         f"{roots} (in rank order); every rank must name the same; nothing was sent")
    lengths = [row[3] for row in table]
    if len(set(lengths)) > 1:
        raise ValueError(f"pycoll.distributed.{fn}: the ranks of {g.describe()} gave object lists of "
                         f"{lengths} entries (in rank order); every rank must give a list as long as the source's "
                         f"(rank {g.ranks[root]}: {lengths[root]}), as paddle's and torch's; nothing was sent")


def _own_checks(g: Group, fn: str, src: Any, checks: Callable[[], None]) -> Tuple[int, Optional[Exception]]:
    """(the group rank ``src`` names, or -1; the refusal of ``checks()`` or of ``src``, or None)."""
    try:
        checks()
        return _root(g, src, fn), None
    except (TypeError, ValueError) as exc:
        return -1, exc


def _refusing(g: Group, fn: str, root: int, prepare: Optional[Callable[[], Any]]) -> Any:
    """On the root, ``prepare()`` (its checks and pickling); its refusal, or that all is well,
    is shared with every rank, which all raise alike on a refusal (see ``verdict``)."""
    result, problem = None, None
    if prepare is not None:
        try:
            result = prepare()
        except (TypeError, ValueError) as exc:
            problem = exc
    verdict.shared(g, fn, root, problem)
    return result


def all_gather_object(object_list: List[Any], obj: Any, group: Optional[Group] = None) -> None:
    """Append every rank's ``obj`` to ``object_list``, in group rank order. Unlike the other
    object collectives it raises a RuntimeError on a rank outside ``group``, as paddle's does."""
    fn = "all_gather_object"
    listed = isinstance(object_list, list)
    if outside(group, fn):
        raise not_a_member(group, fn)
    g = member_group(group, fn)
    xp = g.array_module
    try:
        if not listed:
            raise TypeError(f"pycoll.distributed.{fn}: object_list must be a list, got {type(object_list).__name__}")
        data, problem = _dumps(obj, fn, "obj"), None
    except TypeError as exc:
        data, problem = b"", exc
    # -1: that rank refused (its list, or its obj cannot be pickled), and every rank raises
    sizes = [row[3] for row in _headers(g, fn, problem is not None, -1, -1 if problem else len(data), group)]
    if problem is not None:
        raise problem
    if -1 in sizes:
        raise TypeError(f"pycoll.distributed.{fn}: rank {g.ranks[sizes.index(-1)]} refused its part (its "
                        f"object_list, or an obj that cannot be pickled: that rank says why); nothing was gathered")
    blocks: List[Any] = []
    all_gather(blocks, _bytes(data, max(sizes), xp), group)
    object_list.extend(pickle.loads(_host(b)[:n]) for b, n in zip(blocks, sizes))


def broadcast_object_list(object_list: List[Any], src: int, group: Optional[Group] = None) -> None:
    """Replace the entries of ``object_list`` with rank ``src``'s, on every rank (every rank's list
    as long as ``src``'s)."""
    fn = "broadcast_object_list"

    def checks() -> None:
        if not isinstance(object_list, list):
            raise TypeError(f"pycoll.distributed.{fn}: object_list must be a list, got {type(object_list).__name__}")

    if outside(group, fn):
        checks()
        return
    g = member_group(group, fn)
    xp = g.array_module
    root, problem = _own_checks(g, fn, src, checks)
    _agreed(g, fn, root, problem, group, len(object_list) if isinstance(object_list, list) else -1)

    def pickled() -> List[bytes]:
        return [_dumps(obj, fn, f"object_list[{i}]") for i, obj in enumerate(object_list)]

    blobs = _refusing(g, fn, root, pickled if g.rank == root else None) or []
    payload = np.array([len(b) for b in blobs], np.int64).tobytes() + b"".join(blobs)
    header = xp.asarray(np.array([len(blobs), len(payload)], np.int64))
    broadcast(header, src, group)  # how many objects, how many bytes
    count, total = (int(v) for v in header.tolist())
    table = _bytes(payload, total, xp)
    broadcast(table, src, group)  # each object's size, then the objects
    raw = _host(table)
    sizes = np.frombuffer(raw[:8 * count], np.int64).tolist()
    offsets = np.cumsum([8 * count, *sizes]).tolist()
    object_list[:] = [pickle.loads(raw[a:b]) for a, b in zip(offsets, offsets[1:])]


def scatter_object_list(out_object_list: List[Any], in_object_list: Optional[List[Any]] = None,
                        src: int = 0, group: Optional[Group] = None) -> None:
    """Rank ``src`` sends ``in_object_list[i]`` to group rank i, which gets it as the one entry
    of ``out_object_list`` (cleared first, as in paddle)."""
    fn = "scatter_object_list"

    def checks() -> None:
        if not isinstance(out_object_list, list):
            raise TypeError(f"pycoll.distributed.{fn}: out_object_list must be a list, got "
                            f"{type(out_object_list).__name__}")

    if outside(group, fn):
        checks()
        return
    g = member_group(group, fn)
    xp = g.array_module
    root, problem = _own_checks(g, fn, src, checks)
    _agreed(g, fn, root, problem, group)
    mine = g.rank == root

    def pickled() -> List[bytes]:
        if not isinstance(in_object_list, (list, tuple)) or len(in_object_list) != g.nranks:
            raise ValueError(f"pycoll.distributed.{fn}: in_object_list on the source rank {src} must "
                             f"be a list of one object per rank ({g.nranks}), got {in_object_list!r:.80}")
        return [_dumps(obj, fn, f"in_object_list[{i}]") for i, obj in enumerate(in_object_list)]

    blocks = _refusing(g, fn, root, pickled if mine else None)
    widest = xp.asarray(np.array([max(map(len, blocks)) if mine else 0], np.int64))
    broadcast(widest, src, group)
    width = 8 + int(widest.tolist()[0])  # each block: its size (int64), then its bytes
    out = xp.zeros(width, np.uint8)
    send = None
    if mine:
        send = [_bytes(np.array([len(b)], np.int64).tobytes() + b, width, xp) for b in blocks]
    scatter(out, send, src, group)
    raw = _host(out)
    size = int(np.frombuffer(raw[:8], np.int64)[0])
    out_object_list.clear()
    out_object_list.append(pickle.loads(raw[8:8 + size]))


def _peer(g: Group, rank: Any, in_group: Any, fn: str, arg: str) -> int:
    """The global rank named by ``rank`` (global) or ``<arg>_in_group`` (a group rank), not both;
    neither is global rank 0 (paddle's default)."""
    if rank is not None and in_group is not None:
        raise ValueError(f"pycoll.distributed.{fn}: give one of {arg} and {arg}_in_group, not both")
    if in_group is None:
        peer = as_rank(0 if rank is None else rank, f"pycoll.distributed.{fn}", arg)
    else:
        index = as_rank(in_group, f"pycoll.distributed.{fn}", f"{arg}_in_group")
        if not 0 <= index < g.nranks:
            raise ValueError(f"pycoll.distributed.{fn}: {arg}_in_group={in_group!r} is not a rank of {g.describe()}")
        peer = g.ranks[index]
    if peer == g.ranks[g.rank]:
        given = (f"{arg}={rank}" if rank is not None else f"{arg}_in_group={in_group}" if in_group is not None
                 else f"{arg} not given (paddle's default: rank 0)")
        raise ValueError(f"pycoll.distributed.{fn}: {given} is this rank itself; objects go to another rank")
    return peer


def _given_list(object_list: Any, fn: str, wanted: str) -> None:
    """object_list must be a non-empty list: None or an empty one is paddle's ValueError
    ("object_list cannot be None or empty"), another type a TypeError."""
    if object_list is None or isinstance(object_list, list) and not object_list:
        raise ValueError(f"pycoll.distributed.{fn}: object_list is {object_list!r}; give {wanted}")
    if not isinstance(object_list, list):
        raise TypeError(f"pycoll.distributed.{fn}: object_list must be a non-empty list ({wanted}), "
                        f"got {object_list!r:.80}")


def send_object_list(object_list: List[Any], dst: Optional[int] = None, group: Optional[Group] = None,
                     dst_in_group: Optional[int] = None) -> None:
    """Send the objects of ``object_list`` to rank ``dst`` (or group rank ``dst_in_group``; neither:
    rank 0, as paddle's), whose ``recv_object_list`` takes them into a list of the same length."""
    fn = "send_object_list"
    _given_list(object_list, fn, "the objects to send")
    if outside(group, fn):
        return
    g = member_group(group, fn)
    peer = _peer(g, dst, dst_in_group, fn, "dst")
    blobs = [_dumps(obj, fn, f"object_list[{i}]") for i, obj in enumerate(object_list)]
    xp = g.array_module
    send(xp.asarray(np.array([len(blobs)], np.int64)), peer, group)  # how many objects
    send(xp.asarray(np.array([len(b) for b in blobs], np.int64)), peer, group)  # each one's size
    send(_bytes(b"".join(blobs), sum(map(len, blobs)), xp), peer, group)


def recv_object_list(object_list: List[Any], src: Optional[int] = None, group: Optional[Group] = None,
                     src_in_group: Optional[int] = None) -> None:
    """Fill ``object_list`` (as long as the sender's) with the objects rank ``src`` (or group rank
    ``src_in_group``; neither: rank 0, as paddle's) sends with ``send_object_list``."""
    fn = "recv_object_list"
    _given_list(object_list, fn, "a list as long as the sender's")
    if outside(group, fn):
        return
    g = member_group(group, fn)
    peer = _peer(g, src, src_in_group, fn, "src")
    xp = g.array_module
    count = xp.zeros(1, np.int64)
    recv(count, peer, group)
    sent = int(count.tolist()[0])
    sizes = xp.zeros(sent, np.int64)  # the whole message is taken even when refused: none of it may
    recv(sizes, peer, group)          # be left for a later receive from that rank
    sizes = [int(n) for n in sizes.tolist()]
    payload = xp.zeros(sum(sizes), np.uint8)
    recv(payload, peer, group)
    if sent != len(object_list):
        raise ValueError(f"pycoll.distributed.{fn}: rank {peer} sends {sent} objects but object_list has "
                         f"{len(object_list)} entries; give a list as long as the sender's (its objects were "
                         f"received and dropped)")
    raw = _host(payload)
    offsets = np.cumsum([0, *sizes]).tolist()
    object_list[:] = [pickle.loads(raw[a:b]) for a, b in zip(offsets, offsets[1:])]
