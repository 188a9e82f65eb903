"""The current device: paddle's default (a visible GPU, else the CPU), PYCOLL_DEVICE, set_device."""
import pytest
from conftest import run_python

import pycoll
from pycoll import device


def test_places_parse_and_print():
    assert device.parse_place("cpu") == ("cpu", 0) and device.parse_place(" GPU:3 ") == ("gpu", 3)
    assert device.place_str(("gpu", 1)) == "gpu:1" and device.place_str(("cpu", 0)) == "cpu"
    for bad in ("tpu", "gpu:x", ""):
        with pytest.raises(ValueError, match="place must be"):
            device.parse_place(bad)
    with pytest.raises(TypeError, match="place must be a str"):
        device.parse_place(3)


def test_gpu_alone_names_the_current_gpu_without_asking_for_the_default():
    """PYCOLL_DEVICE=gpu once recursed forever: parsing 'gpu' asked for the current place,
    which set PYCOLL_DEVICE's device, which parsed 'gpu' again."""
    result = run_python(["-c", "import pycoll; print(pycoll.get_device())"], env={"PYCOLL_DEVICE": "gpu"})
    if device.gpu_count() > 0:
        assert result.returncode == 0 and result.stdout.strip() == "gpu:0", result.stderr
    else:
        assert result.returncode != 0 and "RecursionError" not in result.stderr
        assert "visible GPUs" in result.stderr, result.stderr


def test_the_cpu_tests_run_on_the_cpu():
    assert pycoll.get_device() == "cpu"  # conftest pins PYCOLL_DEVICE=cpu


def test_synchronize_waits_for_nothing_on_the_cpu_and_names_a_missing_gpu():
    """paddle's device.synchronize / device.cuda.synchronize / empty_cache (timing code calls them)."""
    pycoll.device.synchronize()
    pycoll.device.synchronize("cpu")
    pycoll.device.cuda.empty_cache()
    with pytest.raises(ValueError, match="is not a GPU"):
        pycoll.device.cuda.synchronize("cpu")
    missing = device.gpu_count()  # the first index past the visible GPUs
    with pytest.raises(ValueError, match=f"one of the {missing} visible GPUs, got {missing}"):
        pycoll.device.cuda.synchronize(missing)
