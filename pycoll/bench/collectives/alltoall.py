"""alltoall: rank i's j-th block goes to rank j, which keeps it as its i-th block."""
from __future__ import annotations

import numpy as np

import pycoll.distributed as dist
from pycoll.bench.calls import as_bytes, copy_then, nccl_group
from pycoll.bench.ops import Blocked, Layout, Run, all_inputs, my_block


class AllToAll(Blocked):
    name, position = "alltoall", 70
    mpi_call = "Alltoall"

    def layout(self, total, nranks):
        count = total // nranks
        return Layout(count, count * nranks, count * nranks)

    def expected(self, inputs, ctx, count):
        return np.concatenate([my_block(x, ctx, count) for x in all_inputs(inputs, ctx)])

    def through_pycoll(self, ctx, b, inplace) -> Run:
        ins = b.blocks(b.work if inplace else b.send, ctx.nranks)
        outs = ins if inplace else b.blocks(b.recv, ctx.nranks)
        return lambda: dist.alltoall(outs, ins)

    def through_mpi(self, ctx, b, inplace) -> Run:
        from mpi4py import MPI

        comm = ctx.comm
        src = MPI.IN_PLACE if inplace else as_bytes(b.send)
        out = as_bytes(b.work if inplace else b.recv)
        return lambda: comm.Alltoall(src, out)

    def through_nccl(self, ctx, b, inplace) -> Run:
        """In place, the input is first copied aside (timed): NCCL cannot send from a buffer
        it is receiving into."""
        src = b.work.copy() if inplace else b.send
        out = b.work if inplace else b.recv
        transfers = [t for peer in range(ctx.nranks)
                     for t in ((True, b.block(src, peer), peer), (False, b.block(out, peer), peer))]
        group = nccl_group(ctx, transfers)
        return copy_then(b.work, src, group) if inplace else group


OP = AllToAll()
