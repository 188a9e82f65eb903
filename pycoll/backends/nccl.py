"""The GPU engine: collectives on CuPy arrays through NCCL (``cupy.cuda.nccl``).

Streams. Every collective method takes ``blocking``:

- True: the NCCL call is enqueued on the *current* CuPy stream and the method returns None at
  once, without waiting on the host. Work queued on that stream before the call is seen by it,
  and work queued after it sees its result (read the result on the host after
  ``cupy.cuda.get_current_stream().synchronize()``, or through any call that synchronizes).
- False: the call runs on this communicator's own stream, which first waits (an event) for the
  work already queued on the current stream; the method returns an :class:`NCCLRequest` whose
  ``test()`` polls the completion event and whose ``join_stream()`` makes the current stream
  wait for it instead.

Actions that finish a call (the divide of an average where NCCL has no ``ncclAvg``) are queued
on the same stream, after the call. Reductions use NCCL's datatype for the array's dtype;
complex arrays travel as twice as many floats, which is exact for SUM and AVG only. AVG is
NCCL's own (each rank's part scaled by 1/n in the array's dtype, then summed, as torch's and
paddle's NCCL averages): in float16 or bfloat16 it can differ from the MPI engine's sum-then-divide
by an ulp (1, 2, 3 average to 1.999 in float16 on 3 ranks of an H100). Pure data movement moves
bytes, so it serves any fixed-size dtype.

Point-to-point. NCCL runs a communicator's operations in the order they are issued, and a
send only completes against a receive that is already running. So that the MPI patterns work
(``irecv`` from the left, then ``send`` to the right, around a ring; ``isend`` + ``irecv``
and then waits), a non-blocking send or receive is held back and launched together with the
next send/receive as one NCCL group (``groupStart()``/``groupEnd()``), or when its request is
tested or joined, or before the next collective on this communicator, whichever comes first.
NCCL has no tags: between two ranks, messages match in the order they are issued.

Watching. Every enqueued call is recorded with an event behind it, for the watchdog thread
(see :mod:`pycoll.backends.nccl_calls`); a blocking call's event is recorded again for a later
call once its call is seen complete, and the event a stream waits on is the engine's one
``_behind`` event, recorded again each time, so a warmed-up blocking call makes no new event.

Arrays must be C-contiguous CuPy arrays on this communicator's device, already validated by
the caller. Arrays used by a non-blocking call are kept alive by its request until it is done.
CuPy comes through :mod:`pycoll.backends.cuda_api`: importing this module imports nothing from
CuPy. NCCL's tables, plans, communicators and splits are in :mod:`pycoll.backends.nccl_comm`.
"""
from __future__ import annotations

import time
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from pycoll._errors import CollectiveError
from pycoll._logging import logger
from pycoll.backends.cuda_api import cuda
from pycoll.backends.nccl_calls import PRUNE_AT, InFlight, Launched, NCCLRequest
from pycoll.backends.nccl_comm import (NCCL_OPS, NCCL_TYPES, UNIQUE_ID_BYTES, Reduction, Transfer,
                                       launch_group, new_communicator, new_unique_id, nccl_module,
                                       reducible_dtypes, reduction_error, split_communicator,
                                       split_order)
from pycoll.backends.reduce_op import Plans

__all__ = [  # the engine, and the names other modules import from here
    "NCCLBackend", "NCCLRequest", "Launched", "PRUNE_AT", "nccl_module", "new_unique_id",
    "new_communicator", "split_order", "reduction_error", "reducible_dtypes", "launch_group",
    "Transfer", "NCCL_TYPES", "NCCL_OPS", "UNIQUE_ID_BYTES",
]

_POLL_S = 50e-6


def _addresses(blocks: Any, sizes: Sequence[int]) -> List[int]:
    """The device address of each block: ``blocks`` is a list of arrays, or one array holding
    blocks of ``sizes`` bytes one after another."""
    if isinstance(blocks, (list, tuple)):
        return [block.data.ptr for block in blocks]
    addresses, address = [], blocks.data.ptr
    for nbytes in sizes:
        addresses.append(address)
        address += nbytes
    return addresses


