"""What every collective of pycoll-bench shares: buffer layouts, the buffers and context of a
run, the ranks' inputs and the reference reduction, and :class:`Op`, the base of each
collective's description (one module per collective in :mod:`pycoll.bench.collectives`).
Pure NumPy: no engine is touched here.

Layouts follow nccl-tests. A sweep size of ``S`` bytes is ``S // itemsize`` elements. For
all_reduce, broadcast, reduce and sendrecv each rank sends and receives that many; for
all_gather, reduce_scatter, scatter and alltoall it is the total over the ranks, so each rank's
block (the ``count`` column) is ``1/n`` of it (:class:`Blocked`). The reported size is the
larger of the send and receive buffers, algbw is that size over the time, and busbw is algbw
times the op's factor (:meth:`Op.busbw_factor`): the share of the data that must cross each
rank's link in an optimal algorithm, so that busbw compares across collectives and rank counts
with the hardware's bandwidth.

Out-of-place reads a send buffer and writes a separate receive buffer; in-place works in one
buffer, with nccl-tests' offsets: an all_gather's input is the rank's own block of the output,
a reduce_scatter's or scatter's output is the rank's own block of the input.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, List, Optional

import numpy as np

from pycoll.backends.reduce_op import ReduceOp

Run = Callable[[], None]  # one call of a collective, on buffers fixed when it was made


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


def my_block(arr: np.ndarray, ctx: Context, count: int) -> np.ndarray:
    """This rank's block of ``count`` elements in ``arr``."""
    return arr[ctx.rank * count:(ctx.rank + 1) * count]


def all_inputs(inputs: Inputs, ctx: Context) -> List[np.ndarray]:
    return [inputs(j) for j in range(ctx.nranks)]


class Op:
    """One collective: what pycoll-bench measures of it, and how it is called.

    A subclass overrides what differs from a plain one-buffer collective and implements the
    three call factories. Each factory returns a :data:`Run` that calls the op once on the
    buffers ``b`` (in place when ``inplace``) and returns once the call is queued (nccl) or
    done (cpu); everything a call needs is looked up when the factory runs, not in the timed
    call. The raw factories import their engine themselves: the process that only parses the
    flags and starts the ranks never loads MPI or CuPy.
    """

    name = ""
    position = 0        # where the op comes in listings and in an ``all`` run
    reduces = False     # takes -o (the table's redop column)
    rooted = False      # takes -r (the table's root column)
    inplace = True      # has an in-place form
    min_ranks = 1
    oop_copies = False  # pycoll's API is in-place only: out-of-place copies, then runs in place
    mpi_call = ""       # the mpi4py call that --compare raw measures on the cpu backend
    nccl_call = "NCCL send/recv group"  # the NcclCommunicator call(s) it measures on nccl

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

    def through_pycoll(self, ctx: Context, b: Buffers, inplace: bool) -> Run:
        """The call through pycoll's API (``pycoll.distributed``)."""
        raise NotImplementedError

    def through_mpi(self, ctx: Context, b: Buffers, inplace: bool) -> Run:
        """The raw mpi4py call on ``ctx.comm`` (the cpu backend's engine)."""
        raise NotImplementedError

    def through_nccl(self, ctx: Context, b: Buffers, inplace: bool) -> Run:
        """The raw ``NcclCommunicator`` call on ``ctx.nccl`` (the nccl backend's engine)."""
        raise NotImplementedError

    def raw(self, ctx: Context, b: Buffers, inplace: bool) -> Run:
        """The raw engine call that --compare raw times: NCCL's with the nccl backend."""
        if ctx.nccl is not None:
            return self.through_nccl(ctx, b, inplace)
        return self.through_mpi(ctx, b, inplace)

    def has_raw(self, ctx: Context, dtype: np.dtype) -> bool:
        """Whether the raw engine call can run on ``dtype``: MPI has no bfloat16 reduction (pycoll
        reduces it with an operation of its own), so that comparison has no peer."""
        return ctx.nccl is not None or not self.reduces or dtype.name != "bfloat16"

    def raw_call(self, backend: str) -> str:
        """The name of the raw engine call the table's header shows."""
        return self.nccl_call if backend == "nccl" else self.mpi_call


class Blocked(Op):
    """An op whose sweep size is the total over the ranks, moved in blocks of 1/n of it."""

    def busbw_factor(self, nranks: int) -> float:
        return (nranks - 1) / nranks
