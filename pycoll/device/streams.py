"""paddle's CUDA streams and events (``paddle.device.Stream`` / ``Event``, the same classes as
``paddle.device.cuda``'s), over CuPy's ``cupy.cuda.Stream`` / ``cupy.cuda.Event``.

The current stream is CuPy's: ``set_stream`` and ``stream_guard`` make a stream CuPy's current
stream on its GPU, so the kernels CuPy launches for pycoll's ops, and pycoll's NCCL engine (which
takes CuPy's current stream for every collective), run on it.
"""
from __future__ import annotations

import ctypes
import warnings
from typing import Any, Optional, Tuple

from pycoll.device import CUDAPlace, current_place, gpu_index, import_cupy, place_str, set_device

__all__ = ["Stream", "Event", "current_stream", "set_stream", "stream_guard", "StreamContext", "stream",
           "create_stream", "create_event", "get_stream_from_external"]

# paddle's priority argument: 1 or -1 high, 0 or 2 low (its default). CUDA's priorities count down
# (0, the default, is the lowest) and CUDA clamps a number past the device's range to its highest.
_HIGHEST, _LOWEST = -1000, 0
_PRIORITIES = {-1: _HIGHEST, 1: _HIGHEST, 0: _LOWEST, 2: _LOWEST}


class Event:
    """A CUDA event on the current GPU (paddle's ``device.Event``): ``record`` it on a stream,
    ``query`` / ``synchronize`` for the work queued before it, ``elapsed_time`` between two
    events made with ``enable_timing=True``. ``event_base`` is the ``cupy.cuda.Event``."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False) -> None:
        index = gpu_index(None, "Event", RuntimeError)  # paddle's CPU build: RuntimeError
        if interprocess and enable_timing:
            raise ValueError("Event: an interprocess event cannot time (CUDA's rule), got "
                             "enable_timing=True with interprocess=True")
        cuda = import_cupy().cuda
        with cuda.Device(index):
            self.event_base = cuda.Event(block=bool(blocking), disable_timing=not enable_timing,
                                         interprocess=bool(interprocess))
        self.device = CUDAPlace(index)
        self.enable_timing = bool(enable_timing)

    def record(self, stream: Optional["Stream"] = None) -> None:
        """Record the event on ``stream`` (default: the current stream of the event's GPU)."""
        if stream is None:
            stream = current_stream(self.device)
        self.event_base.record(_checked(stream, "stream").stream_base)

    def query(self) -> bool:
        """Whether the work queued before the event was recorded has completed (no waiting)."""
        return bool(self.event_base.done)

    def synchronize(self) -> None:
        """Wait until the work queued before the event was recorded has completed."""
        self.event_base.synchronize()

    def elapsed_time(self, end_event: "Event") -> float:
        """Milliseconds from this event to ``end_event``; both must time (``enable_timing=True``)
        and have been recorded."""
        if not isinstance(end_event, Event):
            raise TypeError(f"end_event must be a pycoll.device.Event, got {type(end_event).__name__}")
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("elapsed_time needs two events made with enable_timing=True")
        return float(import_cupy().cuda.get_elapsed_time(self.event_base, end_event.event_base))

    def __repr__(self) -> str:
        return f"Event(device={self.device}, enable_timing={self.enable_timing})"


class Stream:
    """A CUDA stream (paddle's ``device.Stream``; ``device.cuda.Stream`` is the same class):
    ``device`` None (the current GPU), an index, 'gpu:N' or a CUDAPlace; ``priority`` 1 or -1
    high, 0 or 2 (default) low. ``stream_base`` wraps an existing ``cupy.cuda.Stream`` instead
    (what ``current_stream`` does). ``stream_base`` is the CuPy stream, ``cuda_stream`` its
    ``cudaStream_t`` handle."""

    def __init__(self, device: Any = None, priority: int = 2, stream_base: Any = None) -> None:
        if stream_base is not None:
            if not hasattr(stream_base, "ptr") or not hasattr(stream_base, "wait_event"):
                raise TypeError(f"stream_base must be a cupy.cuda.Stream, got {type(stream_base).__name__}")
            self.stream_base = stream_base
            own = getattr(stream_base, "device_id", -1)  # -1: CuPy's singleton streams, any device
            index = own if device is None and own >= 0 else gpu_index(device, "Stream", RuntimeError)
            self.device = CUDAPlace(index)
            return
        if isinstance(priority, bool) or priority not in _PRIORITIES:
            raise ValueError(f"Stream: priority must be 1 or -1 (high) or 0 or 2 (low), got {priority!r}")
        index = gpu_index(device, "Stream", RuntimeError)
        cuda = import_cupy().cuda
        with cuda.Device(index):  # paddle's streams do not synchronize with the legacy default stream
            self.stream_base = cuda.Stream(non_blocking=True, priority=_PRIORITIES[priority])
        self.device = CUDAPlace(index)

    @property
    def place(self) -> CUDAPlace:
        return self.device

    @property
    def cuda_stream(self) -> int:
        """The ``cudaStream_t`` handle, as an int (0 for the legacy default stream)."""
        return int(self.stream_base.ptr)

    def wait_event(self, event: Event) -> None:
        """Work queued on this stream from now on waits until ``event`` has fired."""
        if not isinstance(event, Event):
            raise TypeError(f"event must be a pycoll.device.Event, got {type(event).__name__}")
        self.stream_base.wait_event(event.event_base)

    def wait_stream(self, stream: "Stream") -> None:
        """Work queued on this stream from now on waits for the work queued on ``stream`` so far."""
        self.wait_event(_checked(stream, "stream").record_event())

    def record_event(self, event: Optional[Event] = None) -> Event:
        """Record ``event`` (default: a new one, on this stream's GPU) on this stream; returns it."""
        if event is None:
            cuda = import_cupy().cuda
            with cuda.Device(self.device[1]):
                event = Event()
        event.record(self)
        return event

    def query(self) -> bool:
        """Whether all the work queued on this stream has completed (no waiting)."""
        return bool(self.stream_base.done)

    def synchronize(self) -> None:
        """Wait until all the work queued on this stream has completed."""
        self.stream_base.synchronize()

    @property
    def _as_parameter_(self) -> ctypes.c_void_p:  # ctypes takes a Stream as the cudaStream_t
        return ctypes.c_void_p(self.cuda_stream)

    def __cuda_stream__(self) -> Tuple[int, int]:
        """The CUDA stream protocol: (version 0, the handle)."""
        return (0, self.cuda_stream)

    def _key(self) -> Tuple[int, int]:
        return (self.device[1], self.cuda_stream)

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, Stream) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"<pycoll.device.Stream device={self.device} stream={self.cuda_stream:#x}>"