class NCCLBackend:
    """Collectives over one NCCL communicator, on the device that was current when it was made."""

    name = "nccl"
    stream_ordered = True
    # all_gather and reduce_scatter run in place where the rank's own block of the whole buffer is
    # the other side (NCCL's rule: recvbuff == sendbuff + rank * count, or the reverse), so the
    # collective layer may hand them such overlapping arrays
    in_place_blocks = True
    # scatter's and alltoallv's send blocks may each lie in memory of their own, given as a list
    # of arrays: NCCL sends each block by itself, so the collective layer need not copy them into
    # one buffer first
    separate_blocks = True
    _plans = Plans(reduction_error, Reduction)  # shared by all communicators
    plan = _plans.get  # how to reduce (dtype, op); ValueError/TypeError saying why it cannot
    can_reduce = _plans.can

    def __init__(self, comm: Any, timeout: float):
        """Wrap ``comm`` (a ``cupy.cuda.nccl.NcclCommunicator``); ``timeout`` bounds the host
        waits of ``barrier`` and ``split``."""
        self._cuda = cuda()
        self.comm = comm
        self.rank = comm.rank_id()
        self.size = comm.size()
        self.device = comm.device_id()
        self.timeout = float(timeout)
        self.xp = self._cuda.xp  # the array module this engine moves
        self._current = self._cuda.current_stream
        self._event = self._cuda.record  # an event recorded on a stream now
        self._stream = self._cuda.new_stream(self.device)
        self._nccl = nccl_module()
        self._bytes = self._nccl.NCCL_UINT8
        self._pending: List[Tuple[Transfer, NCCLRequest]] = []
        self._token: Any = None  # the barrier's one-element buffer
        self._broken: Optional[str] = None
        self._in_flight = InFlight(self._event)  # shared with the watchdog thread
        self._mark: Any = None  # the event another stream waits on (see _behind)

    @classmethod
    def create(cls, nranks: int, uid: bytes, rank: int,
               timeout: float) -> "NCCLBackend":
        """A backend over a new communicator (collective over the ``nranks`` ranks sharing ``uid``)."""
        return cls(new_communicator(nranks, uid, rank), timeout)


    # -- machinery -----------------------------------------------------------------------
    def _usable(self, name: str) -> None:
        if self._broken is not None:
            raise CollectiveError(f"{name}: {self._broken}")

    def _fail(self, name: str, exc: BaseException) -> CollectiveError:
        """Mark the communicator broken, abort it (releasing stuck kernels), and describe why."""
        message = (f"{name} on the nccl communicator (rank {self.rank} of {self.size}, "
                   f"device {self.device}) failed: {exc}")
        logger.error("%s; aborting the communicator", message)
        self.abort()
        self._broken = f"the nccl communicator is unusable: {message}"
        return CollectiveError(message)

    def _check(self, name: str) -> None:
        """Raise CollectiveError when NCCL has reported an asynchronous error on the communicator."""
        self._usable(name)
        try:
            self.comm.check_async_error()
        except Exception as exc:
            raise self._fail(name, exc) from exc

    def _host_wait(self, name: str, stream: Any = None) -> None:
        """Wait on the host for the work queued so far on ``stream`` (default: the current
        one), watching for NCCL errors, at most ``timeout`` seconds."""
        event = self._event(self._current() if stream is None else stream)
        deadline = time.monotonic() + self.timeout
        while not event.done:
            self._check(name)
            if time.monotonic() > deadline:
                raise self._fail(name, TimeoutError(f"not complete within {self.timeout:g} s"))
            time.sleep(_POLL_S)

    def _behind(self, stream: Any) -> Any:
        """An event marking the work queued so far on ``stream``, for another stream's
        ``wait_event``: the engine's one such event, recorded again each time (a wait takes the
        event's state when it is made, so an earlier wait is unaffected)."""
        self._mark = self._event(stream, self._mark)
        return self._mark

    def _enqueue(self, name: str, launch: Callable[[int], None], stream: Any) -> None:
        try:
            launch(stream.ptr)
        except Exception as exc:
            if isinstance(exc, CollectiveError):
                raise
            if self._broken is not None:
                # aborted from another thread (the watchdog) while the launch was blocked inside
                # NCCL (a first call waits there for its peers to connect): NCCL's error for that
                # ("internal error") is not the cause, and the abort has been reported
                raise CollectiveError(f"{name}: {self._broken}") from exc
            raise self._fail(name, exc) from exc

    def stalled_call(self) -> Optional[Launched]:
        """The oldest enqueued call that has not completed, or None. For the watchdog thread:
        it makes the communicator's device current in the calling thread first (a thread's
        first CUDA call would otherwise open a context on device 0)."""
        self._cuda.set_device(self.device)
        return self._in_flight.oldest()

    def async_error(self) -> Optional[str]:
        """NCCL's asynchronous error on the communicator, as text, or None; for the watchdog
        thread. An error a call on this rank has already reported (the communicator is then
        marked unusable) is not reported again."""
        comm = self.comm
        if comm is None or self._broken is not None:
            return None
        try:
            comm.check_async_error()
        except Exception as exc:
            return str(exc) or type(exc).__name__
        return None

    def _run(self, name: str, seq: int, blocking: bool, launch: Callable[[int], None],
             keep: Tuple[Any, ...], then: Optional[Callable[[], None]] = None) -> Optional[NCCLRequest]:
        """Enqueue ``launch(stream_ptr)`` (then ``then``) on the current stream, or on the
        communicator's stream behind the current one and return its request."""
        if self._broken is not None:
            self._usable(name)
        if self._pending:
            self._flush(name, seq)
        current = self._current()
        if blocking:
            self._enqueue(name, launch, current)
            if then is not None:
                then()
            self._in_flight.add(name, seq, current)
            return None
        side = self._stream
        side.wait_event(self._behind(current))
        self._enqueue(name, launch, side)
        if then is not None:
            with side:
                then()
        done = self._event(side)
        self._in_flight.add(name, seq, side, done)
        return NCCLRequest(self, name, seq, done, keep)

    def _group(self, transfers: Sequence[Transfer]) -> Callable[[int], None]:
        """A launch of ``transfers`` as one NCCL group."""
        comm, nccl = self.comm, self._nccl
        return lambda stream: launch_group(comm, transfers, stream, nccl)

    def _flush(self, name: str, seq: int, extra: Optional[Transfer] = None) -> None:
        """Launch the held-back sends/receives, with the blocking transfer ``extra``, as one group.

        Alone, ``extra`` runs on the current stream. With held-back transfers the group runs on
        the communicator's stream, which waits for the current stream first and which the
        current stream then waits for, so ``extra`` stays ordered with the current stream.
        """
        self._usable(name)
        pending, self._pending = self._pending, []
        current = self._current()
        if not pending:
            if extra is not None:
                self._enqueue(name, self._group([extra]), current)
                self._in_flight.add(name, seq, current)
            return
        side = self._stream
        transfers = [transfer for transfer, _ in pending]
        if extra is not None:
            side.wait_event(self._behind(current))
            transfers.append(extra)
        self._enqueue(name, self._group(transfers), side)
        done = self._event(side)
        self._in_flight.add(name, seq, side, done)
        for _, request in pending:
            request.launched(done)
        if extra is not None:
            current.wait_event(done)

    def _average(self, arr: Any) -> Callable[[], None]:
        """The divide that ends an average NCCL cannot take itself (``plan.average``)."""
        divide, size = self.xp.divide, self.size
        return lambda: divide(arr, size, out=arr)

    # -- reductions ----------------------------------------------------------------------
    def all_reduce(self, arr: Any, plan: Reduction, blocking: bool, seq: int = 0) -> Optional[NCCLRequest]:
        comm, ptr, count = self.comm, arr.data.ptr, arr.size * plan.factor
        return self._run("all_reduce", seq, blocking,
                         lambda s: comm.allReduce(ptr, ptr, count, plan.datatype, plan.op, s),
                         (arr,), self._average(arr) if plan.average else None)

    def reduce(self, arr: Any, root: int, plan: Reduction, blocking: bool,
               seq: int = 0) -> Optional[NCCLRequest]:
        """In place on ``root``; NCCL leaves the other ranks' arrays unchanged."""
        comm, ptr, count = self.comm, arr.data.ptr, arr.size * plan.factor
        then = self._average(arr) if plan.average and self.rank == root else None
        return self._run("reduce", seq, blocking,
                         lambda s: comm.reduce(ptr, ptr, count, plan.datatype, plan.op, root, s),
                         (arr,), then)

    def reduce_scatter(self, out: Any, send: Any, plan: Reduction,
                       blocking: bool, seq: int = 0) -> Optional[NCCLRequest]:
        """``send`` holds ``size`` blocks of ``out.size`` elements; block i is reduced into rank i."""
        comm, sptr, optr, count = self.comm, send.data.ptr, out.data.ptr, out.size * plan.factor
        return self._run("reduce_scatter", seq, blocking,
                         lambda s: comm.reduceScatter(sptr, optr, count, plan.datatype, plan.op, s),
                         (out, send), self._average(out) if plan.average else None)

    # -- data movement (bytes) ------------------------------------------------------------
    def broadcast(self, arr: Any, root: int, blocking: bool, seq: int = 0) -> Optional[NCCLRequest]:
        comm, ptr, nbytes, u8 = self.comm, arr.data.ptr, arr.nbytes, self._bytes
        return self._run("broadcast", seq, blocking,
                         lambda s: comm.broadcast(ptr, ptr, nbytes, u8, root, s), (arr,))

    def all_gather(self, out: Any, arr: Any, blocking: bool, seq: int = 0) -> Optional[NCCLRequest]:
        """``out`` receives ``size`` blocks of ``arr.nbytes``, block i from rank i."""
        comm, sptr, optr, nbytes, u8 = self.comm, arr.data.ptr, out.data.ptr, arr.nbytes, self._bytes
        return self._run("all_gather", seq, blocking,
                         lambda s: comm.allGather(sptr, optr, nbytes, u8, s), (out, arr))

    def scatter(self, out: Any, send: Optional[Any], root: int,
                blocking: bool, seq: int = 0) -> Optional[NCCLRequest]:
        """On ``root``, ``send`` holds ``size`` blocks of ``out.nbytes`` (one array, or a list of
        arrays: ``separate_blocks``); block i goes to rank i."""
        nbytes = out.nbytes
        transfers: List[Transfer] = [(False, out.data.ptr, nbytes, root)]
        if self.rank == root:
            addresses = _addresses(send, [nbytes] * self.size)
            transfers += [(True, address, nbytes, i) for i, address in enumerate(addresses)]
        return self._run("scatter", seq, blocking, self._group(transfers), (out, send))

    def alltoall(self, out: Any, send: Any, blocking: bool, seq: int = 0) -> Optional[NCCLRequest]:
        """Block j of ``send`` goes to rank j; block i of ``out`` comes from rank i."""
        nbytes = out.nbytes // self.size
        sbase, obase = send.data.ptr, out.data.ptr
        transfers: List[Transfer] = []
        for peer in range(self.size):
            transfers.append((True, sbase + peer * nbytes, nbytes, peer))
            transfers.append((False, obase + peer * nbytes, nbytes, peer))
        return self._run("alltoall", seq, blocking, self._group(transfers), (out, send))

    def alltoallv(self, out: Any, send: Any, send_bytes: Sequence[int], recv_bytes: Sequence[int],
                  blocking: bool, seq: int = 0) -> Optional[NCCLRequest]:
        """Block j of ``send`` (``send_bytes[j]`` bytes) goes to rank j; block i of ``out``
        (``recv_bytes[i]`` bytes) comes from rank i; blocks are packed in rank order (``send``
        may instead be a list of the blocks: ``separate_blocks``). Empty blocks are not sent
        (each side knows its own are empty)."""
        transfers: List[Transfer] = []
        for is_send, buffers, sizes in ((True, send, send_bytes), (False, out, recv_bytes)):
            for peer, (address, nbytes) in enumerate(zip(_addresses(buffers, sizes), sizes)):
                if nbytes:
                    transfers.append((is_send, address, nbytes, peer))
        return self._run("alltoallv", seq, blocking, self._group(transfers), (out, send))

    def gather(self, out: Optional[Any], arr: Any, root: int, blocking: bool,
               seq: int = 0) -> Optional[NCCLRequest]:
        """On ``root``, ``out`` receives ``size`` blocks of ``arr.nbytes``, block i from rank i."""
        nbytes = arr.nbytes
        transfers: List[Transfer] = [(True, arr.data.ptr, nbytes, root)]
        if self.rank == root:
            base = out.data.ptr
            transfers += [(False, base + i * nbytes, nbytes, i) for i in range(self.size)]
        return self._run("gather", seq, blocking, self._group(transfers), (out, arr))

    def _p2p(self, name: str, seq: int, transfer: Transfer, arr: Any,
             blocking: bool) -> Optional[NCCLRequest]:
        self._usable(name)
        if blocking:
            self._flush(name, seq, transfer)
            return None
        self._stream.wait_event(self._behind(self._current()))
        request = NCCLRequest(self, name, seq, None, (arr,))
        self._pending.append((transfer, request))
        return request

    def send(self, arr: Any, dst: int, tag: int, blocking: bool, seq: int = 0) -> Optional[NCCLRequest]:
        """Send ``arr`` to ``dst`` (``tag`` is ignored: NCCL matches messages in issue order)."""
        return self._p2p("send", seq, (True, arr.data.ptr, arr.nbytes, dst), arr, blocking)

    def recv(self, arr: Any, src: int, tag: Optional[int], blocking: bool, seq: int = 0,
             arrived: Optional[Callable[[Optional[int], Optional[int]], None]] = None) -> Optional[NCCLRequest]:
        """Receive into ``arr`` from ``src`` (``tag`` is ignored: NCCL matches in issue order).
        NCCL never says how many bytes came, nor with which tag: ``arrived`` is told None, None
        (unknown) at once."""
        request = self._p2p("recv", seq, (False, arr.data.ptr, arr.nbytes, src), arr, blocking)
        if arrived is not None:
            arrived(None, None)
        return request

    def barrier(self, blocking: bool, seq: int = 0) -> Optional[NCCLRequest]:
        """A one-element all_reduce; blocking, the host then waits for the current stream
        (bounded by ``timeout``, watching for NCCL errors)."""
        if self._token is None:
            with self._cuda.on_device(self.device):
                self._token = self.xp.zeros(1, np.int32)
        token, comm, nccl = self._token, self.comm, self._nccl
        ptr = token.data.ptr
        request = self._run("barrier", seq, blocking,
                            lambda s: comm.allReduce(ptr, ptr, 1, nccl.NCCL_INT32, nccl.NCCL_SUM, s),
                            (token,))
        if blocking:
            self._host_wait("barrier")
        return request

    # -- communicators -------------------------------------------------------------------
    def split(self, member: bool, key: int, timeout: float, color: int = 0) -> Optional["NCCLBackend"]:
        """Collective over this communicator: members get a backend on a new sub-communicator of
        the members of their ``color``, whose ranks are ordered by ``key``, then by rank here (see
        :func:`split_communicator`)."""
        self._usable("split")
        if self._pending:
            self._flush("split", 0)
        # ncclCommSplit may deadlock with operations in flight: let them finish first
        self._host_wait("split", self._stream)
        self._host_wait("split")
        try:
            comm = split_communicator(self, member, key, lambda: self._host_wait("split"), color)
        except CollectiveError:
            raise
        except Exception as exc:
            raise self._fail("split", exc) from exc
        return NCCLBackend(comm, timeout) if member else None

    def abort(self) -> None:
        """Abort the communicator (``ncclCommAbort``): its kernels stop and its calls fail.

        For the watchdog and error paths; safe to call from another thread, and more than once.
        """
        if self._broken is None:
            self._broken = "the nccl communicator was aborted"
        self._pending = []
        comm = self.comm
        if comm is not None:
            comm.abort()

    def free(self) -> None:
        """Launch any held-back transfers, then destroy the communicator (``ncclCommDestroy``)."""
        comm = self.comm
        if comm is None:
            return
        if self._pending and self._broken is None:
            self._flush("free", 0)
        self.comm = None
        self._broken = self._broken or "the nccl communicator has been freed"
        comm.destroy()
