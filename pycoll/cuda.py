"""paddle 3.3.1's torch-compatible ``paddle.cuda`` module, a face over ``pycoll.device``: every
name here is the object ``pycoll.device`` (its ``cuda``, ``streams``, ``memory_stats``,
``properties`` and ``cuda_runtime`` modules) or the tensor layer's generator controls and typed
tensors already hold; nothing is implemented twice.

Without a GPU the answers are paddle's CPU build's where that build answers (``device_count()``
0, ``is_available()`` False, ``current_device()`` 0, ``is_initialized()`` False,
``is_bf16_supported()`` True with ml_dtypes, ``is_current_stream_capturing()`` False); where it
fails (most GPU calls) pycoll raises an error that says a CUDA GPU is needed. Two answers differ:
``synchronize()`` on the CPU returns (there is nothing to wait for; paddle's raises a TypeError)
and ``empty_cache()`` returns (paddle's CPU build fails on a missing binding).
"""
from pycoll.device import current_device, device, manual_seed_all
from pycoll.device.cuda import (device_count, empty_cache, get_device_capability, get_device_name,
                                get_device_properties, max_memory_allocated, max_memory_reserved, memory_allocated,
                                memory_reserved, reset_max_memory_allocated, reset_max_memory_reserved, synchronize)
from pycoll.device.cuda_runtime import CudaError, check_error, cudart, is_initialized, mem_get_info, nvtx, set_device
from pycoll.device.memory_stats import ipc_collect, reset_peak_memory_stats
from pycoll.device.properties import is_available, is_bf16_supported, is_current_stream_capturing
from pycoll.device.streams import (Event, Stream, StreamContext, current_stream, get_stream_from_external,
                                   set_stream, stream)
from pycoll.device_random import get_rng_state, manual_seed, set_rng_state
from pycoll.typed_tensors import (BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor, FloatTensor,
                                  HalfTensor, IntTensor, LongTensor, ShortTensor)

__all__ = ["cudart", "check_error", "is_available", "is_initialized", "mem_get_info", "synchronize", "current_stream",
           "get_device_properties", "get_device_name", "get_device_capability", "stream", "Stream",
           "get_stream_from_external", "current_device", "device_count", "empty_cache", "memory_allocated",
           "memory_reserved", "set_device", "set_stream", "manual_seed_all", "get_rng_state", "set_rng_state",
           "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor",
           "IntTensor", "LongTensor", "BoolTensor", "device", "is_bf16_supported", "manual_seed",
           "max_memory_allocated", "reset_peak_memory_stats", "Event", "ipc_collect", "StreamContext",
           # in paddle.cuda beside its __all__
           "CudaError", "nvtx", "is_current_stream_capturing", "max_memory_reserved", "reset_max_memory_allocated",
           "reset_max_memory_reserved"]
