"""What the NCCL engine takes from CuPy, behind one small interface.

The engine (``pycoll.backends.nccl`` and its modules) never names CuPy: its streams, events,
device selection, array module and ``cupy.cuda.nccl`` all come from the :class:`Cuda` that
:func:`cuda` returns. CuPy is imported when that is first asked for, not when this module is
imported. Tests put a stand-in in CuPy's place with :func:`use` (``tests/host_cuda.py``: host
memory, with NCCL calls recorded or carried out over MPI).
"""
from __future__ import annotations

from types import ModuleType
from typing import Any, ContextManager, Optional, Protocol


class Event(Protocol):
    """A recorded CUDA event (``cupy.cuda.Event``)."""

    @property
    def done(self) -> bool:
        """Whether the work queued before the event was recorded has completed (no waiting)."""


class Stream(Protocol):
    """A CUDA stream (``cupy.cuda.Stream``): ``ptr`` is the handle NCCL takes; inside
    ``with stream:`` it is the current stream."""

    ptr: int

    def wait_event(self, event: Event) -> None:
        """Make the work queued on this stream from now on wait until ``event`` has fired."""

    def __enter__(self) -> Any: ...

    def __exit__(self, *exc: Any) -> Any: ...


class Cuda(Protocol):
    """The CUDA runtime, as the engine uses it."""

    xp: ModuleType  # the array module (``cupy``): ndarray, zeros, empty, asarray, divide
    nccl: ModuleType  # ``cupy.cuda.nccl``, whether or not it found libnccl (its ``available``)

    def current_stream(self) -> Stream:
        """The calling thread's current stream."""

    def new_stream(self, device: int) -> Stream:
        """A new non-blocking stream on ``device``."""

    def record(self, stream: Stream, event: Optional[Event] = None) -> Event:
        """``event`` recorded on ``stream`` now, or a new event (without timing) when None.

        Recording an event again (CUDA's re-record) moves it: from then on it is done once the
        work queued on ``stream`` before this record is. A stream's ``wait_event`` made before
        is unaffected (CUDA takes the event's state when the wait is made)."""

    def set_device(self, device: int) -> None:
        """Make ``device`` the calling thread's current device."""

    def on_device(self, device: int) -> ContextManager[Any]:
        """``device`` is current inside the ``with`` block."""


class CuPy:
    """:class:`Cuda` through CuPy."""

    def __init__(self) -> None:
        import cupy
        from cupy.cuda import nccl

        self.xp: ModuleType = cupy
        self.nccl: ModuleType = nccl
        self._cuda = cupy.cuda

    def current_stream(self) -> Stream:
        return self._cuda.get_current_stream()

    def new_stream(self, device: int) -> Stream:
        with self._cuda.Device(device):
            return self._cuda.Stream(non_blocking=True)

    def record(self, stream: Stream, event: Optional[Event] = None) -> Event:
        if event is None:
            event = self._cuda.Event(block=False, disable_timing=True)
        event.record(stream)
        return event

    def set_device(self, device: int) -> None:
        self._cuda.runtime.setDevice(device)

    def on_device(self, device: int) -> ContextManager[Any]:
        return self._cuda.Device(device)


_in_use: Optional[Cuda] = None


def cuda() -> Cuda:
    """The :class:`Cuda` in use: CuPy's (imported on the first call) unless :func:`use` set one."""
    global _in_use
    if _in_use is None:
        _in_use = CuPy()
    return _in_use


def use(replacement: Optional[Cuda]) -> Optional[Cuda]:
    """Put ``replacement`` in CuPy's place (None: CuPy's again, from the next call of
    :func:`cuda`); returns the one it replaces."""
    global _in_use
    previous, _in_use = _in_use, replacement
    return previous
