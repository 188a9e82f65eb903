"""scatter: rank i ends with the root's i-th block."""
from __future__ import annotations

import pycoll.distributed as dist
from pycoll.bench.calls import as_bytes, nccl_group
from pycoll.bench.ops import Blocked, Layout, Run, my_block


class Scatter(Blocked):
    name, position, rooted = "scatter", 60, True
    mpi_call = "Scatter"

    def layout(self, total, nranks):
        count = total // nranks
        return Layout(count, count * nranks, count)

    def output(self, b, ctx, inplace, raw):
        return my_block(b.work, ctx, b.count) if inplace else b.recv

    def expected(self, inputs, ctx, count):
        return my_block(inputs(ctx.root), ctx, count)

    def through_pycoll(self, ctx, b, inplace) -> Run:
        ins = b.blocks(b.work if inplace else b.send, ctx.nranks)
        out, root = (ins[ctx.rank] if inplace else b.recv), ctx.root
        send_list = ins if ctx.rank == root else None
        return lambda: dist.scatter(out, send_list, root)

    def through_mpi(self, ctx, b, inplace) -> Run:
        from mpi4py import MPI

        comm, root, is_root = ctx.comm, ctx.root, ctx.rank == ctx.root
        if inplace:  # the root's own block stays where it is in its send buffer
            send = as_bytes(b.work) if is_root else None
            out = MPI.IN_PLACE if is_root else as_bytes(b.block(b.work, ctx.rank))
        else:
            send, out = (as_bytes(b.send) if is_root else None), as_bytes(b.recv)
        return lambda: comm.Scatter(send, out, root)

    def through_nccl(self, ctx, b, inplace) -> Run:
        """The root sends block i to rank i; in place, the root's own block stays where it is."""
        ins = b.blocks(b.work if inplace else b.send, ctx.nranks)
        out = ins[ctx.rank] if inplace else b.recv
        transfers = []
        if not (inplace and ctx.rank == ctx.root):
            transfers.append((False, out, ctx.root))
        if ctx.rank == ctx.root:
            transfers += [(True, ins[i], i) for i in range(ctx.nranks)
                          if not (inplace and i == ctx.rank)]
        return nccl_group(ctx, transfers)


OP = Scatter()
