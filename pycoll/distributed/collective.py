"""The paddle-style collectives: validate on the calling rank, start the engine, wait or return a task.

Every collective works in place on a ``pycoll.Tensor`` or an array of the group's engine
(``numpy.ndarray`` on the cpu backend, ``cupy.ndarray`` on nccl). ``src``/``dst`` are global
ranks (paddle's convention), translated to the group's ranks here. With ``sync_op=True`` a call
returns once its result is in place (on nccl: once it is queued on the current stream, which
orders everything after it) as a completed :class:`Task`; with ``sync_op=False`` it returns a
pending :class:`Task` at once. ``op`` is a ``ReduceOp``.
"""
from __future__ import annotations

from typing import Any, List, Optional

import numpy as np

from pycoll.backends.reduce_op import ReduceOp, is_reduce_op
from pycoll.distributed import _arrays, debug
from pycoll.distributed.env import member_group
from pycoll.distributed.group import Group
from pycoll.distributed.task import COMPLETED, Task
from pycoll.distributed.watchdog import watchdog

_P2P_TAG = 7
_NOTHING = np.zeros(0, np.uint8)  # what a barrier "moves", for its debug fingerprint


def _reduction(group: Group, dtype: Any, op: Any, fn: str) -> Any:
    """The engine's plan for reducing ``dtype`` with ``op``; TypeError/ValueError if it can't."""
    plan = group.backend.reduction(dtype, op)
    if plan is None:
        if not is_reduce_op(op):
            raise ValueError(f"pycoll.distributed.{fn}: op={op!r} is not a ReduceOp; use "
                             f"ReduceOp.SUM, MAX, MIN, PROD or AVG")
        raise TypeError(f"pycoll.distributed.{fn}: tensor: {group.backend.reduction_error(dtype, op)}")
    return plan


def _group_rank(group: Group, rank: Any, fn: str, arg: str) -> int:
    if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)):
        raise TypeError(f"pycoll.distributed.{fn}: {arg} must be an int (a global rank), got {rank!r}")
    r = group.get_group_rank(int(rank))
    if r < 0:
        raise ValueError(f"pycoll.distributed.{fn}: {arg}={rank} is not a rank of {group.describe()}")
    return r


def _run(group: Group, fn: str, method: Any, args: tuple, finish: Any, sync_op: bool) -> Task:
    """Run the engine's ``method(*args, blocking)`` under the watchdog (even a non-blocking start
    may block: NCCL connects to its peers at a communicator's first call); a task unless ``sync_op``."""
    group.seq += 1
    watchdog.name = fn
    watchdog.group = group
    try:
        request = method(*args, sync_op)
    finally:
        watchdog.group = None
    if not sync_op:
        return Task(request, group, fn, group.seq, finish)
    if finish is not None:
        finish()
    return COMPLETED


def _skip(group: Group, fn: str, finish: Any = None) -> Task:
    """A collective with nothing to move (zero-size arrays): done at once on every rank."""
    group.seq += 1
    if finish is not None:
        finish()
    return COMPLETED


def all_reduce(tensor: Any, op: int = ReduceOp.SUM, group: Optional[Group] = None,
               sync_op: bool = True) -> Task:
    """Reduce ``tensor`` across the group; every rank ends with the result, in place."""
    g = member_group(group, "all_reduce")
    backend = g.backend
    buf, finish = _arrays.recv_buffer(tensor, backend.xp, "all_reduce", "tensor")
    plan = backend.reduction(buf.dtype, op) or _reduction(g, buf.dtype, op, "all_reduce")
    if debug.enabled:
        debug.check(g, "all_reduce", buf, op=op)
    if buf.size == 0:
        return _skip(g, "all_reduce")
    if sync_op and finish is None:
        # _run's blocking path, inlined: this is data-parallel training's hot call, and every
        # Python call saved here is measurable against MPI's few microseconds
        g.seq += 1
        watchdog.name, watchdog.group = "all_reduce", g
        try:
            backend.all_reduce(buf, plan, True)
        finally:
            watchdog.group = None
        return COMPLETED
    return _run(g, "all_reduce", backend.all_reduce, (buf, plan), finish, sync_op)


