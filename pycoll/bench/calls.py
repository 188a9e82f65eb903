"""How each collective runs once: through pycoll's API, and through the raw engine call.

``PYCOLL[op](ctx, buffers, inplace)`` and ``RAW[op](ctx, buffers, inplace)`` return a
callable that runs ``op`` once on the buffers laid out by :mod:`pycoll.bench.ops`.

pycoll's all_reduce, broadcast and reduce work in place only, so their out-of-place run copies
the input into the output buffer and then runs in place. The copy is inside the timed region:
it is what an out-of-place result costs through pycoll's API (for broadcast and reduce only the
root copies; the other ranks' buffers are only read or only written). The raw calls are
mpi4py's on a duplicate of ``COMM_WORLD``, each the engine's cheapest way to the same result:
``MPI.IN_PLACE`` where MPI has it, a true out-of-place call where it has that, and for
broadcast (one buffer in MPI) the same root-side copy. AVG is MPI's SUM followed by a division,
as pycoll's engine does it.

With the nccl backend the buffers are CuPy arrays and the raw calls (``RAW_NCCL``) are the
``cupy.cuda.nccl.NcclCommunicator`` methods on the world group's own communicator, queued on
the current stream as pycoll's are: true out-of-place calls, in place by passing one pointer
twice; scatter, alltoall and sendrecv are NCCL send/recv groups, as NCCL has no such
collective. Every call here returns once queued; the runner synchronizes the stream.
"""
from __future__ import annotations

from typing import Callable, Dict

import numpy as np
from mpi4py import MPI

import pycoll.distributed as dist
from pycoll.backends.reduce_op import ReduceOp
from pycoll.bench.ops import Buffers, Context

Run = Callable[[], None]
Factory = Callable[[Context, Buffers, bool], Run]

_MPI_OPS = {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.MAX: MPI.MAX,
            ReduceOp.MIN: MPI.MIN, ReduceOp.PROD: MPI.PROD}


def _as_bytes(arr: np.ndarray) -> list:
    """An mpi4py buffer that moves ``arr`` as bytes (any dtype, as pycoll's engine does)."""
    return [arr, MPI.BYTE]


def _then_average(ctx: Context, call: Run, out: np.ndarray) -> Run:
    if ctx.redop != ReduceOp.AVG:
        return call
    n = ctx.nranks

    def run() -> None:
        call()
        np.divide(out, n, out=out)
    return run


def _copy_then(src: np.ndarray, dst: np.ndarray, call: Run) -> Run:
    def run() -> None:
        dst[...] = src  # NumPy or CuPy, on the current stream
        call()
    return run


# -- through pycoll ---------------------------------------------------------------------

def _all_reduce(ctx: Context, b: Buffers, inplace: bool) -> Run:
    recv, op = b.recv, ctx.redop
    call = lambda: dist.all_reduce(recv, op)  # noqa: E731
    return call if inplace else _copy_then(b.send, recv, call)


def _broadcast(ctx: Context, b: Buffers, inplace: bool) -> Run:
    recv, root = b.recv, ctx.root
    call = lambda: dist.broadcast(recv, root)  # noqa: E731
    return call if inplace or ctx.rank != root else _copy_then(b.send, recv, call)


def _reduce(ctx: Context, b: Buffers, inplace: bool) -> Run:
    root, op = ctx.root, ctx.redop
    if not inplace and ctx.rank != root:  # a non-root's tensor is only read: no copy
        send = b.send
        return lambda: dist.reduce(send, root, op)
    recv = b.recv
    call = lambda: dist.reduce(recv, root, op)  # noqa: E731
    return call if inplace else _copy_then(b.send, recv, call)


def _all_gather(ctx: Context, b: Buffers, inplace: bool) -> Run:
    outs = b.blocks(b.recv, ctx.nranks)
    mine = outs[ctx.rank] if inplace else b.send
    return lambda: dist.all_gather(outs, mine)


def _reduce_scatter(ctx: Context, b: Buffers, inplace: bool) -> Run:
    ins = b.blocks(b.work if inplace else b.send, ctx.nranks)
    out, op = (ins[ctx.rank] if inplace else b.recv), ctx.redop
    return lambda: dist.reduce_scatter(out, ins, op)


def _scatter(ctx: Context, b: Buffers, inplace: bool) -> Run:
    ins = b.blocks(b.work if inplace else b.send, ctx.nranks)
    out, root = (ins[ctx.rank] if inplace else b.recv), ctx.root
    send_list = ins if ctx.rank == root else None
    return lambda: dist.scatter(out, send_list, root)


def _alltoall(ctx: Context, b: Buffers, inplace: bool) -> Run:
    ins = b.blocks(b.work if inplace else b.send, ctx.nranks)
    outs = ins if inplace else b.blocks(b.recv, ctx.nranks)
    return lambda: dist.alltoall(outs, ins)


