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
complex arrays travel as twice as many floats, which is exact for SUM and AVG only. Pure data
movement moves bytes, so it serves any fixed-size dtype.

Point-to-point. NCCL runs a communicator's operations in the order they are issued, and a
send only completes against a receive that is already running. So that the MPI patterns work
(``irecv`` from the left, then ``send`` to the right, around a ring; ``isend`` + ``irecv``
and then waits), a non-blocking send or receive is held back and launched together with the
next send/receive as one NCCL group (``groupStart()``/``groupEnd()``), or when its request is
tested or joined, or before the next collective on this communicator, whichever comes first.
NCCL has no tags: between two ranks, messages match in the order they are issued.

Watching. Nothing here waits on the host, so a peer that never joins shows as a hang at the
user's next synchronize. Every enqueued call is therefore recorded with an event behind it; the
watchdog thread (``pycoll.distributed.watchdog``) asks ``stalled_call()`` for the oldest call
whose event has not fired and ``async_error()`` for NCCL's asynchronous errors, and aborts the
communicator when a call is overdue, as torch's NCCL watchdog does.

Arrays must be C-contiguous CuPy arrays on this communicator's device, already validated by
the caller. Arrays used by a non-blocking call are kept alive by its request until it is done.
Importing this module imports nothing from CuPy; CuPy is imported when first needed.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any, Callable, Deque, List, Optional, Sequence, Tuple

import numpy as np

from pycoll._errors import CollectiveError
from pycoll._logging import logger
from pycoll.backends.reduce_op import ReduceOp, is_reduce_op, not_a_reduce_op, op_name, plan_error

UNIQUE_ID_BYTES = 128  # NCCL_UNIQUE_ID_BYTES
DEFAULT_TIMEOUT_S = 1800.0
_NO_COLOR = -1  # NCCL_SPLIT_NOCOLOR: this rank joins no communicator of a split
_POLL_S = 50e-6
_NATIVE_AVG_VERSION = 21000  # ncclAvg arrived in NCCL 2.10
_COMM_SPLIT_VERSION = 21801  # ncclCommSplit arrived in NCCL 2.18.1
_PRUNE_AT = 64  # watched calls kept before the enqueuing thread drops the completed ones itself

# dtype name -> (NCCL datatype constant, NCCL elements per array element)
NCCL_TYPES = {
    "int8": ("NCCL_INT8", 1),
    "uint8": ("NCCL_UINT8", 1),
    "int32": ("NCCL_INT32", 1),
    "uint32": ("NCCL_UINT32", 1),
    "int64": ("NCCL_INT64", 1),
    "uint64": ("NCCL_UINT64", 1),
    "float16": ("NCCL_FLOAT16", 1),
    "bfloat16": ("NCCL_BFLOAT16", 1),  # ml_dtypes.bfloat16, where CuPy and NCCL have it
    "float32": ("NCCL_FLOAT32", 1),
    "float64": ("NCCL_FLOAT64", 1),
    "complex64": ("NCCL_FLOAT32", 2),
    "complex128": ("NCCL_FLOAT64", 2),
}
NCCL_OPS = {
    ReduceOp.SUM: "NCCL_SUM",
    ReduceOp.MAX: "NCCL_MAX",
    ReduceOp.MIN: "NCCL_MIN",
    ReduceOp.PROD: "NCCL_PROD",
    ReduceOp.AVG: "NCCL_AVG",
}

_module: Any = None


def nccl_module() -> Any:
    """``cupy.cuda.nccl``, imported on first use; RuntimeError when libnccl cannot be loaded."""
    global _module
    if _module is None:
        from cupy.cuda import nccl

        if not nccl.available:
            raise RuntimeError(
                "the nccl backend needs NCCL, but cupy.cuda.nccl could not load libnccl; install "
                "the NCCL wheel matching your CuPy (pip install nvidia-nccl-cu12 / nvidia-nccl-cu13)")
        _module = nccl
    return _module


def _has(constant: str) -> bool:
    """Whether the installed ``cupy.cuda.nccl`` defines ``constant`` (False without NCCL)."""
    try:
        return hasattr(nccl_module(), constant)
    except Exception:
        return False


def reducible_dtypes() -> List[str]:
    return [name for name, (const, _) in NCCL_TYPES.items() if name != "bfloat16" or _has(const)]