def reduce(tensor: Any, dst: int, op: int = ReduceOp.SUM, group: Optional[Group] = None,
           sync_op: bool = True) -> Task:
    """Reduce ``tensor`` across the group into rank ``dst``'s ``tensor``; other ranks' are unchanged."""
    g = member_group(group, "reduce")
    xp = g.backend.xp
    root = _group_rank(g, dst, "reduce", "dst")
    if g.rank == root:
        buf, finish = _arrays.recv_buffer(tensor, xp, "reduce", "tensor")
    else:
        buf, finish = _arrays.send_buffer(tensor, xp, "reduce", "tensor"), None
    plan = _reduction(g, buf.dtype, op, "reduce")
    if debug.enabled:
        debug.check(g, "reduce", buf, op=op, root=dst)
    if buf.size == 0:
        return _skip(g, "reduce")
    return _run(g, "reduce", g.backend.reduce, (buf, root, plan), finish, sync_op)


def broadcast(tensor: Any, src: int, group: Optional[Group] = None, sync_op: bool = True) -> Task:
    """Copy rank ``src``'s ``tensor`` into every rank's ``tensor``."""
    g = member_group(group, "broadcast")
    xp = g.backend.xp
    root = _group_rank(g, src, "broadcast", "src")
    if g.rank == root:
        buf, finish = _arrays.send_buffer(tensor, xp, "broadcast", "tensor"), None
    else:
        buf, finish = _arrays.recv_buffer(tensor, xp, "broadcast", "tensor")
    if debug.enabled:
        debug.check(g, "broadcast", buf, root=src)
    if buf.size == 0:
        return _skip(g, "broadcast")
    return _run(g, "broadcast", g.backend.broadcast, (buf, root), finish, sync_op)


def all_gather(tensor_list: List[Any], tensor: Any, group: Optional[Group] = None,
               sync_op: bool = True) -> Task:
    """Gather every rank's ``tensor`` into ``tensor_list`` (entry i from group rank i).

    An empty list gets one new tensor per rank appended; a list of one correctly shaped,
    writeable tensor per rank is written in place.
    """
    g = member_group(group, "all_gather")
    xp = g.backend.xp
    arr = _arrays.send_buffer(tensor, xp, "all_gather", "tensor")
    _arrays.check_list(tensor_list, g.nranks, "all_gather", "tensor_list", allow_empty=True)
    if debug.enabled:
        debug.check(g, "all_gather", arr)
    blocks = xp.empty((g.nranks,) + arr.shape, arr.dtype)
    deliver = _arrays.fill_list(tensor_list, blocks, tensor, xp, "all_gather", "tensor_list")
    if arr.size == 0:
        return _skip(g, "all_gather", deliver)
    return _run(g, "all_gather", g.backend.all_gather, (blocks, arr), deliver, sync_op)


def scatter(tensor: Any, tensor_list: Optional[List[Any]] = None, src: int = 0,
            group: Optional[Group] = None, sync_op: bool = True) -> Task:
    """Rank ``src`` sends ``tensor_list[i]`` to group rank i, which receives it into ``tensor``.

    ``tensor_list`` is read on ``src`` only (one tensor per rank, each shaped like ``tensor``).
    """
    g = member_group(group, "scatter")
    xp = g.backend.xp
    root = _group_rank(g, src, "scatter", "src")
    out, finish = _arrays.recv_buffer(tensor, xp, "scatter", "tensor")
    send = None
    if g.rank == root:
        if tensor_list is None:
            raise ValueError(f"pycoll.distributed.scatter: tensor_list is None on the source rank "
                             f"{src}; it needs one tensor per rank")
        send = _arrays.one_per_rank(tensor_list, g.nranks, out, xp, "scatter", "tensor_list")
    if debug.enabled:
        debug.check(g, "scatter", out, root=src)
    if out.size == 0:
        return _skip(g, "scatter")
    return _run(g, "scatter", g.backend.scatter, (out, send, root), finish, sync_op)


