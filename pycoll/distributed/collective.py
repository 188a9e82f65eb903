"""The paddle-style collectives: validate on the calling rank, start the engine, wait or return a task.

Every collective works in place on a ``pycoll.Tensor`` or an array of the group's engine
(``numpy.ndarray`` on the cpu backend, ``cupy.ndarray`` on nccl). ``src``/``dst`` are global
ranks (paddle's convention), translated to the group's ranks here. On a rank outside ``group``
every call but ``all_gather`` returns at once, its arguments unread, as paddle's and torch's do
(paddle's ``all_gather`` raises a RuntimeError there, and so does pycoll's). With ``sync_op=True`` a call
returns once its result is in place (on nccl: once it is queued on the current stream, which
orders everything after it) as a completed :class:`Task`; with ``sync_op=False`` it returns a
pending :class:`Task` at once, which the group keeps (with every array the call touches) until
it is complete. ``op`` is a ``ReduceOp``. An engine's failure is raised as a
:class:`pycoll.CollectiveError` naming the call, its group and this rank.

A read-only output (which only its rank can see) does not put the group out of step: the rank
takes part with a scratch buffer and raises a ValueError naming it, left unchanged (see
:func:`_launch`); the call went through, so it is not noted in ``Group.refused``.
"""
from __future__ import annotations

import math
from typing import Any, Callable, List, Optional, Tuple

import numpy as np

from pycoll.backends.reduce_op import ReduceOp
from pycoll.distributed import _arrays, agreement, alltoall_sizes, call_peers, check, peer_blocks, verdict
from pycoll.distributed._failure import call_failed
from pycoll.distributed.env import member_group, not_a_member, outside, world_group
from pycoll.distributed.group import Group, as_rank
from pycoll.distributed.task import (POINT_TO_POINT, COMPLETED, Task, poll, retire, take_failure,
                                     wait_earlier_collectives, wait_overlapping)
from pycoll.distributed.watchdog import watchdog

def _begin(group: Optional[Group], fn: str, reads: Tuple[Any, ...] = (),
           writes: Tuple[Any, ...] = (), p2p: bool = False) -> Optional[Group]:
    """The group of a call about to be made, None on a rank outside it (the call returns at
    once): the call is numbered (refused calls too; ``p2p``: a send or receive, counted apart
    from the collectives), completed tasks are let go, a dropped task's error is raised in
    place of a collective (:func:`_refuse_for_failure`; a send or receive goes on, so that its
    messages keep pairing up, and leaves it to the next collective), and tasks in flight that
    write what the call reads or writes (``reads``, ``writes``: the caller's tensors, or lists
    of them), or read what it writes, are waited for (:func:`task.wait_overlapping`) before
    anything of the call is staged.

    A call then refuses bad input before anything moves; each collective catches that refusal
    (its checks sit in a ``try``, free when nothing is raised) to note it in
    ``Group.refused`` (:meth:`Group.note_refused`): peers stalled in the call it refused are
    then named by the stall notices within seconds instead of waiting for ``PYCOLL_TIMEOUT``.
    Refusals every rank of the group shares (a root's verdict, alltoall's sizes) leave no peer
    waiting and are not noted."""
    if group is None:  # the world: the common case, without the checks a group argument needs
        g = world_group(fn)
    elif outside(group, fn):
        return None
    else:
        g = member_group(group, fn)
    g.seq += 1
    if p2p:
        g.p2p_calls += 1
    g.touches = (reads, writes)
    if g.pending:
        retire(g)
        if g.pending:
            wait_overlapping(g, g.touches)  # the group's calls in call order where they share memory
    if g.failure is not None and not p2p:
        _refuse_for_failure(g, fn)
    return g


def _refuse_for_failure(g: Group, fn: str) -> None:
    """Raise the error a dropped task of ``g`` met, in place of collective ``fn``, which this
    rank then has not made: a refusal of it (:func:`_refused`), so that peers that made it end
    the job, naming it, instead of pairing every later call with the wrong one."""
    failure = take_failure(g)
    _refused(g, fn, failure)
    raise failure


