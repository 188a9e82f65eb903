"""What pycoll-bench measures, per collective: buffer layout, bus-bandwidth factor, where the
input goes and the result lands, and the expected result. Pure NumPy: no engine is touched
here (the runs themselves are in :mod:`pycoll.bench.calls`).

Layouts follow nccl-tests. A sweep size of ``S`` bytes is ``S // itemsize`` elements. For
all_reduce, broadcast, reduce and sendrecv each rank sends and receives that many; for
all_gather, reduce_scatter, scatter and alltoall it is the total over the ranks, so each rank's
block (the ``count`` column) is ``1/n`` of it. The reported size is the larger of the send and
receive buffers, algbw is that size over the time, and busbw is algbw times the op's factor
(:func:`busbw_factor`): the share of the data that must cross each rank's link in an optimal
algorithm, so that busbw compares across collectives and rank counts with the hardware's
bandwidth.

Out-of-place reads a send buffer and writes a separate receive buffer; in-place works in one
buffer, with nccl-tests' offsets: an all_gather's input is the rank's own block of the output,
a reduce_scatter's or scatter's output is the rank's own block of the input.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

import numpy as np

from pycoll.backends.reduce_op import ReduceOp


@dataclass(frozen=True)
class Layout:
    """Elements per rank for one sweep size: the op's count, the send and receive buffers."""

    count: int
    send: int
    recv: int

    @property
    def work(self) -> int:
        """Elements of the single buffer an in-place run uses."""
        return max(self.send, self.recv)


@dataclass
class Context:
    """What every run needs: this rank, the job, the reduction and the raw communicator."""

    rank: int
    nranks: int
    root: int
    redop: int
    comm: Any = None  # an mpi4py Comm: the raw cpu engine, and the ranks' host-side coordination
    nccl: Any = None  # with --backend nccl: the world group's cupy.cuda.nccl.NcclCommunicator

    @property
    def prev(self) -> int:
        return (self.rank - 1) % self.nranks

    @property
    def next(self) -> int:
        return (self.rank + 1) % self.nranks


@dataclass
class Buffers:
    """Views, for one size, of buffers allocated once for the largest size.

    ``work`` is the in-place buffer; it begins where ``recv`` begins (as in nccl-tests).
    """

    send: np.ndarray
    recv: np.ndarray
    work: np.ndarray
    count: int

    @classmethod
    def views(cls, send_store: np.ndarray, recv_store: np.ndarray, layout: Layout) -> "Buffers":
        return cls(send_store[:layout.send], recv_store[:layout.recv],
                   recv_store[:layout.work], layout.count)

    def block(self, arr: np.ndarray, i: int) -> np.ndarray:
        return arr[i * self.count:(i + 1) * self.count]

    def blocks(self, arr: np.ndarray, n: int) -> List[np.ndarray]:
        return [self.block(arr, i) for i in range(n)]


_NUMPY_OPS = {ReduceOp.SUM: np.add, ReduceOp.AVG: np.add, ReduceOp.MAX: np.maximum,
              ReduceOp.MIN: np.minimum, ReduceOp.PROD: np.multiply}


def rank_input(rank: int, nelems: int, dtype: np.dtype, redop: int) -> np.ndarray:
    """The data rank ``rank`` sends: small integers, exact in every dtype and in any summation
    order. For PROD they are 1s and 2s, so that products stay exact (integers wrap, the same
    way in MPI and NumPy)."""
    i = np.arange(nelems, dtype=np.int64)
    values = (i + rank) % 2 + 1 if redop == ReduceOp.PROD else (i + 7 * rank) % 11 + 1
    return values.astype(dtype)


def reduced(arrays: List[np.ndarray], redop: int) -> np.ndarray:
    """The reduction of ``arrays`` as the engine computes it (AVG: the sum divided by n)."""
    out = arrays[0].copy()
    for arr in arrays[1:]:
        _NUMPY_OPS[redop](out, arr, out=out)
    if redop == ReduceOp.AVG:
        np.divide(out, len(arrays), out=out)
    return out


Inputs = Callable[[int], np.ndarray]  # rank j -> rank j's whole input


class Op:
    """One collective; subclasses override what differs from a plain one-buffer collective."""

    name = ""
    reduces = False   # takes -o (the table's redop column)
    rooted = False    # takes -r (the table's root column)
    inplace = True    # has an in-place form
    min_ranks = 1
    raw_call = ""     # the mpi4py call that --compare raw measures
    oop_copies = False  # pycoll's API is in-place only: out-of-place copies, then runs in place

    def busbw_factor(self, nranks: int) -> float:
        return 1.0

    def layout(self, total: int, nranks: int) -> Layout:
        """The layout for ``total`` elements (the sweep size over the itemsize)."""
        return Layout(total, total, total)

    def input_view(self, b: Buffers, ctx: Context, inplace: bool) -> np.ndarray:
        """Where this rank's input goes before a run."""
        return b.work[:b.send.size] if inplace else b.send

    def output(self, b: Buffers, ctx: Context, inplace: bool, raw: bool) -> Optional[np.ndarray]:
        """Where the result lands on this rank (``raw``: after the raw engine call), or None
        when this rank receives nothing."""
        return b.work[:b.recv.size] if inplace else b.recv

    def expected(self, inputs: Inputs, ctx: Context, count: int) -> Optional[np.ndarray]:
        """This rank's correct result, or None when it receives nothing."""
        raise NotImplementedError


