"""The NCCL engine's CuPy stand-in: :class:`HostCuda` takes the place of CuPy behind
``pycoll.backends.cuda_api``, with "device" arrays in host memory (a ``numpy.ndarray`` subclass,
which takes host/device mix-ups silently: the tensor/nn side is checked on tests/strict_cupy.py's
stricter stand-in, which reuses this one's NCCL parts).

Two uses:

- unit tests of the NCCL engine and its watchdog (test_nccl.py, test_watchdog.py, through the
  fixtures in nccl_fixtures.py): every stream wait, event record and query, NCCL call and group
  goes into ``log``; events report done only when told (``HostCuda.done`` for all of them,
  ``Event.fired`` for one) and ``events_made`` counts the events made; the test makes the
  engine's :class:`Communicator` itself, which records its calls and carries none out.
- the device API's tests (test_device_api.py): ``cupy.cuda.Stream`` / ``Event`` /
  ``get_current_stream`` / ``get_elapsed_time`` over these streams and events (a stream made
  so has its own pointer, 201, 202, ...; ``use`` makes it current), and a :class:`MemoryPool`
  with ``cupy.cuda``'s allocator over it, for the memory statistics.
- rank workers (tests/ranks/nccl_collectives.py, bad_input_nccl.py) under
  ``PYCOLL_TEST_HOST_CUPY=1``: :func:`install_if_asked` puts a HostCuda in use and its array
  module in ``sys.modules`` as ``cupy``. ``NcclCommunicator`` is then a communicator over MPI:
  it moves the bytes at the addresses pycoll gives it through mpi4py, and reduces with NumPy
  after gathering every rank's input. Every call completes when made, so events are done. What
  this checks is what pycoll hands to NCCL (addresses, counts, datatypes, ops, roots, which
  transfers form a group), not NCCL itself, nor anything about streams (the ``gpu`` tests do).
"""
import contextlib
import ctypes
import os
import sys
import time
import types
import weakref
from typing import Any, ContextManager, List, Optional

import numpy as np

CURRENT, SIDE = 100, 200  # the pointers of the current stream and of every stream made
_TYPE_NAMES = ["NCCL_INT8", "NCCL_UINT8", "NCCL_INT32", "NCCL_UINT32", "NCCL_INT64", "NCCL_UINT64",
               "NCCL_FLOAT16", "NCCL_FLOAT32", "NCCL_FLOAT64", "NCCL_BFLOAT16"]
_OP_NAMES = ["NCCL_SUM", "NCCL_PROD", "NCCL_MAX", "NCCL_MIN", "NCCL_AVG"]


# -- host memory as device memory ---------------------------------------------------------------
class ndarray(np.ndarray):
    """A "device" array: host memory, with CuPy's ``.data.ptr`` (its address)."""

    @property
    def data(self) -> Any:
        return types.SimpleNamespace(ptr=self.__array_interface__["data"][0])

    def get(self) -> np.ndarray:
        return np.array(self)

    def set(self, host: np.ndarray) -> None:
        np.copyto(self, host)


def _device(a: np.ndarray) -> ndarray:
    return a.view(ndarray)


def asarray(a: Any, dtype: Any = None) -> ndarray:
    if isinstance(a, ndarray) and (dtype is None or a.dtype == np.dtype(dtype)):
        return a
    return _device(np.array(a, dtype=dtype))


def asnumpy(a: Any) -> np.ndarray:
    return np.array(a)


def empty(shape: Any, dtype: Any = float) -> ndarray:
    return _device(np.empty(shape, dtype))


def zeros(shape: Any, dtype: Any = float) -> ndarray:
    return _device(np.zeros(shape, dtype))


def ones(shape: Any, dtype: Any = float) -> ndarray:
    return _device(np.ones(shape, dtype))


def full(shape: Any, value: Any, dtype: Any = None) -> ndarray:
    return _device(np.full(shape, value, dtype))


def empty_like(a: Any) -> ndarray:
    return _device(np.empty_like(np.asarray(a)))


def concatenate(arrays: Any) -> ndarray:
    return _device(np.concatenate([np.asarray(a) for a in arrays]))


