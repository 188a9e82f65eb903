"""reduce: the root ends with the reduction of all ranks' buffers; the others only send."""
from __future__ import annotations

import pycoll.distributed as dist
from pycoll.bench.calls import (copy_then, finished, mpi_op, nccl_reduction, nccl_stream,
                                 then_average)
from pycoll.bench.ops import Op, Run, all_inputs, reduced


class Reduce(Op):
    name, position, reduces, rooted, oop_copies = "reduce", 20, True, True, True
    mpi_call, nccl_call = "Reduce", "reduce"

    def output(self, b, ctx, inplace, raw):
        return super().output(b, ctx, inplace, raw) if ctx.rank == ctx.root else None

    def expected(self, inputs, ctx, count):
        return reduced(all_inputs(inputs, ctx), ctx.redop) if ctx.rank == ctx.root else None

    def through_pycoll(self, ctx, b, inplace) -> Run:
        root, op = ctx.root, ctx.redop
        if not inplace and ctx.rank != root:  # a non-root's tensor is only read: no copy
            send = b.send
            return lambda: dist.reduce(send, root, op)
        recv = b.recv
        call = lambda: dist.reduce(recv, root, op)  # noqa: E731
        return call if inplace else copy_then(b.send, recv, call)

    def through_mpi(self, ctx, b, inplace) -> Run:
        from mpi4py import MPI

        comm, root, mop = ctx.comm, ctx.root, mpi_op(ctx)
        if ctx.rank != root:
            src = b.recv if inplace else b.send
            return lambda: comm.Reduce(src, None, mop, root)
        recv = b.recv
        src = MPI.IN_PLACE if inplace else b.send
        return then_average(ctx, lambda: comm.Reduce(src, recv, mop, root), recv)

    def through_nccl(self, ctx, b, inplace) -> Run:
        comm, stream = nccl_stream(ctx)
        dtype, op, count, finish = nccl_reduction(ctx, b.recv)
        src, dst, root = (b.recv if inplace else b.send).data.ptr, b.recv.data.ptr, ctx.root
        call = lambda: comm.reduce(src, dst, count, dtype, op, root, stream)  # noqa: E731
        return finished(call, finish if ctx.rank == root else None)


OP = Reduce()
