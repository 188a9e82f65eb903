"""sendrecv: each rank sends to the next rank and receives from the previous one (one ring
step)."""
from __future__ import annotations

import pycoll.distributed as dist
from pycoll.bench.calls import as_bytes, nccl_group
from pycoll.bench.ops import Op, Run


class SendRecv(Op):
    name, position, inplace, min_ranks = "sendrecv", 80, False, 2
    mpi_call = "Sendrecv"

    def expected(self, inputs, ctx, count):
        return inputs(ctx.prev)

    def through_pycoll(self, ctx, b, inplace) -> Run:
        send, recv, nxt, prv = b.send, b.recv, ctx.next, ctx.prev

        def run() -> None:
            task = dist.isend(send, nxt)
            dist.recv(recv, prv)
            task.wait()
        return run

    def through_mpi(self, ctx, b, inplace) -> Run:
        comm, nxt, prv = ctx.comm, ctx.next, ctx.prev
        send, recv = as_bytes(b.send), as_bytes(b.recv)
        return lambda: comm.Sendrecv(send, nxt, recvbuf=recv, source=prv)

    def through_nccl(self, ctx, b, inplace) -> Run:
        return nccl_group(ctx, [(True, b.send, ctx.next), (False, b.recv, ctx.prev)])


OP = SendRecv()
