"""The current device and the array module (NumPy or CuPy) that backs tensors on it; the face
of paddle's ``paddle.device`` API (streams and events in ``streams``, memory statistics in
``memory_stats``, what the devices are in ``properties``).

CuPy is optional: it is imported the first time a GPU is asked for, never at import time. Code that
handles arrays asks `array_module(a)` for the module of an array it already has, so one code path
serves both.

The names of paddle's device API that live in this package's modules (which import this one) are
named lazily, through the module ``__getattr__``: a module is imported on the first use of one of
its names. So are the few that belong to the tensor layer above this one (the generator controls,
over ``pycoll.random``, and the typed tensor factories ``FloatTensor``...), as ``pycoll.nn`` names
SyncBatchNorm.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from types import ModuleType
from typing import Any, Optional, Tuple

import numpy as np

from pycoll.device.places import CPUPlace, CUDAPlace
from pycoll.device.places import Place as PlaceObject

Place = Tuple[str, int]  # ("cpu", 0) or ("gpu", device_id); a PlaceObject is one too

__all__ = ["CPUPlace", "CUDAPlace", "PlaceObject", "Place", "gpu_count", "is_compiled_with_cuda",
           "import_cupy", "parse_place", "place_str", "set_device", "get_device", "device_place",
           "synchronize", "current_place", "array_module", "is_array", "place_of", "move", "module_for",
           "to_module", "gpu_index", "device_guard", "device_to_place", "set_default_device",
           "current_device", "device", "manual_seed_all", "get_device_module"]


_current: Optional[Place] = None  # resolved on first use, see current_place()


def gpu_count() -> int:
    """How many GPUs CuPy sees; 0 when CuPy is missing, has no usable driver or sees none."""
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # ImportError, CUDARuntimeError (no driver), ...: no GPU to use
        return 0


def is_compiled_with_cuda() -> bool:
    """paddle's ``is_compiled_with_cuda``: whether this install can run on a CUDA GPU here, which for
    pycoll means CuPy is installed and sees a GPU. Paddle answers for its build; pycoll's "build" is
    CuPy, which the test extra installs on CPU machines too, so the answer also asks for a GPU: the
    idiom ``set_device('gpu' if is_compiled_with_cuda() else 'cpu')`` then picks a place that works."""
    return importlib.util.find_spec("cupy") is not None and gpu_count() > 0


def import_cupy() -> ModuleType:
    """The cupy module, imported on first use; RuntimeError saying how to install it if absent."""
    try:
        import cupy
    except ImportError as exc:  # pragma: no cover - depends on the machine
        raise RuntimeError(
            "a GPU place needs CuPy, which is not installed: pip install 'pycoll[cuda12]' "
            "(or cuda13)") from exc
    return cupy


def parse_place(place: Any) -> Place:
    """Turn 'cpu', 'gpu' or 'gpu:N' into a (kind, id) pair; 'gpu' means the current GPU (or 0).
    'cuda' and 'cuda:N' are read as 'gpu' and 'gpu:N', as paddle 3.3.1 reads them."""
    if isinstance(place, tuple) and len(place) == 2 and place[0] in ("cpu", "gpu"):
        return place
    if isinstance(place, PlaceObject):  # CUDAPinnedPlace: paddle's, but no place pycoll keeps tensors in
        raise ValueError(f"place must be the CPU or a GPU ('cpu', 'gpu:N', CPUPlace(), CUDAPlace(n)), got {place!r}")
    if not isinstance(place, str):
        raise TypeError(f"place must be a str like 'cpu', 'gpu' or 'gpu:0', got {type(place).__name__}")
    text = place.strip().lower()
    if text.startswith("cuda"):
        text = "gpu" + text[4:]
    if text == "cpu":
        return ("cpu", 0)
    if text == "gpu":  # the current GPU, once one is chosen (asking current_place would recurse)
        return ("gpu", _current[1] if _current is not None and _current[0] == "gpu" else 0)
    if text.startswith("gpu:") and text[4:].isdigit():
        return ("gpu", int(text[4:]))
    raise ValueError(f"place must be 'cpu', 'gpu' or 'gpu:N', got {place!r}")


def place_str(place: Place) -> str:
    return "cpu" if place[0] == "cpu" else f"gpu:{place[1]}"


def _visible_gpu(place: Place, device: Any) -> Any:
    """The ``cupy.cuda.Device`` of the GPU ``place`` (asked for as ``device``); ValueError when
    no such GPU is visible."""
    cupy = import_cupy()
    count = gpu_count()
    if place[1] >= count:
        raise ValueError(f"device must name one of the {count} visible GPUs, got {device!r}"
                         + ("" if count else " (CuPy sees no GPU here: no device, or no driver)"))
    return cupy.cuda.Device(place[1])


def set_device(device: str) -> PlaceObject:
    """Make `device` ('cpu', 'gpu' or 'gpu:N') the place where new tensors are created.

    Returns the place now in force, as paddle does (``Place(gpu:0)``; it also equals 'gpu:0').
    """
    global _current
    place = parse_place(device)
    if place[0] == "gpu":
        _visible_gpu(place, device).use()
    _current = place
    return PlaceObject(place)


def get_device(x: Any = None) -> Any:
    """The current device, 'cpu' or 'gpu:N'; given a Tensor ``x`` (also ``x.get_device()``), the id
    of the GPU holding it, -1 for a host tensor (paddle's two answers)."""
    if x is None:
        return place_str(current_place())
    array = getattr(x, "_array", None)
    if not is_array(array):
        raise TypeError(f"get_device: x must be a Tensor, got {type(x).__name__}")
    kind, index = place_of(array)
    return index if kind == "gpu" else -1


def device_place(device: Any) -> Place:
    """paddle's ``device`` argument of the device calls: None (the current device), a place,
    'cpu', 'gpu', 'gpu:N' or a GPU index."""
    if device is None:
        return current_place()
    if isinstance(device, int) and not isinstance(device, bool):
        return ("gpu", device)
    return parse_place(device)


def gpu_index(device: Any, api: str, error: type = ValueError) -> int:
    """The index of the visible GPU that ``device`` names for paddle's ``api``: None (the current
    GPU), an index, 'gpu', 'gpu:N', 'cuda:N' or a
    ``CUDAPlace``. Raises ``error`` (the exception paddle's CPU build raises for ``api``) where CuPy
    sees no GPU or ``device`` names the CPU, ValueError for an index no visible GPU has."""
    count = gpu_count()
    if count == 0:
        raise error(f"{api} needs a CUDA GPU, and CuPy sees none here (no GPU, no driver, or CuPy is not "
                    f"installed: pip install 'pycoll[cuda12]' or cuda13)")
    if isinstance(device, str) and device.strip().lower().startswith("cuda"):
        device = "gpu" + device.strip()[4:]  # paddle takes torch's 'cuda:N' for 'gpu:N'
    if device is None:  # CuPy's current device: set_device's GPU, or the one of a `with Device(n)`
        return int(import_cupy().cuda.runtime.getDevice())
    place = device_place(device)
    if place[0] != "gpu":
        raise error(f"{api}: device must name a GPU ('gpu:N', an index or a CUDAPlace), got {device!r}")
    if not 0 <= place[1] < count:
        raise ValueError(f"{api}: device must name one of the {count} visible GPUs, got {device!r}")
    return place[1]


class device_guard:
    """paddle's ``device.device_guard(device)``: ``device`` (a place, 'cpu', 'gpu' or 'gpu:N') is the
    current device inside the ``with`` block, the one before comes back after it."""

    def __init__(self, device: Any) -> None:
        if isinstance(device, str):
            place = parse_place(device)
        elif isinstance(device, PlaceObject):
            place = tuple(parse_place(device))  # refuses a CUDAPinnedPlace
        else:
            raise ValueError(f"device_guard: 'device' must be a str ('cpu', 'gpu', 'gpu:N') or a place "
                             f"(CPUPlace(), CUDAPlace(n)), got {type(device).__name__}")
        if place[0] == "gpu":
            gpu_index(place, "device_guard")  # refused now, as paddle does, not at the with
        self._target: Place = place
        self._original: Optional[Place] = None

    def __enter__(self) -> None:
        self._original = current_place()
        if self._original != self._target:
            set_device(place_str(self._target))

    def __exit__(self, *exc: Any) -> None:
        if self._original is not None and self._original != self._target:
            set_device(place_str(self._original))


def device_to_place(device: Any = None) -> PlaceObject:
    """paddle's ``device.device_to_place``: the place that ``device`` names. None is the current
    device; an int is an index of the current device's kind (only 0 while the CPU is current, as
    paddle's); 'cpu', 'gpu', 'gpu:N' and torch's 'cuda:N'; a place is itself."""
    if device is None:
        return PlaceObject(current_place())
    if isinstance(device, bool) or not isinstance(device, (int, str, PlaceObject)):
        raise TypeError(f"device must be None, an int, a str like 'gpu:0' or a place, got {type(device).__name__}")
    if isinstance(device, int):
        if device < 0:
            raise ValueError(f"device: an index must be >= 0, got {device}")
        if current_place()[0] == "cpu":
            if device != 0:
                raise ValueError(f"device: the CPU's only index is 0, got {device}")
            return PlaceObject(("cpu", 0))
        return PlaceObject(("gpu", device))
    if isinstance(device, str) and device.strip().lower().startswith("cuda"):
        device = "gpu" + device.strip()[4:]
    return PlaceObject(parse_place(device))


def set_default_device(device: Any) -> None:
    """paddle's ``set_default_device``: ``set_device`` of the place ``device`` names (see
    ``device_to_place``: an int is an index of the current kind); returns None, as paddle's."""
    set_device(device_to_place(device))


def current_device() -> int:
    """paddle's ``device.current_device``: the index of the current device (0 for the CPU)."""
    return current_place()[1]


class device(device_guard):  # noqa: N801 - paddle's name
    """paddle's ``device.device(device=None)`` context manager (also ``cuda.device``): the place
    ``device`` names (see ``device_to_place``; None keeps the current one) is current inside the
    ``with`` block, the one before comes back after it."""

    def __init__(self, device: Any = None) -> None:
        super().__init__(device_to_place(device))


def manual_seed_all(seed: int) -> None:
    """paddle's ``device.manual_seed_all``: reseed the one generator pycoll draws from for every
    device (``pycoll.seed``)."""
    from pycoll.device_random import manual_seed  # the tensor layer's, named lazily from this face

    manual_seed(seed)


# paddle's device kinds that have a module of their own there (paddle.device.xpu, custom devices)
# and none in pycoll, which runs on CPUs and CUDA GPUs only
_OTHER_KINDS = ("xpu", "metax_gpu", "biren_gpu", "custom_cpu", "gcu", "iluvatar_gpu", "intel_gpu", "intel_hpu",
                "mlu", "mps", "npu", "sdaa")


def get_device_module(device: Any = None) -> ModuleType:
    """paddle's ``get_device_module``: the module of ``device``'s kind. A text or an index (of the
    current kind) or None (the current device): 'gpu' / 'cuda' give ``pycoll.cuda``, 'cpu'
    ``pycoll.device.cpu``; a place object: ``CUDAPlace`` gives ``pycoll.cuda`` and ``CPUPlace``
    ``pycoll.device`` (paddle's answers, which differ for the CPU). XPU and custom devices, which
    pycoll has no module for, and unknown kinds raise RuntimeError."""
    if isinstance(device, PlaceObject):
        return importlib.import_module("pycoll.device" if device[0] == "cpu" else "pycoll.cuda")
    if device is None or (isinstance(device, int) and not isinstance(device, bool)):
        device = device_to_place(device).text()
    if not isinstance(device, str):
        raise TypeError(f"get_device_module: device must be None, an int, a str or a place, "
                        f"got {type(device).__name__}")
    kind = device.strip().lower().split(":")[0]
    if kind in ("gpu", "cuda"):
        return importlib.import_module("pycoll.cuda")  # the tensor layer's face, named lazily
    if kind == "cpu":
        return importlib.import_module("pycoll.device.cpu")
    if kind in _OTHER_KINDS:
        raise RuntimeError(f"get_device_module: pycoll runs on CPUs and CUDA GPUs only and has no module for "
                           f"{kind!r} devices")
    raise RuntimeError(f"Unsupported device type: {kind}")


def synchronize(device: Any = None) -> None:
    """paddle's ``device.synchronize``: wait until the GPU ``device`` (a place, 'gpu:N', an index;
    default the current device) has finished all its work; on the CPU there is nothing to wait
    for (NumPy's calls have finished when they return)."""
    place = device_place(device)
    if place[0] == "gpu":
        _visible_gpu(place, device).synchronize()


def current_place() -> Place:
    """The current place. Until set_device is called it is paddle's default: the first GPU when
    one is visible, else the CPU; ``PYCOLL_DEVICE`` ('cpu', 'gpu', 'gpu:N') overrides."""
    global _current
    if _current is None:
        chosen = os.environ.get("PYCOLL_DEVICE")
        if chosen:
            set_device(chosen)
        else:
            _current = ("gpu", 0) if gpu_count() > 0 else ("cpu", 0)
    return _current


def array_module(array: Any) -> ModuleType:
    """numpy or cupy, whichever owns `array`."""
    if isinstance(array, np.ndarray):
        return np
    cupy = sys.modules.get("cupy")
    if cupy is not None and isinstance(array, cupy.ndarray):
        return cupy
    raise TypeError(f"expected a numpy.ndarray or cupy.ndarray, got {type(array).__name__}")


def scatter_add(target: Any, index: Any, values: Any) -> None:
    """target[index] += values, in place, adding repeated indices up (np.add.at / cupyx; rows of
    a float array by a 1-D index through pycoll.kernels.host_math, in np.add.at's order)."""
    if isinstance(target, np.ndarray):
        from pycoll.kernels import host_math  # (a peer layer: lazily, as this face may)

        rows = index[0] if isinstance(index, tuple) and len(index) == 1 else index  # a key of axis 0 alone
        if not host_math.scatter_add_rows(target, rows, values):
            np.add.at(target, index, values)
    else:
        import cupyx
        cupyx.scatter_add(target, index, values)


def is_array(obj: Any) -> bool:
    """True for a numpy or cupy ndarray (cupy is not imported to answer)."""
    if isinstance(obj, np.ndarray):
        return True
    cupy = sys.modules.get("cupy")
    return cupy is not None and isinstance(obj, cupy.ndarray)


def place_of(array: Any) -> Place:
    if isinstance(array, np.ndarray):
        return ("cpu", 0)
    return ("gpu", array.device.id)


def move(array: Any, place: Optional[Place] = None) -> Any:
    """`array` (numpy or cupy; or a NumPy scalar, which arithmetic on 0-d arrays gives: it
    becomes a 0-d array) on `place` (default: the current device); no copy if already there."""
    place = current_place() if place is None else place
    if place[0] == "cpu":
        if isinstance(array, np.ndarray):
            return array
        return np.asarray(array) if isinstance(array, np.generic) else array.get()
    cupy = import_cupy()
    if isinstance(array, cupy.ndarray):
        if array.device.id == place[1]:
            return array
        with cupy.cuda.Device(place[1]):
            return array.copy()  # CuPy copies to the current device
    with _visible_gpu(place, place_str(place)):  # no such GPU: pycoll's ValueError, not CUDA's
        return cupy.asarray(array)


def module_for(place: Optional[Place] = None) -> ModuleType:
    """The array module that creates arrays on `place` (default: the current device)."""
    place = current_place() if place is None else place
    return np if place[0] == "cpu" else import_cupy()


def to_module(array: Any, xp: ModuleType) -> Any:
    """`array` as an array of module `xp`, copying between host and device only when needed."""
    if xp is np:
        return array if isinstance(array, np.ndarray) else (array.get() if hasattr(array, "get") else np.asarray(array))
    return xp.asarray(array)



# paddle.device's names kept in this package's modules, which import this one: named lazily (a
# module's first use imports it), and the tensor layer's likewise, from above this layer.
_MEMORY_STATS = ("empty_cache", "ipc_collect", "max_memory_allocated", "max_memory_reserved", "memory_allocated",
                 "memory_reserved", "memory_summary", "reset_max_memory_allocated", "reset_max_memory_reserved",
                 "reset_peak_memory_stats")
_PROPERTIES = ("IPUPlace", "XPUPlace", "device_count", "get_all_custom_device_type", "get_all_device_type",
               "get_available_custom_device", "get_available_device", "get_cudnn_version",
               "get_device_capability", "get_device_name", "get_device_properties", "is_available",
               "is_bf16_supported", "is_compiled_with_cinn", "is_compiled_with_custom_device",
               "is_compiled_with_distribute", "is_compiled_with_ipu", "is_compiled_with_rocm",
               "is_compiled_with_xpu", "is_current_stream_capturing")
_STREAMS = ("Event", "Stream", "StreamContext", "current_stream", "set_stream", "stream", "stream_guard",
            "get_stream_from_external")
_RANDOM = ("get_rng_state", "set_rng_state", "manual_seed")
_TYPED = ("FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor",
          "ShortTensor", "IntTensor", "LongTensor", "BoolTensor")
_LAZY = {**dict.fromkeys(_MEMORY_STATS, "pycoll.device.memory_stats"),
         **dict.fromkeys(_PROPERTIES, "pycoll.device.properties"),
         **dict.fromkeys(_STREAMS, "pycoll.device.streams"),
         **dict.fromkeys(_RANDOM, "pycoll.device_random"),  # the tensor layer's: over pycoll.random
         **dict.fromkeys(_TYPED, "pycoll.typed_tensors")}
__all__ += list(_MEMORY_STATS + _PROPERTIES + _STREAMS)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # the next look-up finds it at once
        return value
    raise AttributeError(f"module 'pycoll.device' has no attribute {name!r}")


def __dir__() -> list:
    return sorted(set(globals()) | set(_LAZY))
