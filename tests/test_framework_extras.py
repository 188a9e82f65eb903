"""paddle 3.3.1's ``paddle.framework`` names: mode queries, flags, Parameter, the dtype module,
convert_np_dtype_to_dtype_, is_parameter / is_persistable, async_save."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import pycoll
import pycoll.framework as F


def test_mode_queries_answer_as_paddle_in_dynamic_mode():
    # paddle 3.3.1 in dynamic mode: False, True, False, True
    assert (F.in_pir_mode(), F.in_dynamic_or_pir_mode(), F.in_pir_executor_mode(), F.use_pir_api()) == \
        (False, True, False, True)


def test_flags_are_pycolls():
    assert F.get_flags is pycoll.get_flags and F.set_flags is pycoll.set_flags
    assert F.get_flags("FLAGS_check_nan_inf") == {"FLAGS_check_nan_inf": False}


def test_parameter_tests():
    lin = pycoll.nn.Linear(2, 2)
    plain = pycoll.ones([2])
    assert F.Parameter is pycoll.nn.Parameter and isinstance(lin.weight, F.Parameter)
    # paddle 3.3.1: is_parameter(weight) True, of a tensor False; weight.persistable True, tensor's False
    assert F.is_parameter(lin.weight) and not F.is_parameter(plain) and not F.is_parameter(np.ones(2))
    assert F.is_persistable(lin.weight) and not F.is_persistable(plain)
    with pytest.raises(TypeError, match="Tensor"):
        F.is_persistable(np.ones(2))


def test_dtype_module_and_conversion():
    assert F.dtype.float32 == pycoll.float32 and F.dtype.uint16 == np.uint16
    assert F.dtype.iinfo(F.dtype.int8).max == 127 and F.dtype.finfo(F.dtype.float16).bits == 16
    assert F.dtype.bfloat16.name == "bfloat16"
    # paddle 3.3.1: float32 -> float32, int64 -> int64, 'float16' -> float16, bool -> bool,
    # uint16 -> bfloat16, complex64 -> complex64, uint8 -> uint8
    cases = [(np.float32, "float32"), (np.dtype("int64"), "int64"), ("float16", "float16"), (np.bool_, "bool"),
             (np.uint16, "bfloat16"), (np.complex64, "complex64"), (np.uint8, "uint8")]
    assert [F.convert_np_dtype_to_dtype_(d).name for d, _ in cases] == [name for _, name in cases]
    with pytest.raises(TypeError, match="foo"):
        F.convert_np_dtype_to_dtype_("foo")


def test_async_save_writes_a_snapshot(tmp_path):
    lin = pycoll.nn.Linear(3, 2)
    before = {k: v.numpy().copy() for k, v in lin.state_dict().items()}
    path = str(tmp_path / "lin.pdparams")
    F.async_save(lin.state_dict(), path)
    lin.weight.set_value(np.zeros((3, 2), np.float32))  # training goes on: the file keeps the values saved
    F.async_save(lin.weight, str(tmp_path / "w.pdtensor"), sync_other_task=True)
    F.clear_async_save_task_queue()
    loaded = pycoll.load(path)
    for key, value in before.items():
        np.testing.assert_array_equal(loaded[key].numpy(), value)
    np.testing.assert_array_equal(pycoll.load(str(tmp_path / "w.pdtensor")).numpy(), np.zeros((3, 2)))


def test_async_save_errors(tmp_path):
    with pytest.raises(TypeError, match="state dict or a Tensor"):
        F.async_save([pycoll.ones([1])], str(tmp_path / "x"))
    F.async_save({"f": lambda: 0}, str(tmp_path / "bad"))  # refused by save, in the background
    with pytest.raises(TypeError):
        F.clear_async_save_task_queue()
    F.clear_async_save_task_queue()  # the queue is empty again


def test_async_save_completes_at_exit(tmp_path):
    path = tmp_path / "big.pdparams"
    script = textwrap.dedent(f"""
        import numpy as np, pycoll, pycoll.framework as F
        F.async_save({{"w": pycoll.to_tensor(np.arange(2_000_000, dtype=np.float32))}}, {str(path)!r})
    """)  # exits without clearing the queue
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120, env={**os.environ})
    np.testing.assert_array_equal(pycoll.load(str(path))["w"].numpy(), np.arange(2_000_000, dtype=np.float32))
