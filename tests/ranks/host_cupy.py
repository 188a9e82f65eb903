"""A CuPy stand-in on host memory whose NCCL runs over MPI: the NCCL engine and the public
collectives on "device" arrays, on real ranks, without a GPU.

A rank worker calls ``install_if_asked()`` before it imports CuPy or pycoll: with
``PYCOLL_TEST_HOST_CUPY=1`` it puts this module in ``sys.modules`` as ``cupy``, ``cupy.cuda``
and ``cupy.cuda.nccl``. Device arrays are NumPy arrays of a subclass that has CuPy's
``.data.ptr``; every call is synchronous, so events are always complete. The communicator
moves the bytes at the addresses pycoll gives it, through mpi4py, and reduces with NumPy after
gathering every rank's input: what this checks is what pycoll hands to NCCL (addresses,
counts, datatypes, ops, roots, which transfers form a group), not NCCL itself, nor anything
about streams (see the ``gpu``-marked tests for those).
"""
import ctypes
import itertools
import os
import sys
import types
from typing import Any, List

import numpy as np


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


def ascontiguousarray(a: Any) -> ndarray:
    return _device(np.ascontiguousarray(a))


def copyto(dst: Any, src: Any) -> None:
    np.copyto(dst, src)


def divide(a: Any, b: Any, out: Any = None) -> Any:
    return np.divide(a, b, out=out)


# -- cupy.cuda ----------------------------------------------------------------------------
class Stream:
    _ptrs = itertools.count(0x5000)

    def __init__(self, non_blocking: bool = False):
        self.ptr = next(Stream._ptrs)
        self.done = True

    def wait_event(self, event: Any) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def __enter__(self) -> "Stream":
        _streams.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _streams.pop()


_streams: List[Stream] = [Stream()]


class Event:
    def __init__(self, block: bool = False, disable_timing: bool = False):
        self.done = True

    def record(self, stream: Any = None) -> None:
        pass

    def synchronize(self) -> None:
        pass


class Device:
    def __init__(self, device: int = 0):
        self.id = device

    def use(self) -> None:
        pass

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass


# -- cupy.cuda.nccl over MPI ----------------------------------------------------------------
_TYPES = [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64, np.float16, np.float32, np.float64]
_TYPE_NAMES = ["NCCL_INT8", "NCCL_UINT8", "NCCL_INT32", "NCCL_UINT32", "NCCL_INT64", "NCCL_UINT64",
               "NCCL_FLOAT16", "NCCL_FLOAT32", "NCCL_FLOAT64"]
_OP_NAMES = ["NCCL_SUM", "NCCL_PROD", "NCCL_MAX", "NCCL_MIN", "NCCL_AVG"]
_in_group: List[Any] = []  # transfers queued between groupStart() and groupEnd()
_group_depth = 0


def _memory(ptr: int, count: int, datatype: int) -> np.ndarray:
    """The ``count`` elements of NCCL ``datatype`` at address ``ptr``, as a writeable NumPy view."""
    dtype = np.dtype(_TYPES[datatype])
    raw = (ctypes.c_uint8 * (count * dtype.itemsize)).from_address(ptr)
    return np.frombuffer(raw, np.uint8).view(dtype)


def _reduce(rows: np.ndarray, op: int) -> np.ndarray:
    name = _OP_NAMES[op]
    if name == "NCCL_SUM":
        return rows.sum(axis=0, dtype=rows.dtype)
    if name == "NCCL_PROD":
        return rows.prod(axis=0, dtype=rows.dtype)
    if name == "NCCL_MAX":
        return rows.max(axis=0)
    if name == "NCCL_MIN":
        return rows.min(axis=0)
    return (rows.astype(np.float64).sum(axis=0) / len(rows)).astype(rows.dtype)