def _refused(g: Group, fn: str, exc: BaseException) -> None:
    """This rank refused collective ``fn`` on ``g`` over ``exc``: noted (``Group.note_refused``),
    then, with peers, settled with them: under ``PYCOLL_CHECK`` by taking part in their
    comparison as the refused call (every rank then raises; none makes it), otherwise, under
    MPI, checked with them (:mod:`refusal_checks`): the job ends here if a peer made the call
    instead of refusing it too."""
    g.note_refused(exc)
    if g.nranks == 1:
        return
    problem = f"{type(exc).__name__}: {exc}"
    if check.enabled:
        watchdog.name, watchdog.group = fn, g  # the comparison runs under the watchdog, as in _launch
        try:
            _settle(check.refused(g, fn, problem))
        finally:
            watchdog.group = None
        return
    refusals = watchdog.refusals
    if refusals is not None:
        refusals.confirm(g, fn, problem, watchdog.live_groups(), watchdog.exits.poll)


def _settle(comparison: check.Comparison) -> check.Comparison:
    """Wait for ``PYCOLL_CHECK``'s ``comparison`` (within the group's timeout, as a blocking call)."""
    if not comparison.join_stream() and not poll(comparison, comparison.group.engine.timeout):
        raise comparison.timed_out()
    return comparison