def reduce_scatter(tensor: Any, tensor_list: List[Any], op: int = ReduceOp.SUM,
                   group: Optional[Group] = None, sync_op: bool = True) -> Task:
    """Reduce ``tensor_list[i]`` across the group into group rank i's ``tensor``."""
    g = member_group(group, "reduce_scatter")
    xp = g.backend.xp
    out, finish = _arrays.recv_buffer(tensor, xp, "reduce_scatter", "tensor")
    plan = _reduction(g, out.dtype, op, "reduce_scatter")
    send = _arrays.one_per_rank(tensor_list, g.nranks, out, xp, "reduce_scatter", "tensor_list")
    if debug.enabled:
        debug.check(g, "reduce_scatter", out, op=op)
    if out.size == 0:
        return _skip(g, "reduce_scatter")
    return _run(g, "reduce_scatter", g.backend.reduce_scatter, (out, send, plan), finish, sync_op)


def alltoall(out_tensor_list: List[Any], in_tensor_list: List[Any], group: Optional[Group] = None,
             sync_op: bool = True) -> Task:
    """Send ``in_tensor_list[j]`` to group rank j; receive rank i's into ``out_tensor_list[i]``.

    All input tensors share one shape and dtype; ``out_tensor_list`` is empty (filled with new
    tensors) or holds one such writeable tensor per rank.
    """
    g = member_group(group, "alltoall")
    xp = g.backend.xp
    items = _arrays.check_list(in_tensor_list, g.nranks, "alltoall", "in_tensor_list", allow_empty=False)
    first = _arrays.array_of(items[0], xp, "alltoall", "in_tensor_list[0]")
    send = _arrays.one_per_rank(items, g.nranks, first, xp, "alltoall", "in_tensor_list",
                                like_name="in_tensor_list[0]")
    _arrays.check_list(out_tensor_list, g.nranks, "alltoall", "out_tensor_list", allow_empty=True)
    blocks = xp.empty_like(send)
    deliver = _arrays.fill_list(out_tensor_list, blocks, items[0], xp, "alltoall", "out_tensor_list")
    if debug.enabled:
        debug.check(g, "alltoall", first)
    if first.size == 0:
        return _skip(g, "alltoall", deliver)
    return _run(g, "alltoall", g.backend.alltoall, (blocks, send), deliver, sync_op)


def _peer(g: Group, rank: int, fn: str, arg: str) -> int:
    peer = _group_rank(g, rank, fn, arg)
    if peer == g.rank:
        raise ValueError(f"pycoll.distributed.{fn}: {arg}={rank} is this rank itself")
    return peer


def send(tensor: Any, dst: int = 0, group: Optional[Group] = None, sync_op: bool = True) -> Task:
    """Send ``tensor`` to rank ``dst``, which must post a matching ``recv``."""
    g = member_group(group, "send")
    xp = g.backend.xp
    peer = _peer(g, dst, "send", "dst")
    buf = _arrays.send_buffer(tensor, xp, "send", "tensor")
    if buf.size == 0:
        return _skip(g, "send")
    return _run(g, "send", g.backend.send, (buf, peer, _P2P_TAG), None, sync_op)


def recv(tensor: Any, src: int = 0, group: Optional[Group] = None, sync_op: bool = True) -> Task:
    """Receive into ``tensor`` what rank ``src`` sends (same size and dtype)."""
    g = member_group(group, "recv")
    xp = g.backend.xp
    peer = _peer(g, src, "recv", "src")
    buf, finish = _arrays.recv_buffer(tensor, xp, "recv", "tensor")
    if buf.size == 0:
        return _skip(g, "recv")
    return _run(g, "recv", g.backend.recv, (buf, peer, _P2P_TAG), finish, sync_op)


def isend(tensor: Any, dst: int, group: Optional[Group] = None) -> Task:
    """``send`` that returns at once with a pending task."""
    return send(tensor, dst, group, sync_op=False)


def irecv(tensor: Any, src: Optional[int] = None, group: Optional[Group] = None) -> Task:
    """``recv`` that returns at once with a pending task."""
    return recv(tensor, 0 if src is None else src, group, sync_op=False)


def barrier(group: Optional[Group] = None) -> None:
    """Block until every rank of the group has entered the barrier."""
    g = member_group(group, "barrier")
    if debug.enabled:
        debug.check(g, "barrier", _NOTHING)
    _run(g, "barrier", g.backend.barrier, (), None, True)
