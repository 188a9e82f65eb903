"""reduce_scatter: rank i ends with the reduction of all ranks' i-th blocks."""
from __future__ import annotations

import pycoll.distributed as dist
from pycoll.bench.calls import finished, mpi_op, nccl_reduction, nccl_stream, then_average
from pycoll.bench.ops import Blocked, Layout, Run, all_inputs, my_block, reduced


class ReduceScatter(Blocked):
    name, position, reduces = "reduce_scatter", 50, True
    mpi_call, nccl_call = "Reduce_scatter_block", "reduceScatter"

    def layout(self, total, nranks):
        count = total // nranks
        return Layout(count, count * nranks, count)

    def output(self, b, ctx, inplace, raw):
        if not inplace:
            return b.recv
        # MPI's in-place result lands in the first block; nccl's and pycoll's in the rank's own
        return b.work[:b.count] if raw and ctx.nccl is None else my_block(b.work, ctx, b.count)

    def expected(self, inputs, ctx, count):
        return reduced([my_block(x, ctx, count) for x in all_inputs(inputs, ctx)], ctx.redop)

    def through_pycoll(self, ctx, b, inplace) -> Run:
        ins = b.blocks(b.work if inplace else b.send, ctx.nranks)
        out, op = (ins[ctx.rank] if inplace else b.recv), ctx.redop
        return lambda: dist.reduce_scatter(out, ins, op)

    def through_mpi(self, ctx, b, inplace) -> Run:
        from mpi4py import MPI

        comm, mop = ctx.comm, mpi_op(ctx)
        src, out = (MPI.IN_PLACE, b.work) if inplace else (b.send, b.recv)
        return then_average(ctx, lambda: comm.Reduce_scatter_block(src, out, mop), out[:b.count])

    def through_nccl(self, ctx, b, inplace) -> Run:
        comm, stream = nccl_stream(ctx)
        out = b.block(b.work, ctx.rank) if inplace else b.recv
        dtype, op, count, finish = nccl_reduction(ctx, out)
        src, dst = (b.work if inplace else b.send).data.ptr, out.data.ptr
        return finished(lambda: comm.reduceScatter(src, dst, count, dtype, op, stream), finish)


OP = ReduceScatter()
