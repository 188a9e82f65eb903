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
        np.copyto(dst, src)
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
