"""What the collectives' call factories share (:mod:`pycoll.bench.collectives`): moving
buffers as bytes through mpi4py, the engines' reduction tables, the copy before an
out-of-place run through an in-place API, the divide that finishes an average, and NCCL's
grouped send/recv.

pycoll's all_reduce, broadcast and reduce work in place only, so their out-of-place run copies
the input into the output buffer and then runs in place. The copy is inside the timed region:
it is what an out-of-place result costs through pycoll's API (for broadcast and reduce only the
root copies; the other ranks' buffers are only read or only written). The raw calls are
mpi4py's on a duplicate of ``COMM_WORLD``, each the engine's cheapest way to the same result:
``MPI.IN_PLACE`` where MPI has it, a true out-of-place call where it has that, and for
broadcast (one buffer in MPI) the same root-side copy. AVG is MPI's SUM followed by a division,
as pycoll's engine does it.

With the nccl backend the buffers are CuPy arrays and the raw calls are the
``cupy.cuda.nccl.NcclCommunicator`` methods on the world group's own communicator, queued on
the current stream as pycoll's are: true out-of-place calls, in place by passing one pointer
twice; scatter, alltoall and sendrecv are NCCL send/recv groups, as NCCL has no such
collective. Every call returns once queued; the runner synchronizes the stream.

MPI and CuPy are imported when a factory runs, on a rank (see :class:`pycoll.bench.ops.Op`).
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from pycoll.backends.reduce_op import ReduceOp
from pycoll.bench.ops import Context, Run


def as_bytes(arr: Any) -> list:
    """An mpi4py buffer that moves ``arr`` as bytes (any dtype, as pycoll's engine does)."""
    from mpi4py import MPI

    return [arr, MPI.BYTE]


def mpi_op(ctx: Context) -> Any:
    """The MPI op of the run's reduction, from the cpu engine's own table (AVG: MPI.SUM)."""
    from pycoll.backends.mpi import MPI_OPS

    return MPI_OPS[ctx.redop]


def then_average(ctx: Context, call: Run, out: np.ndarray) -> Run:
    """``call``, then ``out`` divided by the ranks when the reduction is AVG (MPI has only the
    sum)."""
    average = ctx.redop == ReduceOp.AVG
    return finished(call, _divide(np.divide, out, ctx.nranks) if average else None)


def _divide(divide: Any, out: Any, n: int) -> Run:
    return lambda: divide(out, n, out=out)


def finished(call: Run, finish: Optional[Run]) -> Run:
    """``call``, then ``finish`` (``call`` itself when there is nothing to finish)."""
    if finish is None:
        return call

    def run() -> None:
        call()
        finish()
    return run


def copy_then(src: Any, dst: Any, call: Run) -> Run:
    """Copy ``src`` into ``dst`` (NumPy or CuPy, on the current stream), then ``call``.

    CuPy arrays of one dtype and size, both contiguous, are copied by ``cudaMemcpyAsync``
    (``copy_from_device_async``), as a user would copy a buffer: CuPy's ``dst[...] = src`` is an
    elementwise kernel, 2.4 TB/s against the copy engine's 2.6 on an H100 (2026-11-27)."""
    if not isinstance(dst, np.ndarray) and hasattr(dst.data, "copy_from_device_async") and \
            src.dtype == dst.dtype and src.size == dst.size and \
            src.flags.c_contiguous and dst.flags.c_contiguous:
        to, source, nbytes = dst.data, src.data, src.nbytes

        def memcpy() -> None:
            to.copy_from_device_async(source, nbytes)
            call()
        return memcpy

    def run() -> None:
        dst[...] = src
        call()
    return run


def nccl_stream(ctx: Context) -> Tuple[Any, int]:
    """The world's NcclCommunicator and the current CuPy stream's handle."""
    from cupy.cuda import get_current_stream

    return ctx.nccl, get_current_stream().ptr


def nccl_reduction(ctx: Context, out: Any) -> Tuple[int, int, int, Optional[Run]]:
    """NCCL's datatype, op and element count for reducing ``out`` with the run's reduction,
    from the nccl engine's own tables, and the divide that finishes an average where this NCCL
    has no ncclAvg (None otherwise)."""
    import cupy
    from cupy.cuda import nccl

    from pycoll.backends.nccl import NCCL_OPS, NCCL_TYPES

    type_name, factor = NCCL_TYPES[out.dtype.name]
    op = getattr(nccl, NCCL_OPS[ctx.redop], None)
    finish = None
    if op is None:  # no ncclAvg (NCCL before 2.10): the sum, then the divide
        op, finish = nccl.NCCL_SUM, _divide(cupy.divide, out, ctx.nranks)
    return getattr(nccl, type_name), op, out.size * factor, finish


def nccl_group(ctx: Context, transfers: Sequence[Tuple[bool, Any, int]]) -> Run:
    """One NCCL group of ``(is_send, array, peer)`` byte transfers, launched by the nccl
    engine's own :func:`pycoll.backends.nccl.launch_group`."""
    from pycoll.backends.nccl import launch_group

    comm, stream = nccl_stream(ctx)
    plan: List[Tuple[bool, int, int, int]] = [
        (is_send, arr.data.ptr, arr.nbytes, peer) for is_send, arr, peer in transfers]
    return lambda: launch_group(comm, plan, stream)
