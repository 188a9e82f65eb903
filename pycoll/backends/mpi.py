"""The CPU engine: collectives on NumPy arrays through mpi4py's buffer interface.

Implements :class:`pycoll.backends.base.Backend`. ``blocking=True`` runs MPI's blocking call
(its fastest path, the shared-memory collectives included) and returns None once the result is
in place; False starts the non-blocking variant and returns an :class:`MPIRequest` for the
caller to poll. The ``seq`` every call takes is unused here (nothing is enqueued to watch).
Arrays must be C-contiguous and already validated by the caller; data never goes through pickle.
Reductions use the MPI datatype of the array's dtype; pure data movement (broadcast,
gathers, scatters, send/recv) moves bytes, so it serves any fixed-size dtype.

MPI's blocking and non-blocking collectives do not match each other: every rank must make a
given collective with the same ``blocking`` (``PYCOLL_CHECK=1`` compares it).
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, List, Optional, Sequence

import numpy as np
from mpi4py import MPI

from pycoll.backends.reduce_op import Plans, ReduceOp, is_reduce_op, not_a_reduce_op, op_name

MPI_TYPES = {
    np.dtype(np.int8): MPI.INT8_T,
    np.dtype(np.int16): MPI.INT16_T,
    np.dtype(np.int32): MPI.INT32_T,
    np.dtype(np.int64): MPI.INT64_T,
    np.dtype(np.uint8): MPI.UINT8_T,
    np.dtype(np.uint16): MPI.UINT16_T,
    np.dtype(np.uint32): MPI.UINT32_T,
    np.dtype(np.uint64): MPI.UINT64_T,
    np.dtype(np.float32): MPI.FLOAT,
    np.dtype(np.float64): MPI.DOUBLE,
    np.dtype(np.complex64): MPI.C_FLOAT_COMPLEX,
    np.dtype(np.complex128): MPI.C_DOUBLE_COMPLEX,
    np.dtype(np.bool_): MPI.C_BOOL,
}
MPI_OPS = {
    ReduceOp.SUM: MPI.SUM,
    ReduceOp.AVG: MPI.SUM,  # MPI has no average: sum, then divide by the group size
    ReduceOp.MAX: MPI.MAX,
    ReduceOp.MIN: MPI.MIN,
    ReduceOp.PROD: MPI.PROD,
}
# booleans reduce as paddle's do: a sum or max is "any", a min or product "all"
BOOL_OPS = {ReduceOp.SUM: MPI.LOR, ReduceOp.MAX: MPI.LOR, ReduceOp.MIN: MPI.LAND, ReduceOp.PROD: MPI.LAND}
REDUCIBLE_DTYPES = tuple(str(d) for d in MPI_TYPES)


# MPI has no 16-bit floats: they are reduced as float32 and rounded back once, at the end
HALVES = ("float16", "bfloat16")


def is_half(dtype: np.dtype) -> bool:
    """Whether ``dtype`` is one of HALVES (the kind and size tested first: ``dtype.name`` costs
    microseconds, a call's worth)."""
    return dtype.itemsize == 2 and dtype.kind in "fV" and dtype.name in HALVES


def reduction_error(dtype: np.dtype, op: int) -> Optional[str]:
    """Why ``op`` cannot reduce ``dtype`` on this engine, or None when it can."""
    if not is_reduce_op(op):
        return not_a_reduce_op(op)
    if is_half(dtype):
        return None
    if dtype not in MPI_TYPES:
        return (f"dtype {dtype} cannot be reduced by the cpu (MPI) backend; "
                f"reducible dtypes: {', '.join(REDUCIBLE_DTYPES + HALVES)}")
    if op in (ReduceOp.MAX, ReduceOp.MIN) and dtype.kind == "c":
        return f"{op_name(op)} is not defined for complex dtype {dtype}"
    if op == ReduceOp.AVG and dtype.kind not in "fc":
        return f"ReduceOp.AVG needs a floating or complex dtype, got {dtype}"
    return None


def _number_over_nan(dtype: np.dtype, op: int) -> MPI.Op:
    """ReduceOp.MAX or MIN of floating ``dtype`` as NCCL's (fmax/fmin): a NaN loses to a number
    and stays only where every rank holds one. MPI's own MAX keeps a NaN or drops it by where it
    sits in the order of the reduction (which rank holds it); this result does not depend on it."""
    pick = np.fmax if op == ReduceOp.MAX else np.fmin

    def combine(incoming: Any, inout: Any, datatype: MPI.Datatype) -> None:
        into = np.frombuffer(inout, dtype)
        pick(np.frombuffer(incoming, dtype), into, out=into)
    return MPI.Op.Create(combine, commute=True)


class Reduction:
    """How to run one (dtype, op) reduction: MPI datatype, MPI op, and whether to average."""

    __slots__ = ("mpitype", "mpiop", "average", "wide")

    def __init__(self, dtype: np.dtype, op: int):
        # a 16-bit float is reduced as float32 (``wide``: that reduction), rounded back at the end
        self.wide = Reduction(np.dtype(np.float32), op) if is_half(dtype) else None
        self.mpitype = MPI.FLOAT if self.wide else MPI_TYPES[dtype]
        if dtype.kind == "b":
            self.mpiop = BOOL_OPS[op]
        elif dtype.kind == "f" and op in (ReduceOp.MAX, ReduceOp.MIN) and not self.wide:
            self.mpiop = _number_over_nan(dtype, op)
        else:
            self.mpiop = MPI_OPS[op]
        self.average = op == ReduceOp.AVG


def _offsets(counts: Sequence[int]) -> List[int]:
    """Where each of ``counts`` blocks starts when they are packed one after another."""
    return [0, *itertools.accumulate(counts)][:-1]


class MPIRequest:
    """One started MPI request, plus an optional action run once when it completes."""

    __slots__ = ("_request", "_then")

    def __init__(self, request: MPI.Request, then: Optional[Callable[[], None]] = None):
        self._request = request
        self._then = then

    def join_stream(self) -> bool:
        """MPI has no stream to hand the call to: the host polls :meth:`test`."""
        return False

    def test(self, start: bool = True) -> bool:
        """Progress the request; True (after running the completion action) once it is done.
        (Nothing is held back, so ``start`` changes nothing.)"""
        if self._request is None:
            return True
        if not self._request.Test():
            return False
        self._request = None
        then, self._then = self._then, None
        if then is not None:
            then()
        return True


def _truncated(exc: MPI.Exception) -> bool:
    """Whether a receive's ``exc`` is MPI's truncation of a message longer than the buffer.

    MPI then writes the part that fits, drops the rest and consumes the message (the
    communicator stays usable), but does not say how long it was: learning that would take an
    ``MPI_Probe`` before every receive, which costs a well-sized receive time (about 0.5 us a
    1 KiB message here) for a case that is an error anyway. So ``arrived`` is told one byte more
    than the buffer holds ("more than fits"); ``PYCOLL_CHECK=1``'s descriptor names the size sent.
    """
    return exc.Get_error_class() == MPI.ERR_TRUNCATE


class _Receive(MPIRequest):
    """A non-blocking receive whose ``arrived`` is told the byte count (one longer than the
    buffer when MPI truncated the message) and the message's tag at completion."""

    __slots__ = ("_status", "_arrived", "_nbytes")

    def __init__(self, request: MPI.Request, arrived: Callable[[Optional[int], Optional[int]], None],
                 status: MPI.Status, nbytes: int):
        super().__init__(request)
        self._status, self._arrived, self._nbytes = status, arrived, nbytes

    def test(self, start: bool = True) -> bool:
        if self._request is None:
            return True
        status = self._status
        try:
            if not self._request.Test(status):
                return False
            count = status.Get_count(MPI.BYTE)
        except MPI.Exception as exc:
            if not _truncated(exc):
                raise
            count = self._nbytes + 1
        tag = status.Get_tag()
        self._request = self._status = None
        self._arrived(count, tag)
        return True


class MPIBackend:
    """Collectives over one MPI communicator (a private duplicate, never the user's)."""

    name = "cpu"
    xp = np  # the array module this engine moves
    stream_ordered = False
    device = None  # host memory
    _plans = Plans(reduction_error, Reduction)  # shared by all communicators
    plan = _plans.get  # how to reduce (dtype, op); ValueError/TypeError saying why it cannot
    can_reduce = _plans.can

    def __init__(self, comm: MPI.Comm, timeout: float):
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.timeout = float(timeout)
        self._discard = np.empty(0, np.uint8)  # a non-root's blocking reduce result (see reduce)


    @staticmethod
    def _start(request: MPI.Request, then: Optional[Callable[[], None]] = None) -> MPIRequest:
        return MPIRequest(request, then)

    # -- reductions ------------------------------------------------------------------
    def _average(self, arr: np.ndarray, plan: Reduction) -> Optional[Callable[[], None]]:
        if not plan.average:
            return None
        size = self.size
        return lambda: np.divide(arr, size, out=arr)

    def _widened(self, method: Callable[..., Optional[MPIRequest]], result: np.ndarray, blocking: bool,
                 *arrays: np.ndarray, **kwargs: Any) -> Optional[MPIRequest]:
        """``method`` run on float32 copies of 16-bit ``arrays`` (the first receives; ``result``,
        one of them, gets the rounded-back values when it completes). The copies live in the
        request until then."""
        wide = [a.astype(np.float32) for a in arrays]
        target = wide[[a is result for a in arrays].index(True)]

        def narrow() -> None:
            with np.errstate(over="ignore"):  # a float16 sum past 65504 is inf, as on the GPU, unwarned
                result[...] = target

        request = method(*wide, plan=kwargs.pop("plan").wide, blocking=blocking, **kwargs)
        if request is None:
            narrow()
            return None
        average = request._then
        return self._start(request._request, narrow if average is None else lambda: (average(), narrow()))

    def all_reduce(self, arr: np.ndarray, plan: Reduction, blocking: bool,
                   seq: int = 0) -> Optional[MPIRequest]:
        if plan.wide is not None:
            return self._widened(self.all_reduce, arr, blocking, arr, plan=plan)
        if blocking:  # the hot path: no closures, no request object
            self.comm.Allreduce(MPI.IN_PLACE, [arr, plan.mpitype], plan.mpiop)
            if plan.average:
                np.divide(arr, self.size, out=arr)
            return None
        return self._start(self.comm.Iallreduce(MPI.IN_PLACE, [arr, plan.mpitype], plan.mpiop),
                           self._average(arr, plan))

    def reduce(self, arr: np.ndarray, root: int, plan: Reduction, blocking: bool,
               seq: int = 0) -> Optional[MPIRequest]:
        """In place on ``root``; the other ranks' arrays are unchanged. An all-reduce whose result
        the other ranks drop: MPICH's MPI_Reduce takes a fresh temporary buffer each call, and its
        page faults made a 1-4 MiB reduce 5-8x slower than the all-reduce of the same array,
        which is as fast as MPI_Reduce at every size below (bench/RESULTS.md, "reduce"). Always
        the all-reduce, whatever the size: ranks whose sizes differ (a user's mistake) then make
        the same MPI call, which MPI refuses at once, where choosing by size made them hang."""
        if plan.wide is not None:  # (a rank that is not the root gets its own values back)
            return self._widened(self.reduce, arr, blocking, arr, plan=plan, root=root)
        buf, mine = [arr, plan.mpitype], self.rank == root
        then = self._average(arr, plan) if mine else None
        if mine:
            args = (MPI.IN_PLACE, buf, plan.mpiop)
        else:
            dropped = self._dropped(arr, blocking)
            args = (buf, [dropped, plan.mpitype], plan.mpiop)
            if not blocking:  # the request holds it until the call completes
                then = lambda: dropped  # noqa: E731
        if not blocking:
            return self._start(self.comm.Iallreduce(*args), then)
        self.comm.Allreduce(*args)
        if then is not None:
            then()
        return None

    def _dropped(self, like: np.ndarray, blocking: bool) -> np.ndarray:
        """Memory shaped as ``like`` for a result this rank drops: for a blocking call the
        engine's own (kept and grown, so that its pages are touched once), else a new array
        (a non-blocking call may still be writing its own when the next one starts)."""
        if not blocking:
            return np.empty_like(like)
        if self._discard.nbytes < like.nbytes:
            self._discard = np.empty(like.nbytes, np.uint8)
        return self._discard[:like.nbytes].view(like.dtype).reshape(like.shape)

    def reduce_scatter(self, out: np.ndarray, send: np.ndarray, plan: Reduction,
                       blocking: bool, seq: int = 0) -> Optional[MPIRequest]:
        """``send`` holds ``size`` blocks of ``out.size`` elements; block i is reduced into rank i."""
        if plan.wide is not None:
            return self._widened(self.reduce_scatter, out, blocking, out, send, plan=plan)
        args = ([send, plan.mpitype], [out, plan.mpitype], plan.mpiop)
        if not blocking:
            return self._start(self.comm.Ireduce_scatter_block(*args), self._average(out, plan))
        self.comm.Reduce_scatter_block(*args)
        if plan.average:
            np.divide(out, self.size, out=out)
        return None

    # -- data movement (bytes) ------------------------------------------------------------
    def broadcast(self, arr: np.ndarray, root: int, blocking: bool, seq: int = 0) -> Optional[MPIRequest]:
        if blocking:
            return self.comm.Bcast([arr, MPI.BYTE], root)
        return self._start(self.comm.Ibcast([arr, MPI.BYTE], root))

    def all_gather(self, out: np.ndarray, arr: np.ndarray, blocking: bool,
                   seq: int = 0) -> Optional[MPIRequest]:
        """``out`` receives ``size`` blocks of ``arr.nbytes``, block i from rank i."""
        args = ([arr, MPI.BYTE], [out, MPI.BYTE])
        return self.comm.Allgather(*args) if blocking else self._start(self.comm.Iallgather(*args))

    def scatter(self, out: np.ndarray, send: Optional[np.ndarray], root: int,
                blocking: bool, seq: int = 0) -> Optional[MPIRequest]:
        """On ``root``, ``send`` holds ``size`` blocks of ``out.nbytes``; block i goes to rank i."""
        args = ([send, MPI.BYTE] if self.rank == root else None, [out, MPI.BYTE], root)
        return self.comm.Scatter(*args) if blocking else self._start(self.comm.Iscatter(*args))

    def alltoall(self, out: np.ndarray, send: np.ndarray, blocking: bool,
                 seq: int = 0) -> Optional[MPIRequest]:
        """Block j of ``send`` goes to rank j; block i of ``out`` comes from rank i."""
        args = ([send, MPI.BYTE], [out, MPI.BYTE])
        return self.comm.Alltoall(*args) if blocking else self._start(self.comm.Ialltoall(*args))

    def alltoallv(self, out: np.ndarray, send: np.ndarray, send_bytes: Sequence[int],
                  recv_bytes: Sequence[int], blocking: bool, seq: int = 0) -> Optional[MPIRequest]:
        """Block j of ``send`` (``send_bytes[j]`` bytes) goes to rank j; block i of ``out``
        (``recv_bytes[i]`` bytes) comes from rank i; blocks are packed in rank order."""
        args = ([send, (send_bytes, _offsets(send_bytes)), MPI.BYTE],
                [out, (recv_bytes, _offsets(recv_bytes)), MPI.BYTE])
        return self.comm.Alltoallv(*args) if blocking else self._start(self.comm.Ialltoallv(*args))

    def gather(self, out: Optional[np.ndarray], arr: np.ndarray, root: int, blocking: bool,
               seq: int = 0) -> Optional[MPIRequest]:
        """On ``root``, ``out`` receives ``size`` blocks of ``arr.nbytes``, block i from rank i."""
        args = ([arr, MPI.BYTE], [out, MPI.BYTE] if self.rank == root else None, root)
        return self.comm.Gather(*args) if blocking else self._start(self.comm.Igather(*args))

    def send(self, arr: np.ndarray, dst: int, tag: int, blocking: bool,
             seq: int = 0) -> Optional[MPIRequest]:
        args = ([arr, MPI.BYTE], dst, tag)
        return self.comm.Send(*args) if blocking else self._start(self.comm.Isend(*args))

    def recv(self, arr: np.ndarray, src: int, tag: Optional[int], blocking: bool, seq: int = 0,
             arrived: Optional[Callable[[Optional[int], Optional[int]], None]] = None) -> Optional[MPIRequest]:
        """``tag`` None takes a message of any tag. ``arrived`` gets the byte count of the
        message's status (it may be short of ``arr``, or ``arr.nbytes + 1`` for a message longer
        than ``arr``: :func:`_truncated`) and its tag."""
        args = ([arr, MPI.BYTE], src, MPI.ANY_TAG if tag is None else tag)
        if arrived is None:
            return self.comm.Recv(*args) if blocking else self._start(self.comm.Irecv(*args))
        status = MPI.Status()
        if not blocking:
            return _Receive(self.comm.Irecv(*args), arrived, status, arr.nbytes)
        try:
            self.comm.Recv(*args, status)
        except MPI.Exception as exc:
            if not _truncated(exc):
                raise
            arrived(arr.nbytes + 1, status.Get_tag())  # (MPI fills the status of a truncated one)
            return None
        arrived(status.Get_count(MPI.BYTE), status.Get_tag())
        return None

    def barrier(self, blocking: bool, seq: int = 0) -> Optional[MPIRequest]:
        return self.comm.Barrier() if blocking else self._start(self.comm.Ibarrier())

    # -- communicators -------------------------------------------------------------------
    def split(self, member: bool, key: int, timeout: float, color: int = 0) -> Optional["MPIBackend"]:
        """Collective over this communicator: members get a backend on a new sub-communicator of
        the members of their ``color``."""
        comm = self.comm.Split(color if member else MPI.UNDEFINED, key)
        return MPIBackend(comm, timeout) if member else None

    def group_of(self, members: List[int], timeout: float) -> "MPIBackend":
        """A backend over ``members`` (ranks of this communicator, this one among them), made by
        those ranks only (``MPI_Comm_create_group``): ranks outside need not take part, so a
        sub-group's members may create it by themselves, as paddle's allow."""
        group = self.comm.Get_group().Incl(members)
        try:
            tag = sum((r + 1) * 131 ** i for i, r in enumerate(members)) % 32749  # one per member list
            return MPIBackend(self.comm.Create_group(group, tag), timeout)
        finally:
            group.Free()

    # -- watching: nothing is enqueued, so there is nothing to time or abort ---------------
    def stalled_call(self) -> None:
        return None

    def async_error(self) -> None:
        return None

    def abort(self) -> None:
        """Nothing to stop: a blocking MPI call ends with the process (``MPI_Abort``)."""

    def free(self) -> None:
        if self.comm != MPI.COMM_NULL:
            self.comm.Free()