def _my_block(arr: np.ndarray, ctx: Context, count: int) -> np.ndarray:
    return arr[ctx.rank * count:(ctx.rank + 1) * count]


def _all_inputs(inputs: Inputs, ctx: Context) -> List[np.ndarray]:
    return [inputs(j) for j in range(ctx.nranks)]


class _Blocked(Op):
    """An op whose sweep size is the total over the ranks, moved in blocks of 1/n of it."""

    def busbw_factor(self, nranks: int) -> float:
        return (nranks - 1) / nranks


class AllReduce(Op):
    name, reduces, raw_call = "all_reduce", True, "Allreduce"
    oop_copies = True

    def busbw_factor(self, nranks):
        return 2 * (nranks - 1) / nranks

    def expected(self, inputs, ctx, count):
        return reduced(_all_inputs(inputs, ctx), ctx.redop)


class Broadcast(Op):
    name, rooted, raw_call = "broadcast", True, "Bcast"
    oop_copies = True

    def expected(self, inputs, ctx, count):
        return inputs(ctx.root)


class Reduce(Op):
    name, reduces, rooted, raw_call = "reduce", True, True, "Reduce"
    oop_copies = True

    def output(self, b, ctx, inplace, raw):
        return super().output(b, ctx, inplace, raw) if ctx.rank == ctx.root else None

    def expected(self, inputs, ctx, count):
        return reduced(_all_inputs(inputs, ctx), ctx.redop) if ctx.rank == ctx.root else None


class AllGather(_Blocked):
    name, raw_call = "all_gather", "Allgather"

    def layout(self, total, nranks):
        count = total // nranks
        return Layout(count, count, count * nranks)

    def input_view(self, b, ctx, inplace):
        return _my_block(b.work, ctx, b.count) if inplace else b.send

    def expected(self, inputs, ctx, count):
        return np.concatenate(_all_inputs(inputs, ctx))


class ReduceScatter(_Blocked):
    name, reduces, raw_call = "reduce_scatter", True, "Reduce_scatter_block"

    def layout(self, total, nranks):
        count = total // nranks
        return Layout(count, count * nranks, count)

    def output(self, b, ctx, inplace, raw):
        if not inplace:
            return b.recv
        # MPI's in-place result lands in the first block; nccl's and pycoll's in the rank's own
        return b.work[:b.count] if raw and ctx.nccl is None else _my_block(b.work, ctx, b.count)

    def expected(self, inputs, ctx, count):
        return reduced([_my_block(x, ctx, count) for x in _all_inputs(inputs, ctx)], ctx.redop)


class Scatter(_Blocked):
    name, rooted, raw_call = "scatter", True, "Scatter"

    def layout(self, total, nranks):
        count = total // nranks
        return Layout(count, count * nranks, count)

    def output(self, b, ctx, inplace, raw):
        return _my_block(b.work, ctx, b.count) if inplace else b.recv

    def expected(self, inputs, ctx, count):
        return _my_block(inputs(ctx.root), ctx, count)


class AllToAll(_Blocked):
    name, raw_call = "alltoall", "Alltoall"

    def layout(self, total, nranks):
        count = total // nranks
        return Layout(count, count * nranks, count * nranks)

    def expected(self, inputs, ctx, count):
        return np.concatenate([_my_block(x, ctx, count) for x in _all_inputs(inputs, ctx)])


class SendRecv(Op):
    """Each rank sends to the next rank and receives from the previous one (one ring step)."""

    name, inplace, min_ranks, raw_call = "sendrecv", False, 2, "Sendrecv"

    def expected(self, inputs, ctx, count):
        return inputs(ctx.prev)


OPS: Dict[str, Op] = {op.name: op for op in (
    AllReduce(), Reduce(), Broadcast(), AllGather(), ReduceScatter(), Scatter(), AllToAll(),
    SendRecv())}


def busbw_factor(op: str, nranks: int) -> float:
    """nccl-tests' bus-bandwidth factor of ``op`` on ``nranks`` ranks (busbw = algbw * factor)."""
    if nranks < 1:
        raise ValueError(f"nranks={nranks}: it must be at least 1")
    try:
        spec = OPS[op]
    except KeyError:
        raise ValueError(f"op={op!r} is not one of {', '.join(OPS)}") from None
    return spec.busbw_factor(nranks)