def ascontiguousarray(a: Any) -> ndarray:
    return _device(np.ascontiguousarray(a))


def copyto(dst: Any, src: Any) -> None:
    np.copyto(dst, src)


def _numpy_type(name: str) -> type:
    """NumPy's scalar types under CuPy's names; no other NumPy name (it would make host arrays)."""
    found = getattr(np, name, None)
    if not isinstance(found, type):
        raise AttributeError(f"host_cuda has no {name!r}")
    return found


def memory(ptr: int, count: int, datatype: int) -> np.ndarray:
    """The ``count`` elements of NCCL ``datatype`` at address ``ptr``, as a writeable NumPy view."""
    name = _TYPE_NAMES[datatype][len("NCCL_"):].lower()
    if name == "bfloat16":
        import ml_dtypes

        name = ml_dtypes.bfloat16
    dtype = np.dtype(name)
    raw = (ctypes.c_uint8 * (count * dtype.itemsize)).from_address(ptr)
    return np.frombuffer(raw, np.uint8).view(dtype)


# -- streams, events and the device -------------------------------------------------------------
class Log(list):
    """What a HostCuda saw, as tuples: ``(what, details...)``."""

    def calls(self, name: str) -> List[tuple]:
        return [c for c in self if c[0] == name]


class Stream:
    """A stream; as ``cupy.cuda.Stream`` (made through the stand-in's ``cupy.cuda.Stream``) it
    also has ``use`` (it becomes the current stream), ``record``, ``synchronize`` and ``done``."""

    device_id = 0

    def __init__(self, cuda: "HostCuda", ptr: int, priority: int = 0):
        self.cuda, self.ptr, self.priority = cuda, ptr, priority

    def wait_event(self, event: "Event") -> None:
        self.cuda.note("wait", self.ptr, event.stream)

    def use(self) -> "Stream":
        self.cuda.streams[-1] = self
        return self

    def record(self, event: Optional["Event"] = None) -> "Event":
        event = Event(self.cuda, None) if event is None else event
        event.record(self)
        return event

    def synchronize(self) -> None:
        self.cuda.note("synchronize", self.ptr)

    @property
    def done(self) -> bool:
        self.cuda.note("query", self.ptr)
        return self.cuda.done

    def is_capturing(self) -> bool:
        return False

    def __enter__(self) -> "Stream":
        self.cuda.streams.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.cuda.streams.pop()


class Event:
    """Recorded on the stream whose pointer is ``stream``; done when its HostCuda's ``done``
    says so, or once ``fired`` is set (and until it is recorded again). Each one made counts in
    its HostCuda's ``events_made``."""

    def __init__(self, cuda: "HostCuda", stream: Optional[int], timing: bool = False):
        self.cuda, self.stream, self.timing = cuda, stream, timing
        self.fired = False
        self.at: Optional[float] = None  # when recorded (host clock), for get_elapsed_time
        cuda.events_made += 1

    def record(self, stream: Optional[Stream] = None) -> None:
        """As ``cupy.cuda.Event.record``: on ``stream``, default the current one. Recorded again,
        the event waits for the work queued before this record, as CUDA's: ``fired`` is reset."""
        self.stream = (stream or self.cuda.current_stream()).ptr
        self.fired = False
        self.at = time.perf_counter() if self.timing else None
        self.cuda.note("record", self.stream)

    def synchronize(self) -> None:
        self.cuda.note("synchronize_event", self.stream)

    @property
    def done(self) -> bool:
        self.cuda.note("query", self.stream)
        return self.cuda.done or self.fired


class Device:
    mem_info = (3 << 30, 4 << 30)  # (free, total) bytes

    def __init__(self, device: int = 0):
        self.id = device

    def use(self) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


class Allocation:
    """What ``MemoryPool.malloc`` gives (CuPy's ``MemoryPointer``): its block goes back to the
    pool when the allocation is dropped, as CuPy's does."""

    device_id = 0

    def __init__(self, pool: "MemoryPool", size: int):
        self.size = size
        weakref.finalize(self, pool._give_back, size)