def _plan(g: Group, dtype: Any, op: Any, fn: str) -> Any:
    """The engine's plan for reducing ``dtype`` with ``op``; TypeError/ValueError if it can't."""
    try:
        return g.engine.plan(dtype, op)
    except TypeError as exc:
        raise TypeError(f"pycoll.distributed.{fn}: tensor: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"pycoll.distributed.{fn}: {exc}") from None


def can_reduce(dtype: Any, op: int = ReduceOp.SUM, group: Optional[Group] = None) -> bool:
    """Whether ``group``'s backend (the world's by default) can reduce ``dtype`` with ``op``."""
    return member_group(group, "can_reduce").engine.can_reduce(np.dtype(dtype), op)


def _group_rank(group: Group, rank: Any, fn: str, arg: str) -> int:
    """The group rank of global rank ``rank`` (any integer: ``as_rank``, as every rank argument);
    ValueError naming ``arg`` when it is not a member."""
    r = group.index_of(as_rank(rank, f"pycoll.distributed.{fn}", arg))
    if r < 0:
        raise ValueError(f"pycoll.distributed.{fn}: {arg}={rank} is not a rank of {group.describe()}")
    return r


def _launch(g: Group, fn: str, method: Any, args: Tuple[Any, ...], arr: Any, sync_op: bool,
            finish: Optional[Callable[[], None]] = None, *, op: Any = None,
            root: Optional[int] = None, root_arg: Optional[str] = None, compared: bool = True,
            moves: Optional[bool] = None, agrees: bool = False) -> Task:
    """Run the engine's ``method(*args, blocking, seq)`` under the watchdog (even a
    non-blocking start may block: NCCL connects to its peers at a communicator's first call),
    after ``PYCOLL_CHECK``'s comparison when on and ``compared``; ``arr`` is what the check
    describes, and unless ``moves`` says otherwise nothing moves when it is empty. A task (owned
    by the group) unless ``sync_op``. ``root`` (a global rank) names a rooted call's root. With
    ``agrees`` (the calls whose ranks give tensors of one dtype and size) the call compares ``arr``'s
    dtype and size and ``op`` across the ranks (:func:`agreement.on_call`: on its schedule, a
    non-blocking one in its task; off it, into the group's digest), and with ``root_arg`` (its
    argument's name: broadcast's and reduce's, which have no verdict) the root too.

    ``finish`` runs once the call is complete; an :class:`_arrays.Refusal` (a read-only output,
    received into scratch) raises then in a blocking call, and in a non-blocking one at once, as a
    Paddle or torch user expects, once started: the group keeps its task and scratch until done."""
    watchdog.name, watchdog.group = fn, g
    g.settled = g.seq  # past its checks: what refusal_checks answers a peer that refused it
    if root is not None:
        call_peers.note(g, root)  # for the stall notices: ranks given different roots never match
    comparison = None
    try:
        if compared and check.enabled:
            comparison = check.compare(g, fn, arr, op, root, sync_op)
            if sync_op:  # a mismatch raises on every rank alike; a non-blocking call's task settles it
                _settle(comparison).raise_on_difference()
                comparison = None
        elif agrees and g.nranks > 1:
            comparison = agreement.on_call(g, fn, root_arg, 0 if root is None else g.index_of(root),
                                           agreement.signature(arr, op), sync_op)
        try:
            request = method(*args, sync_op, g.seq) if (arr.size if moves is None else moves) else None
        except Exception as exc:
            raise call_failed(fn, g.seq, g, exc) from exc
    finally:
        watchdog.group = None
    if comparison is not None:
        request = check.Checked(comparison, request)
    if sync_op or request is None:
        if finish is not None:
            finish()  # (a Refusal raises here)
        if sync_op and g.pending and fn not in POINT_TO_POINT:
            wait_earlier_collectives(g)
            retire(g)
        return COMPLETED
    refused = finish if type(finish) is _arrays.Refusal else None
    task = Task(request, g, fn, g.seq, finish if refused is None else refused.then, (*args, arr), g.touches,
                g.collectives_made)
    g.pending.append(task)
    if refused is not None:
        raise refused.error
    return task


def all_reduce(tensor: Any, op: int = ReduceOp.SUM, group: Optional[Group] = None,
               sync_op: bool = True) -> Task:
    """Reduce ``tensor`` across the group; every rank ends with the result, in place."""
    g = _begin(group, "all_reduce", writes=(tensor,))
    if g is None:
        return COMPLETED
    backend = g.engine
    try:
        buf, finish = _arrays.recv_buffer(tensor, backend.xp, "all_reduce", "tensor")
        plan = _plan(g, buf.dtype, op, "all_reduce")
    except (TypeError, ValueError) as exc:
        _refused(g, "all_reduce", exc)
        raise
    if sync_op and finish is None and buf.size and not check.enabled and not g.pending:
        # _launch's blocking path, inlined: this is data-parallel training's hot call, and every
        # Python call saved here is measurable against MPI's few microseconds
        watchdog.name, watchdog.group = "all_reduce", g
        g.settled = g.seq
        try:
            if g.nranks > 1:
                agreement.on_call(g, "all_reduce", None, 0, agreement.signature(buf, op), True)
            try:
                backend.all_reduce(buf, plan, True, g.seq)
            except Exception as exc:
                raise call_failed("all_reduce", g.seq, g, exc) from exc
        finally:
            watchdog.group = None
        return COMPLETED
    return _launch(g, "all_reduce", backend.all_reduce, (buf, plan), buf, sync_op, finish, op=op, agrees=True)


def _root_verdict(g: Group, fn: str, root: int, problem: Optional[Exception], arg: Optional[str] = None,
                  received: Any = None) -> None:
    """:func:`verdict.shared`: every rank raises the root's refusal of its list (with ``arg``,
    ranks that name different roots, or ``received`` arrays of different dtypes or sizes, all
    raise too). A group of one has no peer to tell, so its root raises without the collectives
    (and the host's wait for them) that telling takes."""
    if g.nranks > 1:
        verdict.shared(g, fn, root, problem, arg, received)
    elif problem is not None:
        raise problem


def _buffer(tensor: Any, xp: Any, fn: str, receives: bool) -> Tuple[Any, Optional[Callable[[], None]]]:
    """``tensor``'s buffer for a rooted call: received into (with its copy-back) or only sent."""
    if receives:
        return _arrays.recv_buffer(tensor, xp, fn, "tensor")
    return _arrays.send_buffer(tensor, xp, fn, "tensor"), None


def reduce(tensor: Any, dst: int, op: int = ReduceOp.SUM, group: Optional[Group] = None,
           sync_op: bool = True) -> Task:
    """Reduce ``tensor`` across the group into rank ``dst``'s ``tensor``; other ranks' are unchanged."""
    g = _begin(group, "reduce", writes=(tensor,))
    if g is None:
        return COMPLETED
    xp = g.engine.xp
    try:
        root = _group_rank(g, dst, "reduce", "dst")
        buf, finish = _buffer(tensor, xp, "reduce", receives=g.rank == root)
        plan = _plan(g, buf.dtype, op, "reduce")
    except (TypeError, ValueError) as exc:
        _refused(g, "reduce", exc)
        raise
    return _launch(g, "reduce", g.engine.reduce, (buf, root, plan), buf, sync_op, finish,
                   op=op, root=dst, root_arg="dst", agrees=True)


def broadcast(tensor: Any, src: int, group: Optional[Group] = None, sync_op: bool = True) -> Task:
    """Copy rank ``src``'s ``tensor`` into every rank's ``tensor``."""
    g = _begin(group, "broadcast", writes=(tensor,))
    if g is None:
        return COMPLETED
    xp = g.engine.xp
    try:
        root = _group_rank(g, src, "broadcast", "src")
        buf, finish = _buffer(tensor, xp, "broadcast", receives=g.rank != root)
    except (TypeError, ValueError) as exc:
        _refused(g, "broadcast", exc)
        raise
    return _launch(g, "broadcast", g.engine.broadcast, (buf, root), buf, sync_op, finish, root=src,
                   root_arg="src", agrees=True)


def all_gather(tensor_list: List[Any], tensor: Any, group: Optional[Group] = None,
               sync_op: bool = True) -> Task:
    """Gather every rank's ``tensor`` into ``tensor_list`` (entry i from group rank i).

    An empty list gets one new tensor per rank appended; a list of one correctly shaped,
    writeable tensor per rank is written in place. One tensor (paddle's) is filled in place with
    the ranks' tensors stacked on axis 0: shaped ``[nranks, *tensor.shape]`` (paddle asks only for
    that many elements, so ``[nranks * n, ...]`` serves too).
    On a rank outside ``group`` it raises a RuntimeError, as paddle's ``all_gather`` does.
    """
    g = _begin(group, "all_gather", (tensor,), (tensor_list,))
    if g is None:
        raise not_a_member(group, "all_gather")
    xp = g.engine.xp
    try:
        arr = _arrays.send_buffer(tensor, xp, "all_gather", "tensor")
        blocks, deliver, own = None, None, _arrays.own_block(g.engine, g.rank)
        if not isinstance(tensor_list, (list, tuple)):
            try:
                out = _arrays.array_of(tensor_list, xp, "all_gather", "tensor_list")
            except TypeError:
                raise TypeError(f"pycoll.distributed.all_gather: tensor_list must be a list (empty, or one tensor "
                                f"per rank) or one tensor to hold the {g.nranks} ranks' tensors, got "
                                f"{type(tensor_list).__name__}") from None
            if out.size != g.nranks * arr.size:
                raise ValueError(f"pycoll.distributed.all_gather: tensor_list is one tensor of shape "
                                 f"{list(out.shape)}; it needs the group's {g.nranks} tensors of shape "
                                 f"{list(arr.shape)}: {g.nranks * arr.size} elements, stacked on axis 0 (shape "
                                 f"{[g.nranks, *arr.shape]}) or concatenated (shape "
                                 f"{[g.nranks * arr.shape[0], *arr.shape[1:]] if arr.ndim else [g.nranks]})")
            if out.dtype != arr.dtype:  # (a ValueError, as a list entry's)
                raise ValueError(f"pycoll.distributed.all_gather: tensor_list is one tensor of dtype {out.dtype}; it "
                                 f"must have tensor's dtype, {arr.dtype}")
            blocks = _arrays.received_into(out, arr, own)
            if blocks is None:
                tensor_list = _arrays.parts(out, g.nranks, xp, "all_gather", "tensor_list", arr.shape)
        if blocks is None:
            _arrays.check_list(tensor_list, g.nranks, "all_gather", "tensor_list", allow_empty=True)
            blocks, deliver = _arrays.gather_blocks(tensor_list, arr, g.nranks, tensor, xp, "all_gather",
                                                    "tensor_list", own)
    except (TypeError, ValueError) as exc:
        _refused(g, "all_gather", exc)
        raise
    return _launch(g, "all_gather", g.engine.all_gather, (blocks, arr), arr, sync_op, deliver, agrees=True)


def gather(tensor: Any, gather_list: Optional[List[Any]] = None, dst: int = 0,
           group: Optional[Group] = None, sync_op: bool = True) -> Task:
    """Gather every rank's ``tensor`` into ``gather_list`` on rank ``dst`` (entry i from group
    rank i); other ranks' ``gather_list`` is left as it is.

    On ``dst`` an empty list gets one new tensor per rank appended; a list of one correctly
    shaped, writeable tensor per rank is written in place.
    """
    g = _begin(group, "gather", (tensor,), (gather_list,))
    if g is None:
        return COMPLETED
    xp = g.engine.xp
    try:
        root = _group_rank(g, dst, "gather", "dst")
        arr = _arrays.send_buffer(tensor, xp, "gather", "tensor")
    except (TypeError, ValueError) as exc:
        _refused(g, "gather", exc)
        raise
    blocks, deliver, problem = None, None, None
    if g.rank == root:
        try:
            if gather_list is None:
                raise ValueError(f"pycoll.distributed.gather: gather_list is None on the destination "
                                 f"rank {dst}; pass a list (empty, or one tensor per rank)")
            _arrays.check_list(gather_list, g.nranks, "gather", "gather_list", allow_empty=True)
            blocks, deliver = _arrays.gather_blocks(gather_list, arr, g.nranks, tensor, xp, "gather",
                                                    "gather_list")
        except (TypeError, ValueError) as exc:
            problem = exc
    compared = _compare_first(g, "gather", arr, sync_op, root=dst)
    _root_verdict(g, "gather", root, problem)
    return _launch(g, "gather", g.engine.gather, (blocks, arr, root), arr, sync_op, deliver, root=dst,
                   compared=not compared, agrees=not compared)


def scatter(tensor: Any, tensor_list: Optional[List[Any]] = None, src: int = 0,
            group: Optional[Group] = None, sync_op: bool = True) -> Task:
    """Rank ``src`` sends ``tensor_list[i]`` to group rank i, which receives it into ``tensor``.

    ``tensor_list`` is read on ``src`` only (one tensor per rank, each shaped like ``tensor``; or,
    as paddle takes it, one tensor of their parts: ``[nranks, *tensor.shape]``).
    """
    return scatter_from(tensor, tensor_list, src, group, sync_op, "scatter", "tensor_list")


def scatter_from(tensor: Any, tensor_list: Any, src: int, group: Optional[Group], sync_op: bool, fn: str,
                 arg: str) -> Task:
    """:func:`scatter`, a refusal of the source's list naming the caller's function ``fn`` and
    argument ``arg`` (``stream.scatter``'s ``tensor_or_tensor_list``)."""
    g = _begin(group, "scatter", (tensor_list,), (tensor,))
    if g is None:
        return COMPLETED
    xp = g.engine.xp
    try:
        root = _group_rank(g, src, "scatter", "src")
        out, finish = _arrays.recv_buffer(tensor, xp, "scatter", "tensor")
    except (TypeError, ValueError) as exc:
        _refused(g, "scatter", exc)
        raise
    send, problem = None, None
    if g.rank == root:
        try:
            if tensor_list is None:
                raise ValueError(f"pycoll.distributed.{fn}: {arg} is None on the source rank {src}; it needs "
                                 f"one tensor per rank")
            tensor_list = _arrays.listed(tensor_list, g.nranks, xp, fn, arg, out)  # paddle's
            if _arrays.separate_blocks(g.engine):  # NCCL sends each block from where it is
                send = _arrays.send_blocks(tensor_list, g.nranks, out, xp, fn, arg)
            else:
                send = _arrays.one_per_rank(tensor_list, g.nranks, out, xp, fn, arg)
        except (TypeError, ValueError) as exc:
            problem = exc
    compared = _compare_first(g, "scatter", out, sync_op, root=src)
    _root_verdict(g, "scatter", root, problem, "src", out)  # (a larger out once got its block and zeros)
    return _launch(g, "scatter", g.engine.scatter, (out, send, root), out, sync_op, finish, root=src,
                   compared=not compared)


def reduce_scatter(tensor: Any, tensor_list: List[Any], op: int = ReduceOp.SUM,
                   group: Optional[Group] = None, sync_op: bool = True) -> Task:
    """Reduce ``tensor_list[i]`` across the group into group rank i's ``tensor`` (``tensor_list``
    may be one tensor of the parts, as paddle takes it)."""
    g = _begin(group, "reduce_scatter", (tensor_list,), (tensor,))
    if g is None:
        return COMPLETED
    xp = g.engine.xp
    try:
        out, finish = _arrays.recv_buffer(tensor, xp, "reduce_scatter", "tensor")
        plan = _plan(g, out.dtype, op, "reduce_scatter")
        parts = _arrays.listed(tensor_list, g.nranks, xp, "reduce_scatter", "tensor_list", out)  # paddle's
        send = _arrays.one_per_rank(parts, g.nranks, out, xp, "reduce_scatter", "tensor_list",
                                    own=_arrays.own_block(g.engine, g.rank))
    except (TypeError, ValueError) as exc:
        _refused(g, "reduce_scatter", exc)
        raise
    return _launch(g, "reduce_scatter", g.engine.reduce_scatter, (out, send, plan), out, sync_op,
                   finish, op=op, agrees=True)


def _compare_first(g: Group, fn: str, described: Any, sync_op: bool, root: Optional[int] = None) -> bool:
    """``PYCOLL_CHECK``'s comparison (when on: True), made before the collectives a call makes
    ahead of its data (an alltoall's exchange of sizes, a gather's or scatter's verdict from the
    root), so that another call on a peer, or a refusal (:func:`_refused`), is caught first."""
    if not check.enabled:
        return False
    watchdog.name, watchdog.group = fn, g
    try:
        _settle(check.compare(g, fn, described, None, root, sync_op)).raise_on_difference()
    finally:
        watchdog.group = None
    return True


_MIXED_BLOCKS = np.empty(0, np.uint8)  # alltoall's blocks differ from rank to rank: PYCOLL_CHECK compares the call


def alltoall(out_tensor_list: List[Any], in_tensor_list: List[Any], group: Optional[Group] = None,
             sync_op: bool = True) -> Task:
    """Send ``in_tensor_list[j]`` to group rank j; receive rank i's into ``out_tensor_list[i]``.

    Each block may have its own shape and dtype (what rank i sends rank j must fit what j
    expects from i: :mod:`peer_blocks`); ``out_tensor_list`` is empty (filled with new tensors
    of the senders' shapes) or holds one writeable tensor per rank. Two tensors (paddle's
    ``alltoall(out_tensor, in_tensor)``) exchange their equal blocks along axis 0, as
    :func:`alltoall_single` does.
    """
    if not isinstance(out_tensor_list, (list, tuple)) and not isinstance(in_tensor_list, (list, tuple)):
        return alltoall_single(out_tensor_list, in_tensor_list, None, None, group, sync_op)
    fn = "alltoall"
    g = _begin(group, fn, (in_tensor_list,), (out_tensor_list,))
    if g is None:
        return COMPLETED
    xp = g.engine.xp
    try:
        if isinstance(in_tensor_list, list) and not in_tensor_list and isinstance(out_tensor_list, (list, tuple)) \
                and len(out_tensor_list) == g.nranks:
            raise ValueError(f"pycoll.distributed.{fn}: in_tensor_list (the second argument) is empty and "
                             f"out_tensor_list holds {g.nranks} tensors: paddle's order is "
                             f"{fn}(out_tensor_list, in_tensor_list), the tensors to send second")
        items = _arrays.check_list(in_tensor_list, g.nranks, fn, "in_tensor_list", allow_empty=False)
        sends = [_arrays.send_buffer(item, xp, fn, f"in_tensor_list[{j}]") for j, item in enumerate(items)]
        _arrays.check_list(out_tensor_list, g.nranks, fn, "out_tensor_list", allow_empty=True)
        targets, refused = _arrays.output_targets(out_tensor_list, xp, fn, "out_tensor_list")
        if any(a.ndim > peer_blocks.MAX_DIMS for a in (*sends, *(targets or ()))):
            peer_blocks.rows(fn, sends, targets)  # refuses, naming the block (the exchange's rows wait)
    except (TypeError, ValueError) as exc:
        _refused(g, "alltoall", exc)
        raise
    _compare_first(g, fn, _MIXED_BLOCKS, sync_op)
    block = alltoall_sizes.uniform_block(sends, targets)
    uniform = alltoall_sizes.everywhere(g, fn, alltoall_sizes.block_record(block), alltoall_sizes.BLOCK_WIDTH)
    incoming = [block] * g.nranks if uniform else peer_blocks.agree(
        g, fn, peer_blocks.rows(fn, sends, targets), expects=targets is not None)
    # the outputs' own memory when they tile one buffer (their sizes are agreed) and none is
    # read-only, else pycoll's (scratch, delivered nowhere, with a read-only one)
    out = theirs = _arrays.region(targets, xp) if targets is not None and refused is None else None
    deliver = None
    if out is None:
        if uniform:  # every block is one of ours
            out = xp.empty((g.nranks,) + sends[0].shape, sends[0].dtype)
            views = [out[i, ...] for i in range(g.nranks)]
        else:
            out = xp.empty(sum(block[0] for block in incoming), np.uint8)
            views, offset = [], 0
            for block in incoming:  # block i of ``out`` read as what rank i sends
                views.append(out[offset:offset + block[0]].view(peer_blocks.dtype_of(block, sends[0].dtype))
                             .reshape(block[3]))
                offset += block[0]
        deliver = refused or _arrays.deliver_blocks(out_tensor_list, views, targets, items[0], xp)
    send = _alltoall_send(g, sends, theirs, xp)
    return _launch(g, fn, g.engine.alltoallv, (out, send, [a.nbytes for a in sends],
                                                [block[0] for block in incoming]),
                   _MIXED_BLOCKS, sync_op, deliver, compared=False, moves=True)


def _alltoall_send(g: Group, sends: List[Any], out: Optional[Any], xp: Any) -> Any:
    """What alltoall sends: the blocks' own memory when they tile one buffer, or (to an engine
    with ``separate_blocks``) as they are, else one buffer of their bytes. ``out`` is the
    caller's memory received into (None: pycoll's, new); what overlaps it (an alltoall in place)
    is copied first, since a block may be received into before it has been sent."""
    send = _arrays.region(sends, xp)
    if send is None:
        if _arrays.separate_blocks(g.engine):
            return sends if out is None else [a.copy() if _arrays.overlap(a, out) else a for a in sends]
        return xp.concatenate([a.reshape(-1).view(np.uint8) for a in sends])
    return send.copy() if out is not None and _arrays.overlap(send, out) else send


def alltoall_single(out_tensor: Any, in_tensor: Any, in_split_sizes: Optional[List[int]] = None,
                    out_split_sizes: Optional[List[int]] = None, group: Optional[Group] = None,
                    sync_op: bool = True) -> Task:
    """Split ``in_tensor`` along dim 0 and send part j to group rank j; receive rank i's part
    into the i-th part of ``out_tensor``.

    ``in_split_sizes[j]`` rows go to rank j and ``out_split_sizes[i]`` rows come from rank i
    (None: dim 0 split evenly, so it must divide by the group's size); what rank i sends to rank
    j must be what j expects from i. Both tensors have one dtype and the same size beyond dim 0.
    """
    fn = "alltoall_single"
    g = _begin(group, fn, (in_tensor,), (out_tensor,))
    if g is None:
        return COMPLETED
    xp = g.engine.xp
    try:
        send = _arrays.send_buffer(in_tensor, xp, fn, "in_tensor")
        out, finish = _arrays.recv_buffer(out_tensor, xp, fn, "out_tensor")
        for name, arr in (("in_tensor", send), ("out_tensor", out)):
            if arr.ndim == 0:
                raise ValueError(f"pycoll.distributed.{fn}: {name} is 0-dimensional; it is split along dim 0")
        if out.dtype != send.dtype or out.shape[1:] != send.shape[1:]:
            raise TypeError(f"pycoll.distributed.{fn}: out_tensor ({out.dtype}{list(out.shape)}) must have "
                            f"in_tensor's dtype and size beyond dim 0 ({send.dtype}{list(send.shape)})")
        row = send.itemsize * math.prod(send.shape[1:])
        sent = alltoall_sizes.split_rows(in_split_sizes, send, g.nranks, fn, "in_split_sizes", "in_tensor")
        received = alltoall_sizes.split_rows(out_split_sizes, out, g.nranks, fn, "out_split_sizes", "out_tensor")
    except (TypeError, ValueError) as exc:
        _refused(g, "alltoall_single", exc)
        raise
    described = send[:0]
    _compare_first(g, fn, described, sync_op)
    if not alltoall_sizes.everywhere(g, fn, alltoall_sizes.uniform_rows(sent, received), 1):
        peer_blocks.agree_counts(g, fn, sent, received)
    return _launch(g, fn, g.engine.alltoallv,
                   (out, send, [n * row for n in sent], [n * row for n in received]),
                   described, sync_op, finish, compared=False, moves=True)


def barrier(group: Optional[Group] = None) -> None:
    """Block until every rank of the group has entered the barrier (after the group's own
    non-blocking collectives have completed). Sends and receives in flight go on beside it, as
    on paddle's and torch's NCCL groups (their own communicators): ``t = irecv(x, src=0);
    barrier(); ...; t.wait()`` with the matching send made after the barrier is a valid program."""
    g = _begin(group, "barrier")
    if g is None:
        return
    wait_earlier_collectives(g)
    _launch(g, "barrier", g.engine.barrier, (), check.BARRIER_TOKEN, True)
