"""What the devices are: paddle's ``device_count``, ``get_device_properties`` (through
``cupy.cuda.runtime.getDeviceProperties``), ``get_all_device_type``, the ``is_compiled_with_*``
questions and the like.

pycoll's "build" is CuPy: it runs on CPUs and, where CuPy sees one, on CUDA (or ROCm) GPUs. It has
no XPU, IPU, custom-device or CINN support, uses no cuDNN, and always has its distributed side.
"""
from __future__ import annotations

import importlib.util
from typing import Any, List, NamedTuple, Tuple

from pycoll.device import current_place, gpu_count, gpu_index, import_cupy, is_compiled_with_cuda
from pycoll.device.other_places import IPUPlace, XPUPlace  # noqa: F401 - paddle.device's names

__all__ = ["DeviceProperties", "device_count", "get_device_properties", "get_device_name",
           "get_device_capability", "get_all_device_type", "get_all_custom_device_type",
           "get_available_device", "get_available_custom_device", "is_available", "is_bf16_supported",
           "is_compiled_with_cinn", "is_compiled_with_custom_device", "is_compiled_with_distribute",
           "is_compiled_with_ipu", "is_compiled_with_rocm", "is_compiled_with_xpu", "get_cudnn_version",
           "is_current_stream_capturing", "XPUPlace", "IPUPlace"]


class DeviceProperties(NamedTuple):
    """paddle's ``_gpuDeviceProperties``: ``total_memory`` in bytes."""

    name: str
    major: int
    minor: int
    total_memory: int
    multi_processor_count: int

    def __repr__(self) -> str:  # paddle's text
        return (f"_gpuDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory >> 20}MB, multi_processor_count={self.multi_processor_count})")


def device_count() -> int:
    """How many GPUs are visible: 0 without CuPy, without a driver or without a GPU."""
    return gpu_count()


def get_device_properties(device: Any = None) -> DeviceProperties:
    """The name, compute capability, memory and multiprocessor count of GPU ``device`` (default:
    the current GPU; an index, 'gpu:N' or a CUDAPlace)."""
    index = gpu_index(device, "get_device_properties")  # paddle's CPU build: ValueError
    props = import_cupy().cuda.runtime.getDeviceProperties(index)
    name = props["name"]
    return DeviceProperties(name=name.decode() if isinstance(name, bytes) else str(name),
                            major=int(props["major"]), minor=int(props["minor"]),
                            total_memory=int(props["totalGlobalMem"]),
                            multi_processor_count=int(props["multiProcessorCount"]))


def get_device_name(device: Any = None) -> str:
    """The GPU's name (``cudaDeviceProp.name``)."""
    return get_device_properties(device).name


def get_device_capability(device: Any = None) -> Tuple[int, int]:
    """The GPU's compute capability, (major, minor)."""
    props = get_device_properties(device)
    return props.major, props.minor


def get_all_device_type() -> List[str]:
    """The device types besides the CPU: ``['gpu']`` where a GPU is visible, else ``[]``."""
    return ["gpu"] if gpu_count() else []


def get_available_device() -> List[str]:
    """The devices besides the CPU: ``['gpu:0', 'gpu:1', ...]``, one per visible GPU."""
    return [f"gpu:{index}" for index in range(gpu_count())]


def get_all_custom_device_type() -> List[str]:
    """``[]``: pycoll has no custom (plug-in) devices."""
    return []


def get_available_custom_device() -> List[str]:
    """``[]``: pycoll has no custom (plug-in) devices."""
    return []


def is_available() -> bool:
    """Whether a GPU is visible."""
    return gpu_count() >= 1


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the current device takes bfloat16 tensors: pycoll's bfloat16 is ml_dtypes' (on the
    CPU and, through CuPy, on the GPU), so it needs ml_dtypes; on a GPU, natively from compute
    capability 8.0, else emulated (``including_emulation``)."""
    if importlib.util.find_spec("ml_dtypes") is None:
        return False
    place = current_place()
    if place[0] == "cpu":
        return True
    return get_device_capability(place[1])[0] >= 8 or bool(including_emulation)


def is_compiled_with_custom_device(device_type: str) -> bool:
    """False: pycoll has no custom (plug-in) devices."""
    if not isinstance(device_type, str):
        raise TypeError(f"device_type must be a str like 'npu', got {type(device_type).__name__}")
    return False


def is_compiled_with_cinn() -> bool:
    """False: pycoll has no CINN compiler."""
    return False


def is_compiled_with_distribute() -> bool:
    """True: pycoll's distributed side (MPI, and NCCL with CuPy) is always there."""
    return True


def is_compiled_with_ipu() -> bool:
    """False: pycoll runs on no Graphcore IPU."""
    return False


def is_compiled_with_xpu() -> bool:
    """False: pycoll runs on no Kunlun XPU."""
    return False


def is_compiled_with_rocm() -> bool:
    """Whether pycoll's GPUs are AMD's: CuPy's ROCm build sees a GPU."""
    return is_compiled_with_cuda() and bool(import_cupy().cuda.runtime.is_hip)


def get_cudnn_version() -> None:
    """None: pycoll calls no cuDNN (paddle answers None where cuDNN is not there)."""
    return None


def is_current_stream_capturing() -> bool:
    """Whether the current GPU's current stream is capturing a CUDA graph; False without a GPU."""
    if not gpu_count():
        return False
    return bool(import_cupy().cuda.get_current_stream().is_capturing())

