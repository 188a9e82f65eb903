"""paddle.device.cuda: what pycoll can say about the CUDA GPUs (through CuPy, when installed).
``import pycoll`` imports this module, so ``pycoll.device.cuda.device_count()`` works as paddle's."""
from pycoll.device import gpu_count


def device_count() -> int:
    """How many GPUs are visible: 0 without CuPy, without a driver or without a GPU."""
    return gpu_count()
