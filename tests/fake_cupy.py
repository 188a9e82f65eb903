"""A recording stand-in for ``cupy`` and ``cupy.cuda.nccl``, for testing the NCCL engine and its
watchdog without a device: it logs which stream each call goes to, what is grouped, and which
events are recorded and queried."""
import sys
import types

import pytest

from pycoll.backends import nccl as engine

CURRENT, SIDE = 100, 200  # the fake streams' pointers


class Log(list):
    def calls(self, name):
        return [c for c in self if c[0] == name]


class FakeStream:
    def __init__(self, fake, ptr):
        self.fake, self.ptr = fake, ptr

    def wait_event(self, event):
        self.fake.log.append(("wait", self.ptr, event.stream))

    def __enter__(self):
        self.fake.stack.append(self)
        return self

    def __exit__(self, *exc):
        self.fake.stack.pop()


class FakeArray:
    _next = 0x1000

    def __init__(self, size, itemsize=4):
        self.size, self.nbytes = size, size * itemsize
        self.data = types.SimpleNamespace(ptr=FakeArray._next)
        FakeArray._next += 0x1000


class FakeComm:
    def __init__(self, fake, rank=0, size=2):
        self.fake, self.rank, self.nranks = fake, rank, size
        self.async_error = None
        self.aborted = self.destroyed = False

    def rank_id(self):
        return self.rank

    def size(self):
        return self.nranks

    def device_id(self):
        return 0

    def __getattr__(self, name):  # allReduce, reduce, broadcast, send, recv, ...
        if name in ("allReduce", "reduce", "reduceScatter", "broadcast", "allGather", "send", "recv"):
            return lambda *args: self.fake.log.append((name, *args))
        raise AttributeError(name)

    def check_async_error(self):
        self.fake.log.append(("check",))
        if self.async_error is not None:
            raise self.async_error

    def abort(self):
        self.aborted = True

    def destroy(self):
        self.destroyed = True

    def commSplit(self, color, key):
        self.fake.log.append(("commSplit", color, key))
        return None if color == -1 else FakeComm(self.fake, key, 1)


class Fake:
    """``cupy`` (with ``cupy.cuda`` and ``cupy.cuda.nccl``) recording into ``self.log``."""

    def __init__(self, version=22703):
        self.log = Log()
        self.done = False  # what every event's ``done`` reports, unless the event is in ``finished``
        self.finished = set()  # ids of events that report done
        self.device = None  # the device made current by runtime.setDevice
        self.current = FakeStream(self, CURRENT)
        self.stack = [self.current]
        fake = self

        class Event:
            def __init__(self, block=False, disable_timing=False):
                assert disable_timing
                self.stream = None

            def record(self, stream):
                self.stream = stream.ptr
                fake.log.append(("record", stream.ptr))

            @property
            def done(self):
                fake.log.append(("query", self.stream))
                return fake.done or id(self) in fake.finished

        class Device:
            def __init__(self, device):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                pass

        nccl = types.ModuleType("cupy.cuda.nccl")
        nccl.available = True
        names = ["NCCL_INT8", "NCCL_UINT8", "NCCL_INT32", "NCCL_UINT32", "NCCL_INT64", "NCCL_UINT64",
                 "NCCL_FLOAT16", "NCCL_FLOAT32", "NCCL_FLOAT64", "NCCL_BFLOAT16"]
        for i, name in enumerate(names):
            setattr(nccl, name, i)
        for i, name in enumerate(["NCCL_SUM", "NCCL_PROD", "NCCL_MAX", "NCCL_MIN", "NCCL_AVG"]):
            setattr(nccl, name, i)
        nccl.get_version = lambda: version
        nccl.groupStart = lambda: self.log.append(("groupStart",))
        nccl.groupEnd = lambda: self.log.append(("groupEnd",))
        nccl.get_unique_id = lambda: bytes(range(128))
        nccl.NcclCommunicator = lambda n, uid, rank: ("comm", n, uid, rank)
        cuda = types.ModuleType("cupy.cuda")
        cuda.nccl = nccl
        cuda.Event = Event
        cuda.Device = Device
        cuda.runtime = types.SimpleNamespace(setDevice=lambda device: setattr(self, "device", device))
        cuda.Stream = lambda non_blocking=False: FakeStream(self, SIDE)
        cuda.get_current_stream = lambda: self.stack[-1]
        cupy = types.ModuleType("cupy")
        cupy.cuda = cuda
        cupy.divide = lambda arr, n, out: self.log.append(("divide", self.stack[-1].ptr, n))
        cupy.zeros = lambda n, dtype: FakeArray(n)
        self.cupy, self.nccl = cupy, nccl

    def clear(self):
        del self.log[:]


@pytest.fixture
def fake(monkeypatch):
    f = Fake()
    monkeypatch.setitem(sys.modules, "cupy", f.cupy)
    monkeypatch.setitem(sys.modules, "cupy.cuda", f.cupy.cuda)
    monkeypatch.setitem(sys.modules, "cupy.cuda.nccl", f.nccl)
    monkeypatch.setattr(engine, "_module", None)
    monkeypatch.setattr(engine.NCCLBackend, "_reductions", {})
    return f


@pytest.fixture
def backend(fake):
    b = engine.NCCLBackend(FakeComm(fake, rank=0, size=2), timeout=0.2)
    fake.clear()
    return b