def _checked(stream: Any, name: str) -> Stream:
    if not isinstance(stream, Stream):
        raise TypeError(f"{name} must be a pycoll.device.Stream, got {type(stream).__name__}")
    return stream


def current_stream(device: Any = None) -> Stream:
    """The current stream of the GPU ``device`` (default: the current GPU): CuPy's current stream
    there, the legacy default stream until one is set."""
    index = gpu_index(device, "current_stream", TypeError)  # paddle's CPU build: TypeError
    cuda = import_cupy().cuda
    with cuda.Device(index):
        return Stream(index, stream_base=cuda.get_current_stream())


def set_stream(stream: Stream) -> Stream:
    """Make ``stream`` the current stream of its GPU (CuPy's, which pycoll's ops and its NCCL
    engine run on); returns the stream that was current there."""
    previous = current_stream(_checked(stream, "stream").device)
    cuda = import_cupy().cuda
    with cuda.Device(stream.device[1]):
        stream.stream_base.use()
    return previous


class stream_guard:
    """paddle's ``device.stream_guard(stream)`` (also ``StreamContext`` and ``stream(s)``): inside
    the ``with`` block ``stream`` is the current stream, and its GPU the current device; both
    come back after it. ``stream=None`` changes nothing."""

    def __init__(self, stream: Optional[Stream] = None) -> None:
        self.stream = None if stream is None else _checked(stream, "stream")
        self._previous: Optional[Stream] = None
        self._place: Any = None

    def __enter__(self) -> None:
        if self.stream is None:
            return
        self._place = current_place()
        if self._place != self.stream.device:
            set_device(place_str(self.stream.device))
        self._previous = set_stream(self.stream)

    def __exit__(self, *exc: Any) -> None:
        if self.stream is None:
            return
        set_stream(self._previous)
        if self._place != self.stream.device:
            set_device(place_str(self._place))


StreamContext = stream_guard


def stream(stream: Optional[Stream]) -> stream_guard:
    """paddle's ``device.stream(s)``: ``stream_guard(s)``."""
    return stream_guard(stream)


def create_stream(device_id: Any = None, priority: int = 2, device_type: Optional[str] = None,
                  blocking: bool = False) -> Stream:
    """paddle's ``device.cuda.create_stream``: ``Stream(device_id, priority)`` (``device_type`` and
    ``blocking`` are taken and ignored, as paddle's CUDA build does)."""
    return Stream(device_id, priority)


def create_event(enable_timing: bool = False, blocking: bool = False, interprocess: bool = False,
                 device_type: Optional[str] = None, device_id: int = 0) -> Event:
    """paddle's ``device.cuda.create_event``: ``Event(enable_timing, blocking, interprocess)`` on the
    current GPU (``device_type`` and ``device_id`` are taken and ignored, as paddle's CUDA build does)."""
    return Event(enable_timing, blocking, interprocess)


def get_stream_from_external(data_ptr: int, device: Any = None) -> Stream:
    """paddle's ``device.get_stream_from_external``: a ``Stream`` over a ``cudaStream_t`` another
    library made (``data_ptr``, its handle as an int) on the GPU ``device`` (default the current
    one), through ``cupy.cuda.ExternalStream``. The stream is not owned: its maker keeps it alive."""
    if isinstance(data_ptr, bool) or not isinstance(data_ptr, int):
        raise TypeError(f"get_stream_from_external: data_ptr must be an int (a cudaStream_t), "
                        f"got {type(data_ptr).__name__}")
    index = gpu_index(device, "get_stream_from_external", RuntimeError)
    cuda = import_cupy().cuda
    with warnings.catch_warnings():  # CuPy 14 deprecates it for Stream.from_external, which CuPy 13 lacks
        warnings.simplefilter("ignore", DeprecationWarning)
        external = cuda.ExternalStream(data_ptr, index)
    return Stream(index, stream_base=external)