class NcclCommunicator:
    def __init__(self, ndev: int, commId: Any, rank: int, _mpi_comm: Any = None):
        from mpi4py import MPI

        self._mpi = MPI
        self._comm = _mpi_comm if _mpi_comm is not None else MPI.COMM_WORLD.Dup()
        assert (self._comm.Get_size(), self._comm.Get_rank()) == (ndev, rank), (ndev, rank)

    def rank_id(self) -> int:
        return self._comm.Get_rank()

    def size(self) -> int:
        return self._comm.Get_size()

    def device_id(self) -> int:
        return 0

    def _gather(self, ptr: int, count: int, datatype: int) -> np.ndarray:
        mine = _memory(ptr, count, datatype).copy()
        rows = np.empty((self.size(), count), mine.dtype)
        self._comm.Allgather([mine.view(np.uint8), self._mpi.BYTE], [rows.view(np.uint8), self._mpi.BYTE])
        return rows

    def allReduce(self, sptr, rptr, count, datatype, op, stream):
        _memory(rptr, count, datatype)[...] = _reduce(self._gather(sptr, count, datatype), op)

    def reduce(self, sptr, rptr, count, datatype, op, root, stream):
        result = _reduce(self._gather(sptr, count, datatype), op)
        if self.rank_id() == root:
            _memory(rptr, count, datatype)[...] = result

    def broadcast(self, sptr, rptr, count, datatype, root, stream):
        _memory(rptr, count, datatype)[...] = self._gather(sptr, count, datatype)[root]

    def allGather(self, sptr, rptr, count, datatype, stream):
        _memory(rptr, count * self.size(), datatype)[...] = self._gather(sptr, count, datatype).ravel()

    def reduceScatter(self, sptr, rptr, count, datatype, op, stream):
        rows = self._gather(sptr, count * self.size(), datatype)
        blocks = _reduce(rows, op).reshape(self.size(), count)
        _memory(rptr, count, datatype)[...] = blocks[self.rank_id()]

    def send(self, ptr, count, datatype, peer, stream):
        _queue(("send", self, ptr, count, datatype, peer))

    def recv(self, ptr, count, datatype, peer, stream):
        _queue(("recv", self, ptr, count, datatype, peer))

    def check_async_error(self) -> None:
        pass

    def abort(self) -> None:
        pass

    def destroy(self) -> None:
        pass

    def commSplit(self, color: int, key: int) -> Any:
        sub = self._comm.Split(color if color >= 0 else self._mpi.UNDEFINED, key)
        if color < 0:
            return None
        return NcclCommunicator(sub.Get_size(), None, sub.Get_rank(), _mpi_comm=sub)


def _queue(transfer: Any) -> None:
    _in_group.append(transfer)
    if _group_depth == 0:
        _run_group()


def _run_group() -> None:
    """Every queued send and receive at once, as an NCCL group completes them."""
    transfers, _in_group[:] = list(_in_group), []
    requests = []
    for kind, comm, ptr, count, datatype, peer in transfers:
        memory = _memory(ptr, count, datatype).view(np.uint8)
        if kind == "send":
            requests.append(comm._comm.Isend([memory.copy(), comm._mpi.BYTE], peer))
        else:
            requests.append(comm._comm.Irecv([memory, comm._mpi.BYTE], peer))
    if requests:
        requests[0].Waitall(requests)


def groupStart() -> None:
    global _group_depth
    _group_depth += 1


def groupEnd() -> None:
    global _group_depth
    _group_depth -= 1
    if _group_depth == 0:
        _run_group()


def _numpy_type(name: str) -> type:
    """NumPy's scalar types under CuPy's names; no other NumPy name (it would make host arrays)."""
    found = getattr(np, name, None)
    if not isinstance(found, type):
        raise AttributeError(f"host_cupy has no {name!r}")
    return found


def install() -> None:
    """Make ``import cupy`` (and ``cupy.cuda``, ``cupy.cuda.nccl``) give this stand-in."""
    nccl = types.ModuleType("cupy.cuda.nccl")
    nccl.available = True
    for i, name in enumerate(_TYPE_NAMES):
        setattr(nccl, name, i)
    for i, name in enumerate(_OP_NAMES):
        setattr(nccl, name, i)
    nccl.get_version = lambda: 22703
    nccl.get_unique_id = lambda: os.urandom(128)
    nccl.groupStart, nccl.groupEnd, nccl.NcclCommunicator = groupStart, groupEnd, NcclCommunicator
    cuda = types.ModuleType("cupy.cuda")
    cuda.nccl, cuda.Stream, cuda.Event, cuda.Device = nccl, Stream, Event, Device
    cuda.get_current_stream = lambda: _streams[-1]
    cuda.runtime = types.SimpleNamespace(
        getDeviceCount=lambda: 1, setDevice=lambda device: None, getDevice=lambda: 0,
        runtimeGetVersion=lambda: 13000,
        getDeviceProperties=lambda index: {"name": b"host memory (host_cupy)", "totalGlobalMem": 0})
    cupy = types.ModuleType("cupy")
    cupy.__version__ = "host_cupy"
    this = sys.modules[__name__]
    for name in ("ndarray", "asarray", "asnumpy", "empty", "zeros", "ones", "full", "empty_like",
                 "ascontiguousarray", "copyto", "divide"):
        setattr(cupy, name, getattr(this, name))
    cupy.cuda = cuda
    cupy.__getattr__ = _numpy_type  # cupy.float32, ... are NumPy's
    sys.modules.update({"cupy": cupy, "cupy.cuda": cuda, "cupy.cuda.nccl": nccl})


def install_if_asked() -> bool:
    """``install()`` when ``PYCOLL_TEST_HOST_CUPY`` is set; whether it did."""
    if not os.environ.get("PYCOLL_TEST_HOST_CUPY"):
        return False
    install()
    return True