def _sendrecv(ctx: Context, b: Buffers, inplace: bool) -> Run:
    send, recv, nxt, prv = b.send, b.recv, ctx.next, ctx.prev

    def run() -> None:
        task = dist.isend(send, nxt)
        dist.recv(recv, prv)
        task.wait()
    return run


PYCOLL: Dict[str, Factory] = {
    "all_reduce": _all_reduce, "reduce": _reduce, "broadcast": _broadcast,
    "all_gather": _all_gather, "reduce_scatter": _reduce_scatter, "scatter": _scatter,
    "alltoall": _alltoall, "sendrecv": _sendrecv,
}


# -- through the raw engine (mpi4py) ------------------------------------------------------

def _raw_all_reduce(ctx: Context, b: Buffers, inplace: bool) -> Run:
    comm, recv, mop = ctx.comm, b.recv, _MPI_OPS[ctx.redop]
    src = MPI.IN_PLACE if inplace else b.send
    return _then_average(ctx, lambda: comm.Allreduce(src, recv, mop), recv)


def _raw_broadcast(ctx: Context, b: Buffers, inplace: bool) -> Run:
    comm, recv, root = ctx.comm, b.recv, ctx.root
    buf = _as_bytes(recv)
    call = lambda: comm.Bcast(buf, root)  # noqa: E731
    return call if inplace or ctx.rank != root else _copy_then(b.send, recv, call)


def _raw_reduce(ctx: Context, b: Buffers, inplace: bool) -> Run:
    comm, root, mop = ctx.comm, ctx.root, _MPI_OPS[ctx.redop]
    if ctx.rank != root:
        src = b.recv if inplace else b.send
        return lambda: comm.Reduce(src, None, mop, root)
    recv = b.recv
    src = MPI.IN_PLACE if inplace else b.send
    return _then_average(ctx, lambda: comm.Reduce(src, recv, mop, root), recv)


def _raw_all_gather(ctx: Context, b: Buffers, inplace: bool) -> Run:
    comm, recv = ctx.comm, _as_bytes(b.recv)
    src = MPI.IN_PLACE if inplace else _as_bytes(b.send)
    return lambda: comm.Allgather(src, recv)


def _raw_reduce_scatter(ctx: Context, b: Buffers, inplace: bool) -> Run:
    comm, mop = ctx.comm, _MPI_OPS[ctx.redop]
    src, out = (MPI.IN_PLACE, b.work) if inplace else (b.send, b.recv)
    return _then_average(ctx, lambda: comm.Reduce_scatter_block(src, out, mop), out[:b.count])


def _raw_scatter(ctx: Context, b: Buffers, inplace: bool) -> Run:
    comm, root, is_root = ctx.comm, ctx.root, ctx.rank == ctx.root
    if inplace:  # the root's own block stays where it is in its send buffer
        send = _as_bytes(b.work) if is_root else None
        out = MPI.IN_PLACE if is_root else _as_bytes(b.block(b.work, ctx.rank))
    else:
        send, out = (_as_bytes(b.send) if is_root else None), _as_bytes(b.recv)
    return lambda: comm.Scatter(send, out, root)


def _raw_alltoall(ctx: Context, b: Buffers, inplace: bool) -> Run:
    comm = ctx.comm
    src = MPI.IN_PLACE if inplace else _as_bytes(b.send)
    out = _as_bytes(b.work if inplace else b.recv)
    return lambda: comm.Alltoall(src, out)


def _raw_sendrecv(ctx: Context, b: Buffers, inplace: bool) -> Run:
    comm, nxt, prv = ctx.comm, ctx.next, ctx.prev
    send, recv = _as_bytes(b.send), _as_bytes(b.recv)
    return lambda: comm.Sendrecv(send, nxt, recvbuf=recv, source=prv)


RAW: Dict[str, Factory] = {
    "all_reduce": _raw_all_reduce, "reduce": _raw_reduce, "broadcast": _raw_broadcast,
    "all_gather": _raw_all_gather, "reduce_scatter": _raw_reduce_scatter,
    "scatter": _raw_scatter, "alltoall": _raw_alltoall, "sendrecv": _raw_sendrecv,
}


# -- through the raw engine (cupy.cuda.nccl) ----------------------------------------------

def _nccl(ctx: Context) -> tuple:
    """The NcclCommunicator, cupy.cuda.nccl and the current stream's handle."""
    from cupy.cuda import get_current_stream

    from pycoll.backends.nccl import nccl_module

    return ctx.nccl, nccl_module(), get_current_stream().ptr


def _reduction(ctx: Context, out) -> tuple:
    """NCCL's datatype, op and element count for reducing ``out``, and the divide that
    finishes an average where NCCL has no ncclAvg (before 2.10; None otherwise)."""
    from cupy import divide

    from pycoll.backends.nccl import Reduction

    plan = Reduction(out.dtype, ctx.redop)
    n = ctx.nranks
    finish = (lambda: divide(out, n, out=out)) if plan.average else None
    return plan.datatype, plan.op, out.size * plan.factor, finish