def reduction_error(dtype: np.dtype, op: int) -> Optional[str]:
    """Why ``op`` cannot reduce ``dtype`` on this engine, or None when it can."""
    if not is_reduce_op(op):
        return not_a_reduce_op(op)
    entry = NCCL_TYPES.get(dtype.name)
    if entry is None or (dtype.name == "bfloat16" and not _has(entry[0])):
        return (f"dtype {dtype} cannot be reduced by the nccl backend; "
                f"reducible dtypes: {', '.join(reducible_dtypes())}")
    if dtype.kind == "c":
        if op in (ReduceOp.MAX, ReduceOp.MIN):
            return f"{op_name(op)} is not defined for complex dtype {dtype}"
        if op == ReduceOp.PROD:
            return (f"ReduceOp.PROD of complex dtype {dtype} is not supported by the nccl backend: "
                    f"NCCL would multiply real and imaginary parts separately, not as complex numbers")
    if op == ReduceOp.AVG and dtype.kind not in "fc" and dtype.name != "bfloat16":  # ml_dtypes: kind "V"
        return f"ReduceOp.AVG needs a floating or complex dtype, got {dtype}"
    return None


def _native_avg() -> bool:
    nccl = nccl_module()
    return hasattr(nccl, "NCCL_AVG") and nccl.get_version() >= _NATIVE_AVG_VERSION


class Reduction:
    """How to run one (dtype, op) reduction: NCCL datatype and op, element factor, and whether
    the average is a sum followed by a divide (NCCL before 2.10)."""

    __slots__ = ("datatype", "op", "factor", "average")

    def __init__(self, dtype: np.dtype, op: int):
        nccl = nccl_module()
        type_name, self.factor = NCCL_TYPES[dtype.name]
        self.datatype = getattr(nccl, type_name)
        self.average = op == ReduceOp.AVG and not _native_avg()
        self.op = nccl.NCCL_SUM if self.average else getattr(nccl, NCCL_OPS[op])


# -- unique ids and communicators ---------------------------------------------------------
def new_unique_id() -> bytes:
    """A fresh NCCL unique id as bytes (CuPy 14 returns bytes, earlier CuPy a tuple of chars)."""
    uid = nccl_module().get_unique_id()
    return uid if isinstance(uid, bytes) else bytes(b & 0xFF for b in uid)


def new_communicator(nranks: int, uid: bytes, rank: int) -> Any:
    """``NcclCommunicator(nranks, uid, rank)`` on the current device; collective, blocking."""
    if len(uid) != UNIQUE_ID_BYTES:
        raise ValueError(f"uid has {len(uid)} bytes; an NCCL unique id has {UNIQUE_ID_BYTES}")
    Communicator = nccl_module().NcclCommunicator
    try:
        return Communicator(nranks, uid, rank)
    except TypeError:  # CuPy before 14 takes the id as a tuple of (signed) chars
        return Communicator(nranks, tuple(b - 256 if b > 127 else b for b in uid), rank)


def split_order(table: np.ndarray) -> List[int]:
    """The parent ranks of a split's members in new-rank order, from the gathered ``table``
    (row r: parent rank r's ``[member, key]``): by key, then parent rank, as ncclCommSplit does."""
    return [r for _, r in sorted((int(key), r) for r, (member, key) in enumerate(table) if member)]


# A point-to-point transfer inside an NCCL group: (is_send, device pointer, bytes, peer).
Transfer = Tuple[bool, int, int, int]

def launch_group(comm: Any, transfers: Sequence[Transfer], stream: int) -> None:
    """Enqueue ``transfers`` (bytes) on ``stream`` as one NCCL group (``groupStart``/``groupEnd``)."""
    nccl = nccl_module()
    u8 = nccl.NCCL_UINT8
    nccl.groupStart()
    try:
        for is_send, ptr, nbytes, peer in transfers:
            if is_send:
                comm.send(ptr, nbytes, u8, peer, stream)
            else:
                comm.recv(ptr, nbytes, u8, peer, stream)
    finally:
        nccl.groupEnd()


