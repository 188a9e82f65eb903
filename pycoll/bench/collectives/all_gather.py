"""all_gather: every rank ends with all ranks' blocks, in rank order."""
from __future__ import annotations

import numpy as np

import pycoll.distributed as dist
from pycoll.bench.calls import as_bytes, nccl_stream
from pycoll.bench.ops import Blocked, Layout, Run, all_inputs, my_block


class AllGather(Blocked):
    name, position = "all_gather", 40
    mpi_call, nccl_call = "Allgather", "allGather"

    def layout(self, total, nranks):
        count = total // nranks
        return Layout(count, count, count * nranks)

    def input_view(self, b, ctx, inplace):
        return my_block(b.work, ctx, b.count) if inplace else b.send

    def expected(self, inputs, ctx, count):
        return np.concatenate(all_inputs(inputs, ctx))

    def through_pycoll(self, ctx, b, inplace) -> Run:
        outs = b.blocks(b.recv, ctx.nranks)
        mine = outs[ctx.rank] if inplace else b.send
        return lambda: dist.all_gather(outs, mine)

    def through_mpi(self, ctx, b, inplace) -> Run:
        from mpi4py import MPI

        comm, recv = ctx.comm, as_bytes(b.recv)
        src = MPI.IN_PLACE if inplace else as_bytes(b.send)
        return lambda: comm.Allgather(src, recv)

    def through_nccl(self, ctx, b, inplace) -> Run:
        from cupy.cuda import nccl

        comm, stream = nccl_stream(ctx)
        mine = b.block(b.recv, ctx.rank) if inplace else b.send
        src, dst, nbytes, u8 = mine.data.ptr, b.recv.data.ptr, mine.nbytes, nccl.NCCL_UINT8
        return lambda: comm.allGather(src, dst, nbytes, u8, stream)


OP = AllGather()