def _finished(call: Run, finish) -> Run:
    if finish is None:
        return call

    def run() -> None:
        call()
        finish()
    return run


def _send_recv_group(ctx: Context, transfers: list) -> Run:
    """One NCCL group of ``(is_send, array, peer)`` byte transfers."""
    comm, nccl, stream = _nccl(ctx)
    u8 = nccl.NCCL_UINT8
    plan = [(is_send, arr.data.ptr, arr.nbytes, peer) for is_send, arr, peer in transfers]

    def run() -> None:
        nccl.groupStart()
        try:
            for is_send, ptr, nbytes, peer in plan:
                (comm.send if is_send else comm.recv)(ptr, nbytes, u8, peer, stream)
        finally:
            nccl.groupEnd()
    return run


def _nccl_all_reduce(ctx: Context, b: Buffers, inplace: bool) -> Run:
    comm, _, stream = _nccl(ctx)
    dtype, op, count, finish = _reduction(ctx, b.recv)
    src, dst = (b.recv if inplace else b.send).data.ptr, b.recv.data.ptr
    return _finished(lambda: comm.allReduce(src, dst, count, dtype, op, stream), finish)


def _nccl_broadcast(ctx: Context, b: Buffers, inplace: bool) -> Run:
    comm, nccl, stream = _nccl(ctx)
    src, dst = (b.recv if inplace else b.send).data.ptr, b.recv.data.ptr
    nbytes, root, u8 = b.recv.nbytes, ctx.root, nccl.NCCL_UINT8
    return lambda: comm.broadcast(src, dst, nbytes, u8, root, stream)


def _nccl_reduce(ctx: Context, b: Buffers, inplace: bool) -> Run:
    comm, _, stream = _nccl(ctx)
    dtype, op, count, finish = _reduction(ctx, b.recv)
    src, dst, root = (b.recv if inplace else b.send).data.ptr, b.recv.data.ptr, ctx.root
    call = lambda: comm.reduce(src, dst, count, dtype, op, root, stream)  # noqa: E731
    return _finished(call, finish if ctx.rank == root else None)


def _nccl_all_gather(ctx: Context, b: Buffers, inplace: bool) -> Run:
    comm, nccl, stream = _nccl(ctx)
    mine = b.block(b.recv, ctx.rank) if inplace else b.send
    src, dst, nbytes, u8 = mine.data.ptr, b.recv.data.ptr, mine.nbytes, nccl.NCCL_UINT8
    return lambda: comm.allGather(src, dst, nbytes, u8, stream)


def _nccl_reduce_scatter(ctx: Context, b: Buffers, inplace: bool) -> Run:
    comm, _, stream = _nccl(ctx)
    out = b.block(b.work, ctx.rank) if inplace else b.recv
    dtype, op, count, finish = _reduction(ctx, out)
    src, dst = (b.work if inplace else b.send).data.ptr, out.data.ptr
    return _finished(lambda: comm.reduceScatter(src, dst, count, dtype, op, stream), finish)


def _nccl_scatter(ctx: Context, b: Buffers, inplace: bool) -> Run:
    """The root sends block i to rank i; in place, the root's own block stays where it is."""
    ins = b.blocks(b.work if inplace else b.send, ctx.nranks)
    out = ins[ctx.rank] if inplace else b.recv
    transfers = []
    if not (inplace and ctx.rank == ctx.root):
        transfers.append((False, out, ctx.root))
    if ctx.rank == ctx.root:
        transfers += [(True, ins[i], i) for i in range(ctx.nranks)
                      if not (inplace and i == ctx.rank)]
    return _send_recv_group(ctx, transfers)


def _nccl_alltoall(ctx: Context, b: Buffers, inplace: bool) -> Run:
    """In place, the input is first copied aside (timed): NCCL cannot send from a buffer it is
    receiving into."""
    n = ctx.nranks
    src = b.work.copy() if inplace else b.send
    out = b.work if inplace else b.recv
    transfers = [t for peer in range(n)
                 for t in ((True, b.block(src, peer), peer), (False, b.block(out, peer), peer))]
    group = _send_recv_group(ctx, transfers)
    return _copy_then(b.work, src, group) if inplace else group


def _nccl_sendrecv(ctx: Context, b: Buffers, inplace: bool) -> Run:
    return _send_recv_group(ctx, [(True, b.send, ctx.next), (False, b.recv, ctx.prev)])


RAW_NCCL: Dict[str, Factory] = {
    "all_reduce": _nccl_all_reduce, "reduce": _nccl_reduce, "broadcast": _nccl_broadcast,
    "all_gather": _nccl_all_gather, "reduce_scatter": _nccl_reduce_scatter,
    "scatter": _nccl_scatter, "alltoall": _nccl_alltoall, "sendrecv": _nccl_sendrecv,
}


def raw(backend: str) -> Dict[str, Factory]:
    """The raw engine's calls for ``backend``: mpi4py's for cpu, NcclCommunicator's for nccl."""
    return RAW_NCCL if backend == "nccl" else RAW
