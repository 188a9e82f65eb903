"""paddle 3.3.1's remaining top-level names: async_save, the device names (Stream, Event,
set_default_device, get_device_module, ...), the is_compiled_with_* questions, pycoll.cuda,
pycoll.special, sysconfig, hub, onnx and the place classes.

Where a test says "paddle's CPU build", the answer was measured on paddle 3.3.1's CPU build
(paddlepaddle 3.3.1, CPU wheel) with the same call and written in here.
"""
import numpy as np
import pytest

import pycoll
import pycoll.framework


def test_async_save_is_the_framework_one_and_saves(tmp_path):
    assert pycoll.async_save is pycoll.framework.async_save
    assert pycoll.clear_async_save_task_queue is pycoll.framework.clear_async_save_task_queue
    path = str(tmp_path / "state.pdparams")
    pycoll.async_save({"w": pycoll.to_tensor([1.0, 2.0, 3.0])}, path)
    pycoll.clear_async_save_task_queue()  # waits for the save
    np.testing.assert_array_equal(pycoll.load(path)["w"].numpy(), [1.0, 2.0, 3.0])


def test_device_names_at_the_top_are_pycoll_devices():
    import pycoll.device as device

    for name in ("Stream", "Event", "set_default_device", "get_device_module", "get_cudnn_version",
                 "device_guard"):
        assert getattr(pycoll, name) is getattr(device, name), name
    assert pycoll.get_cudnn_version() is None  # paddle's CPU build: None


@pytest.mark.skipif(pycoll.device.gpu_count() > 0, reason="the CPU-only answers")
def test_device_answers_of_paddles_cpu_build():
    import pycoll.device as device
    import pycoll.device.cpu as cpu

    # paddle's CPU build: get_device_module() / ('cpu') / (0) -> paddle.device.cpu,
    # (CPUPlace()) -> paddle.device, ('xpu') its xpu module (pycoll has none), ('foo') RuntimeError
    assert pycoll.get_device_module() is cpu
    assert pycoll.get_device_module("cpu") is cpu and pycoll.get_device_module(0) is cpu
    assert pycoll.get_device_module(pycoll.CPUPlace()) is device
    with pytest.raises(RuntimeError, match="Unsupported device type: foo"):
        pycoll.get_device_module("foo")
    with pytest.raises(RuntimeError, match="xpu"):
        pycoll.get_device_module("xpu")
    # set_default_device('cpu' / 0 / CPUPlace()) -> None; (1) ValueError (CPU index 0 only); ('gpu') ValueError
    for arg in ("cpu", 0, pycoll.CPUPlace()):
        assert pycoll.set_default_device(arg) is None and pycoll.get_device() == "cpu"
    with pytest.raises(ValueError, match="only index is 0"):
        pycoll.set_default_device(1)
    with pytest.raises(ValueError):
        pycoll.set_default_device("gpu")
    with pytest.raises(TypeError, match="device must be"):
        pycoll.set_default_device(1.5)
    assert device.current_device() == 0  # paddle's: 0
    with device.device("cpu"):
        assert pycoll.get_device() == "cpu"
    with pytest.raises(ValueError):  # paddle's CPU build: device_guard('gpu') ValueError
        pycoll.device_guard("gpu")
    # paddle's Stream() / Event() fail on its CPU build (a NameError inside paddle); pycoll's say why
    for make in (pycoll.Stream, pycoll.Event, cpu.Stream, lambda: device.get_stream_from_external(0)):
        with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
            make()
    # paddle.device.cpu: device_count() 0, max_memory_allocated() ValueError 'not supported in CPU'
    assert cpu.device_count() == 0
    with pytest.raises(ValueError, match="not supported on the CPU"):
        cpu.max_memory_allocated()
    assert cpu.get_rng_state is device.get_rng_state


def test_manual_seed_all_reseeds_the_generator():
    import pycoll.device as device

    device.manual_seed_all(7)
    first = pycoll.rand([3]).numpy()
    pycoll.seed(7)
    np.testing.assert_array_equal(pycoll.rand([3]).numpy(), first)


def test_is_compiled_with_answers():
    # paddle's CPU build: distribute True, xpu/rocm/ipu/cinn False, custom_device('npu') False,
    # custom_device(1) TypeError; pycoll always has its collectives and runs on no XPU/IPU/custom device
    assert pycoll.is_compiled_with_distribute() is True
    for name in ("xpu", "ipu", "cinn"):
        assert getattr(pycoll, f"is_compiled_with_{name}")() is False
    assert pycoll.is_compiled_with_custom_device("npu") is False
    with pytest.raises(TypeError, match="device_type"):
        pycoll.is_compiled_with_custom_device(1)
    if not pycoll.is_compiled_with_cuda():  # ROCm: a GPU seen through CuPy's HIP build
        assert pycoll.is_compiled_with_rocm() is False
