"""all_reduce: every rank ends with the reduction of all ranks' buffers."""
from __future__ import annotations

import pycoll.distributed as dist
from pycoll.bench.calls import (copy_then, finished, mpi_op, nccl_reduction, nccl_stream,
                                 then_average)
from pycoll.bench.ops import Op, Run, all_inputs, reduced


class AllReduce(Op):
    name, position, reduces, oop_copies = "all_reduce", 10, True, True
    mpi_call, nccl_call = "Allreduce", "allReduce"

    def busbw_factor(self, nranks):
        return 2 * (nranks - 1) / nranks

    def expected(self, inputs, ctx, count):
        return reduced(all_inputs(inputs, ctx), ctx.redop)

    def through_pycoll(self, ctx, b, inplace) -> Run:
        recv, op = b.recv, ctx.redop
        call = lambda: dist.all_reduce(recv, op)  # noqa: E731
        return call if inplace else copy_then(b.send, recv, call)

    def through_mpi(self, ctx, b, inplace) -> Run:
        from mpi4py import MPI

        comm, recv, mop = ctx.comm, b.recv, mpi_op(ctx)
        src = MPI.IN_PLACE if inplace else b.send
        return then_average(ctx, lambda: comm.Allreduce(src, recv, mop), recv)

    def through_nccl(self, ctx, b, inplace) -> Run:
        comm, stream = nccl_stream(ctx)
        dtype, op, count, finish = nccl_reduction(ctx, b.recv)
        src, dst = (b.recv if inplace else b.send).data.ptr, b.recv.data.ptr
        return finished(lambda: comm.allReduce(src, dst, count, dtype, op, stream), finish)


OP = AllReduce()
