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