# -- requests -------------------------------------------------------------------------------
class NCCLRequest:
    """A non-blocking call: ``test()`` polls it, ``join_stream()`` hands it to the current stream.

    A held-back send/receive (see the module notes) is launched by the first ``test()`` or
    ``join_stream()``. Both raise :class:`pycoll.CollectiveError` when NCCL reports an error on
    the communicator (which is then aborted).
    """

    __slots__ = ("_backend", "_name", "_seq", "_event", "_keep")

    def __init__(self, backend: "NCCLBackend", name: str, seq: int, event: Any, keep: Tuple[Any, ...]):
        self._backend = backend
        self._name, self._seq = name, seq
        self._event = event  # None while a held-back send/receive waits for its launch
        self._keep: Optional[Tuple[Any, ...]] = keep  # None once done

    def _launched(self, event: Any) -> None:
        self._event = event

    def _started(self) -> Any:
        if self._event is None:
            self._backend._flush(self._name, self._seq)
        return self._event

    def test(self, start: bool = True) -> bool:
        """True once the call is complete (its results are in place); a held-back transfer is
        launched first, unless ``start`` is False (it then counts as incomplete)."""
        if self._keep is None:
            return True
        if self._event is None and not start:
            return False
        self._backend._usable(self._name)  # after an abort, events complete without results
        if self._started().done:
            self._keep = None
            return True
        self._backend._check(self._name)
        return False

    def join_stream(self) -> bool:
        """Make the current stream wait for the call; later work on it sees the results.

        Returns (True) without waiting on the host; the request counts as complete afterwards.
        """
        if self._keep is None:
            return True
        event = self._started()
        self._backend._check(self._name)
        self._backend._current().wait_event(event)
        self._keep = None
        return True


class Launched:
    """A call enqueued on the communicator's streams: what it was, when, and the event behind it.

    ``seq`` is the caller's number for the call (0 for an engine used directly);
    ``warned`` is set by the watchdog once it has logged a stall warning for this call.
    """

    __slots__ = ("name", "seq", "started", "event", "warned")

    def __init__(self, name: str, seq: int, event: Any):
        self.name, self.seq, self.event = name, seq, event
        self.started = time.monotonic()
        self.warned = False

    @property
    def done(self) -> bool:
        return self.event.done