class MemoryPool:
    """CuPy's default memory pool, by its bookkeeping alone: sizes rounded up to 512 bytes, a freed
    block cached for a later allocation of its size, ``free_all_blocks`` lets the cache go."""

    def __init__(self) -> None:
        self.used = self.total = 0
        self.cached: List[int] = []  # sizes of the free blocks

    def malloc(self, size: int) -> Allocation:
        size = -(-size // 512) * 512
        if size in self.cached:
            self.cached.remove(size)
        else:
            self.total += size
        self.used += size
        return Allocation(self, size)

    def _give_back(self, size: int) -> None:
        self.used -= size
        self.cached.append(size)

    def used_bytes(self) -> int:
        return self.used

    def total_bytes(self) -> int:
        return self.total

    def free_all_blocks(self) -> None:
        self.total -= sum(self.cached)
        self.cached.clear()


# -- NCCL ---------------------------------------------------------------------------------------
def _reduce(rows: np.ndarray, op: int) -> np.ndarray:
    with np.errstate(over="ignore"):  # NCCL's float16 sums overflow to inf without a word
        return _reduced(rows, op)


def _reduced(rows: np.ndarray, op: int) -> np.ndarray:
    name = _OP_NAMES[op]
    if name == "NCCL_SUM":
        return rows.sum(axis=0, dtype=rows.dtype)
    if name == "NCCL_PROD":
        return rows.prod(axis=0, dtype=rows.dtype)
    if name in ("NCCL_MAX", "NCCL_MIN"):  # NCCL's are fmaxf/fminf: a NaN loses to a number (integers: max/min)
        return (np.fmax if name == "NCCL_MAX" else np.fmin).reduce(rows, axis=0)
    return (rows.astype(np.float64).sum(axis=0) / len(rows)).astype(rows.dtype)


class Communicator:
    """An ``NcclCommunicator``: rank ``rank`` of ``size``. Its calls go into the log of
    ``cuda``; with an MPI communicator ``mpi`` (of the same ranks) they are also carried out.
    ``async_error`` is what ``check_async_error`` raises, when set."""

    def __init__(self, cuda: "HostCuda", rank: int = 0, size: int = 2, mpi: Any = None):
        self.cuda, self.rank, self.nranks, self.mpi = cuda, rank, size, mpi
        self.async_error: Optional[BaseException] = None
        self.aborted = self.destroyed = False

    def rank_id(self) -> int:
        return self.rank

    def size(self) -> int:
        return self.nranks

    def device_id(self) -> int:
        return 0

    def _called(self, *call: Any) -> bool:
        """Log ``call``; whether to carry it out."""
        self.cuda.note(*call)
        return self.mpi is not None

    def _gather(self, ptr: int, count: int, datatype: int) -> np.ndarray:
        """Every rank's ``count`` elements at ``ptr``, row r from rank r."""
        from mpi4py import MPI

        mine = memory(ptr, count, datatype).copy()
        rows = np.empty((self.nranks, count), mine.dtype)
        self.mpi.Allgather([mine.view(np.uint8), MPI.BYTE], [rows.view(np.uint8), MPI.BYTE])
        return rows

    def allReduce(self, sptr, rptr, count, datatype, op, stream):
        if self._called("allReduce", sptr, rptr, count, datatype, op, stream):
            memory(rptr, count, datatype)[...] = _reduce(self._gather(sptr, count, datatype), op)

    def reduce(self, sptr, rptr, count, datatype, op, root, stream):
        if self._called("reduce", sptr, rptr, count, datatype, op, root, stream):
            result = _reduce(self._gather(sptr, count, datatype), op)
            if self.rank == root:
                memory(rptr, count, datatype)[...] = result

    def broadcast(self, sptr, rptr, count, datatype, root, stream):
        if self._called("broadcast", sptr, rptr, count, datatype, root, stream):
            memory(rptr, count, datatype)[...] = self._gather(sptr, count, datatype)[root]

    def allGather(self, sptr, rptr, count, datatype, stream):
        if self._called("allGather", sptr, rptr, count, datatype, stream):
            memory(rptr, count * self.nranks, datatype)[...] = self._gather(sptr, count, datatype).ravel()

    def reduceScatter(self, sptr, rptr, count, datatype, op, stream):
        if self._called("reduceScatter", sptr, rptr, count, datatype, op, stream):
            rows = self._gather(sptr, count * self.nranks, datatype)
            blocks = _reduce(rows, op).reshape(self.nranks, count)
            memory(rptr, count, datatype)[...] = blocks[self.rank]

    def send(self, ptr, count, datatype, peer, stream):
        if self._called("send", ptr, count, datatype, peer, stream):
            self.cuda.transfer(self, True, memory(ptr, count, datatype), peer)

    def recv(self, ptr, count, datatype, peer, stream):
        if self._called("recv", ptr, count, datatype, peer, stream):
            self.cuda.transfer(self, False, memory(ptr, count, datatype), peer)

    def check_async_error(self) -> None:
        self.cuda.note("check")
        if self.async_error is not None:
            raise self.async_error

    def abort(self) -> None:
        self.aborted = True

    def destroy(self) -> None:
        self.destroyed = True

    def commSplit(self, color: int, key: int) -> Optional["Communicator"]:
        self.cuda.note("commSplit", color, key)
        if self.mpi is None:
            return None if color < 0 else Communicator(self.cuda, key, 1)
        from mpi4py import MPI

        sub = self.mpi.Split(color if color >= 0 else MPI.UNDEFINED, key)
        return None if color < 0 else Communicator(self.cuda, sub.Get_rank(), sub.Get_size(), sub)


# -- the stand-in -------------------------------------------------------------------------------
class HostCuda:
    """``pycoll.backends.cuda_api.Cuda`` on host memory. ``done``: whether every event reports
    done; ``recording``: whether to keep ``log`` (else it is None)."""

    def __init__(self, done: bool = False, recording: bool = True, version: int = 22703):
        self.log: Optional[Log] = Log() if recording else None
        self.done = done
        self.events_made = 0  # Event objects made (recording one again makes none)
        self.device: Optional[int] = None  # the device made current by set_device
        self.streams = [Stream(self, CURRENT)]  # the current one last
        self._group_depth = 0
        self._grouped: List[Any] = []  # (communicator, is_send, memory, peer) until the group ends
        self._made = SIDE  # the pointer of the last stream made through cupy.cuda.Stream
        self.pool = MemoryPool()
        self.allocator = self.pool.malloc  # cupy.cuda's allocator
        self.nccl = self._nccl_module(version)
        self.xp = self._array_module()

    def note(self, *entry: Any) -> None:
        if self.log is not None:
            self.log.append(entry)

    def clear(self) -> None:
        del self.log[:]

    # the Cuda interface
    def current_stream(self) -> Stream:
        return self.streams[-1]

    def new_stream(self, device: int) -> Stream:
        return Stream(self, SIDE)

    def record(self, stream: Stream, event: Optional[Event] = None) -> Event:
        event = Event(self, None) if event is None else event
        event.record(stream)
        return event

    def set_device(self, device: int) -> None:
        self.device = device

    def on_device(self, device: int) -> ContextManager[Any]:
        return contextlib.nullcontext()

    # cupy.cuda's streams, events and allocator (pycoll.device's API)
    def _stream(self, null: bool = False, non_blocking: bool = False, ptds: bool = False,
                priority: Optional[int] = None) -> Stream:
        self._made += 1
        return Stream(self, self._made, priority or 0)

    def _event(self, block: bool = False, disable_timing: bool = False, interprocess: bool = False) -> Event:
        return Event(self, None, timing=not disable_timing)

    @staticmethod
    def _elapsed(start: Event, end: Event) -> float:
        if not (start.timing and end.timing) or start.at is None or end.at is None:
            raise RuntimeError("cudaErrorInvalidResourceHandle: an event without timing, or not recorded")
        return (end.at - start.at) * 1e3

    def _set_allocator(self, allocator: Any = None) -> None:
        self.allocator = allocator or self.pool.malloc

    def divide(self, a: Any, b: Any, out: Any = None) -> Any:
        self.note("divide", self.current_stream().ptr, b)
        return np.divide(a, b, out=out)

    # NCCL groups, carried out over MPI
    def transfer(self, comm: Communicator, is_send: bool, data: np.ndarray, peer: int) -> None:
        self._grouped.append((comm, is_send, data.view(np.uint8), peer))
        if self._group_depth == 0:
            self._run_group()

    def _group_start(self) -> None:
        self.note("groupStart")
        self._group_depth += 1

    def _group_end(self) -> None:
        self.note("groupEnd")
        self._group_depth -= 1
        if self._group_depth == 0:
            self._run_group()

    def _run_group(self) -> None:
        """Every queued send and receive at once, as an NCCL group completes them."""
        grouped, self._grouped = self._grouped, []
        if not grouped:
            return
        from mpi4py import MPI

        requests = [comm.mpi.Isend([data.copy(), MPI.BYTE], peer) if is_send
                    else comm.mpi.Irecv([data, MPI.BYTE], peer)
                    for comm, is_send, data, peer in grouped]
        MPI.Request.Waitall(requests)

    def _over_mpi(self, ndev: int, commId: Any, rank: int) -> Communicator:
        """``NcclCommunicator``: over a duplicate of MPI's world, whose ranks these must be."""
        from mpi4py import MPI

        world = MPI.COMM_WORLD.Dup()
        assert (world.Get_size(), world.Get_rank()) == (ndev, rank), (ndev, rank)
        return Communicator(self, rank, ndev, world)

    def _nccl_module(self, version: int) -> types.ModuleType:
        nccl = types.ModuleType("cupy.cuda.nccl")
        nccl.available = True
        for names in (_TYPE_NAMES, _OP_NAMES):
            for i, name in enumerate(names):
                setattr(nccl, name, i)
        nccl.get_version = lambda: version
        nccl.get_unique_id = lambda: os.urandom(128)
        nccl.groupStart, nccl.groupEnd = self._group_start, self._group_end
        nccl.NcclCommunicator = self._over_mpi
        return nccl

    def _array_module(self) -> types.ModuleType:
        """``cupy`` as pycoll and the rank workers use it, over this stand-in."""
        cuda = types.ModuleType("cupy.cuda")
        cuda.nccl, cuda.Device = self.nccl, Device
        cuda.runtime = types.SimpleNamespace(
            getDeviceCount=lambda: 1, setDevice=self.set_device, getDevice=lambda: 0,
            runtimeGetVersion=lambda: 13000, is_hip=False,
            getDeviceProperties=lambda index: {"name": b"host memory (host_cuda)", "totalGlobalMem": 0,
                                               "major": 9, "minor": 0, "multiProcessorCount": 132})
        cuda.Stream, cuda.Event, cuda.get_elapsed_time = self._stream, self._event, self._elapsed
        cuda.get_current_stream = lambda device_id=-1: self.current_stream()
        cuda.get_allocator, cuda.set_allocator = lambda: self.allocator, self._set_allocator
        cuda.alloc = lambda size: self.allocator(size)
        xp = types.ModuleType("cupy")
        xp.__version__ = "host_cuda"
        this = sys.modules[__name__]
        for name in ("ndarray", "asarray", "asnumpy", "empty", "zeros", "ones", "full", "empty_like",
                     "ascontiguousarray", "concatenate", "copyto"):
            setattr(xp, name, getattr(this, name))
        xp.divide, xp.cuda = self.divide, cuda
        xp.get_default_memory_pool = xp.get_default_pinned_memory_pool = lambda: self.pool
        xp.__getattr__ = _numpy_type  # cupy.float32, ... are NumPy's
        return xp


def install_if_asked() -> bool:
    """With ``PYCOLL_TEST_HOST_CUPY`` set, put a HostCuda (every call carried out at once, no
    log) in CuPy's place, for pycoll's engine and as ``import cupy``; whether it did. Call it
    before CuPy is imported."""
    if not os.environ.get("PYCOLL_TEST_HOST_CUPY"):
        return False
    cuda = HostCuda(done=True, recording=False)
    sys.modules.update({"cupy": cuda.xp, "cupy.cuda": cuda.xp.cuda, "cupy.cuda.nccl": cuda.nccl})
    from pycoll.backends import cuda_api

    cuda_api.use(cuda)
    return True
