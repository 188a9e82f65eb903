"""broadcast: every rank ends with the root's buffer."""
from __future__ import annotations

import pycoll.distributed as dist
from pycoll.bench.calls import as_bytes, copy_then, nccl_stream
from pycoll.bench.ops import Op, Run


class Broadcast(Op):
    name, position, rooted, oop_copies = "broadcast", 30, True, True
    mpi_call, nccl_call = "Bcast", "broadcast"

    def expected(self, inputs, ctx, count):
        return inputs(ctx.root)

    def through_pycoll(self, ctx, b, inplace) -> Run:
        recv, root = b.recv, ctx.root
        call = lambda: dist.broadcast(recv, root)  # noqa: E731
        return call if inplace or ctx.rank != root else copy_then(b.send, recv, call)

    def through_mpi(self, ctx, b, inplace) -> Run:
        """MPI's broadcast has one buffer: out of place, the root copies first, as pycoll."""
        comm, recv, root = ctx.comm, b.recv, ctx.root
        buf = as_bytes(recv)
        call = lambda: comm.Bcast(buf, root)  # noqa: E731
        return call if inplace or ctx.rank != root else copy_then(b.send, recv, call)

    def through_nccl(self, ctx, b, inplace) -> Run:
        from cupy.cuda import nccl

        comm, stream = nccl_stream(ctx)
        src, dst = (b.recv if inplace else b.send).data.ptr, b.recv.data.ptr
        nbytes, root, u8 = b.recv.nbytes, ctx.root, nccl.NCCL_UINT8
        return lambda: comm.broadcast(src, dst, nbytes, u8, root, stream)


OP = Broadcast()