class NCCLBackend:
    """Collectives over one NCCL communicator, on the device that was current when it was made."""

    name = "nccl"
    stream_ordered = True
    reduction_error = staticmethod(reduction_error)  # TEMPORARY: the bench's runner reads it
    _reductions: dict = {}  # (dtype, op) -> Reduction, shared by all communicators

    def __init__(self, comm: Any, timeout: float = DEFAULT_TIMEOUT_S):
        """Wrap ``comm`` (a ``cupy.cuda.nccl.NcclCommunicator``); ``timeout`` bounds the host
        waits of ``barrier`` and ``split``."""
        import cupy

        self.comm = comm
        self.rank = comm.rank_id()
        self.size = comm.size()
        self.device = comm.device_id()
        self.timeout = float(timeout)
        self._cupy = cupy
        self.xp = cupy  # the array module this engine moves
        self._current = cupy.cuda.get_current_stream
        with cupy.cuda.Device(self.device):
            self._stream = cupy.cuda.Stream(non_blocking=True)
        self._bytes = nccl_module().NCCL_UINT8
        self._pending: List[Tuple[Transfer, NCCLRequest]] = []
        self._token: Any = None  # the barrier's one-element buffer
        self._broken: Optional[str] = None
        self._in_flight: Deque[Launched] = deque()  # oldest first; shared with the watchdog thread
        self._in_flight_lock = threading.Lock()  # held while dropping completed calls

    @classmethod
    def create(cls, nranks: int, uid: bytes, rank: int,
               timeout: float = DEFAULT_TIMEOUT_S) -> "NCCLBackend":
        """A backend over a new communicator (collective over the ``nranks`` ranks sharing ``uid``)."""
        return cls(new_communicator(nranks, uid, rank), timeout)

    def plan(self, dtype: np.dtype, op: int) -> Reduction:
        """How to reduce ``dtype`` with ``op``; ValueError/TypeError saying why it cannot."""
        try:
            return self._reductions[(dtype, op)]
        except (KeyError, TypeError):  # TypeError: an unhashable op
            why = reduction_error(dtype, op)
            if why is not None:
                raise plan_error(op, why) from None
            plan = self._reductions[(dtype, op)] = Reduction(dtype, op)
            return plan

    def can_reduce(self, dtype: np.dtype, op: int) -> bool:
        return reduction_error(dtype, op) is None

    # -- machinery -----------------------------------------------------------------------
    def _event(self, stream: Any) -> Any:
        event = self._cupy.cuda.Event(block=False, disable_timing=True)
        event.record(stream)
        return event

    def _usable(self, name: str) -> None:
        if self._broken is not None:
            raise CollectiveError(f"{name}: {self._broken}")

    def _fail(self, name: str, exc: BaseException) -> CollectiveError:
        """Mark the communicator broken, abort it (releasing stuck kernels), and describe why."""
        message = (f"{name} on the nccl communicator (rank {self.rank} of {self.size}, "
                   f"device {self.device}) failed: {exc}")
        logger.error("pycoll: %s; aborting the communicator", message)
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

    def _host_wait(self, event: Any, name: str) -> None:
        """Wait on the host for ``event``, watching for NCCL errors, at most ``timeout`` seconds."""
        deadline = time.monotonic() + self.timeout
        while not event.done:
            self._check(name)
            if time.monotonic() > deadline:
                raise self._fail(name, TimeoutError(f"not complete within {self.timeout:g} s"))
            time.sleep(_POLL_S)

    def _enqueue(self, name: str, launch: Callable[[int], None], stream: Any) -> None:
        try:
            launch(stream.ptr)
        except Exception as exc:
            if isinstance(exc, CollectiveError):
                raise
            raise self._fail(name, exc) from exc

    def _watch(self, name: str, seq: int, event: Any) -> None:
        """Record an enqueued call for the watchdog; ``event`` fires once it is complete."""
        self._in_flight.append(Launched(name, seq, event))
        if len(self._in_flight) > _PRUNE_AT:
            self._drop_completed()

    def _drop_completed(self) -> None:
        """Forget the oldest calls that have completed. Appending needs no lock (a deque's
        appends and pops are thread-safe); the lock keeps two threads from dropping at once."""
        with self._in_flight_lock:
            launched = self._in_flight
            while launched and launched[0].event.done:
                launched.popleft()

    def stalled_call(self) -> Optional[Launched]:
        """The oldest enqueued call that has not completed, or None. For the watchdog thread:
        it makes the communicator's device current in the calling thread first (a thread's
        first CUDA call would otherwise open a context on device 0)."""
        self._cupy.cuda.runtime.setDevice(self.device)
        self._drop_completed()
        try:
            return self._in_flight[0]
        except IndexError:
            return None

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
        self._usable(name)
        if self._pending:
            self._flush(name, seq)
        current = self._current()
        if blocking:
            self._enqueue(name, launch, current)
            if then is not None:
                then()
            self._watch(name, seq, self._event(current))
            return None
        side = self._stream
        side.wait_event(self._event(current))
        self._enqueue(name, launch, side)
        if then is not None:
            with side:
                then()
        done = self._event(side)
        self._watch(name, seq, done)
        return NCCLRequest(self, name, seq, done, keep)

    def _group(self, transfers: Sequence[Transfer]) -> Callable[[int], None]:
        """A launch of ``transfers`` as one NCCL group."""
        comm = self.comm
        return lambda stream: launch_group(comm, transfers, stream)

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
                self._watch(name, seq, self._event(current))
            return
        side = self._stream
        transfers = [transfer for transfer, _ in pending]
        if extra is not None:
            side.wait_event(self._event(current))
            transfers.append(extra)
        self._enqueue(name, self._group(transfers), side)
        done = self._event(side)
        self._watch(name, seq, done)
        for _, request in pending:
            request._launched(done)
        if extra is not None:
            current.wait_event(done)

    def _average(self, arr: Any, plan: Reduction) -> Optional[Callable[[], None]]:
        if not plan.average:
            return None
        divide, size = self._cupy.divide, self.size
        return lambda: divide(arr, size, out=arr)

    # -- reductions ----------------------------------------------------------------------
    def all_reduce(self, arr: Any, plan: Reduction, blocking: bool, seq: int = 0) -> Optional[NCCLRequest]:
        comm, ptr, count = self.comm, arr.data.ptr, arr.size * plan.factor
        return self._run("all_reduce", seq, blocking,
                         lambda s: comm.allReduce(ptr, ptr, count, plan.datatype, plan.op, s),
                         (arr,), self._average(arr, plan))

    def reduce(self, arr: Any, root: int, plan: Reduction, blocking: bool,
               seq: int = 0) -> Optional[NCCLRequest]:
        """In place on ``root``; NCCL leaves the other ranks' arrays unchanged."""
        comm, ptr, count = self.comm, arr.data.ptr, arr.size * plan.factor
        then = self._average(arr, plan) if self.rank == root else None
        return self._run("reduce", seq, blocking,
                         lambda s: comm.reduce(ptr, ptr, count, plan.datatype, plan.op, root, s),
                         (arr,), then)

    def reduce_scatter(self, out: Any, send: Any, plan: Reduction,
                       blocking: bool, seq: int = 0) -> Optional[NCCLRequest]:
        """``send`` holds ``size`` blocks of ``out.size`` elements; block i is reduced into rank i."""
        comm, sptr, optr, count = self.comm, send.data.ptr, out.data.ptr, out.size * plan.factor
        return self._run("reduce_scatter", seq, blocking,
                         lambda s: comm.reduceScatter(sptr, optr, count, plan.datatype, plan.op, s),
                         (out, send), self._average(out, plan))

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
        """On ``root``, ``send`` holds ``size`` blocks of ``out.nbytes``; block i goes to rank i."""
        nbytes = out.nbytes
        transfers: List[Transfer] = [(False, out.data.ptr, nbytes, root)]
        if self.rank == root:
            base = send.data.ptr
            transfers += [(True, base + i * nbytes, nbytes, i) for i in range(self.size)]
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

    def _p2p(self, name: str, seq: int, transfer: Transfer, arr: Any,
             blocking: bool) -> Optional[NCCLRequest]:
        self._usable(name)
        if blocking:
            self._flush(name, seq, transfer)
            return None
        self._stream.wait_event(self._event(self._current()))
        request = NCCLRequest(self, name, seq, None, (arr,))
        self._pending.append((transfer, request))
        return request

    def send(self, arr: Any, dst: int, tag: int, blocking: bool, seq: int = 0) -> Optional[NCCLRequest]:
        """Send ``arr`` to ``dst`` (``tag`` is ignored: NCCL matches messages in issue order)."""
        return self._p2p("send", seq, (True, arr.data.ptr, arr.nbytes, dst), arr, blocking)

    def recv(self, arr: Any, src: int, tag: int, blocking: bool, seq: int = 0) -> Optional[NCCLRequest]:
        """Receive into ``arr`` from ``src`` (``tag`` is ignored: NCCL matches in issue order)."""
        return self._p2p("recv", seq, (False, arr.data.ptr, arr.nbytes, src), arr, blocking)

    def barrier(self, blocking: bool, seq: int = 0) -> Optional[NCCLRequest]:
        """A one-element all_reduce; blocking, the host then waits for the current stream
        (bounded by ``timeout``, watching for NCCL errors)."""
        if self._token is None:
            with self._cupy.cuda.Device(self.device):
                self._token = self._cupy.zeros(1, np.int32)
        token, comm, nccl = self._token, self.comm, nccl_module()
        ptr = token.data.ptr
        request = self._run("barrier", seq, blocking,
                            lambda s: comm.allReduce(ptr, ptr, 1, nccl.NCCL_INT32, nccl.NCCL_SUM, s),
                            (token,))
        if blocking:
            self._host_wait(self._event(self._current()), "barrier")
        return request

    # -- communicators -------------------------------------------------------------------
    def split(self, member: bool, key: int, timeout: float) -> Optional["NCCLBackend"]:
        """Collective over this communicator: members get a backend on a new sub-communicator.

        Uses ``NcclCommunicator.commSplit`` (CuPy 14+, NCCL 2.18.1+); otherwise the
        members' layout is all-gathered, the new rank 0 makes a unique id and broadcasts it
        over this communicator, and the members build the new communicator from it. Either
        way the new ranks are ordered by ``key``, then by rank here.
        """
        self._usable("split")
        if self._pending:
            self._flush("split", 0)
        # ncclCommSplit may deadlock with operations in flight: let them finish first
        self._host_wait(self._event(self._stream), "split")
        self._host_wait(self._event(self._current()), "split")
        try:
            if hasattr(self.comm, "commSplit") and nccl_module().get_version() >= _COMM_SPLIT_VERSION:
                comm = self.comm.commSplit(0 if member else _NO_COLOR, key)
            else:
                comm = self._split_by_broadcast(member, key)
        except CollectiveError:
            raise
        except Exception as exc:
            raise self._fail("split", exc) from exc
        return NCCLBackend(comm, timeout) if member else None

    def _split_by_broadcast(self, member: bool, key: int) -> Any:
        cupy = self._cupy
        mine = cupy.asarray(np.array([int(member), key], np.int32))
        table = cupy.empty((self.size, 2), np.int32)
        self.all_gather(table, mine, True)
        self._host_wait(self._event(self._current()), "split")
        order = split_order(table.get())
        root = order[0]
        if self.rank == root:
            uid = cupy.asarray(np.frombuffer(new_unique_id(), np.uint8))
        else:
            uid = cupy.empty(UNIQUE_ID_BYTES, np.uint8)
        self.broadcast(uid, root, True)
        self._host_wait(self._event(self._current()), "split")
        if not member:
            return None
        return new_communicator(len(order), uid.get().tobytes(), order.index(self.rank))

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
