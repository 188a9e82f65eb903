"""The CPU-against-"GPU" sweeps of tests/test_strict_device*.py, on a real GPU through CuPy.

Without a GPU those cases run on tests/strict_cupy.py, which refuses what CuPy refuses but
computes with NumPy; here every case runs on the CPU and on GPU 0 from the same seed, so that
CuPy's own kernels are checked too: its partition (topk, kthvalue: NaNs and ties), its float16
paths (pools, batch_norm, erf), its reductions, lazy Adam's row updates, and everything else
the stand-in can only imitate. The first GPU run (2026-11-26) found two places where CuPy's
numerics differ from NumPy's (float32 subnormals flushed by its -ftz kernels; NCCL's float16
average), hence the tolerances: CuPy sums in another order than NumPy, and rounds float16
operations on their own.
"""
from __future__ import annotations

from typing import Any, Callable, Dict

import numpy as np
import pytest

import pycoll
import test_strict_device
import test_strict_device_more
import test_strict_device_today
from test_strict_device import _flat

pytestmark = pytest.mark.gpu

CASES: Dict[str, Callable[[], Any]] = {
    f"{module.__name__[len('test_strict_device'):].lstrip('_') or 'base'}:{name}": case
    for module in (test_strict_device, test_strict_device_more, test_strict_device_today)
    for name, case in module.CASES.items()
}
# rtol, atol by dtype: float32 and float64 allow another summation order and CUDA's own
# transcendentals (its double erf is within 2 ulp, the CPU's host kernel within 0.5: they differ in
# the last bit, as the stand-in run of 2026-11-26 showed); 16-bit floats their own rounding
TOLERANCES = {"float16": (4e-3, 4e-3), "bfloat16": (3e-2, 3e-2), "float32": (1e-4, 1e-5),
              "float64": (1e-12, 1e-14)}


def _host(value: Any, place: str, name: str) -> Any:
    import cupy

    if isinstance(value, pycoll.Tensor):
        expected = "gpu:0" if place == "gpu" else "cpu"
        assert value.place == expected, f"{name}: on {value.place}, expected {expected}"
        if place == "gpu":
            assert isinstance(value.array, cupy.ndarray), f"{name}: holds {type(value.array)}"
        return value.numpy()
    if isinstance(value, cupy.ndarray):
        return value.get()
    return value


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_real_gpu_equals_the_cpu(name):
    results = {}
    try:
        for place in ("cpu", "gpu"):
            pycoll.set_device(place)
            pycoll.seed(2024)
            np.random.seed(2024)
            results[place] = _flat(CASES[name]())
    finally:
        pycoll.set_device("cpu")
    assert results["cpu"].keys() == results["gpu"].keys()
    for key, cpu_value in results["cpu"].items():
        want, got = _host(cpu_value, "cpu", key), _host(results["gpu"][key], "gpu", key)
        if want is None or got is None:
            assert want is got, key
        elif isinstance(want, np.ndarray) or isinstance(got, np.ndarray):
            want, got = np.asarray(want), np.asarray(got)
            assert got.dtype == want.dtype and got.shape == want.shape, (key, got.dtype, want.dtype)
            rtol, atol = TOLERANCES.get(want.dtype.name, (0, 0))  # integers, bools: exact
            if want.dtype.kind == "f" or want.dtype.name == "bfloat16":
                want, got = want.astype(np.float64), got.astype(np.float64)
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=key)
        elif isinstance(want, float):
            assert got == pytest.approx(want, rel=1e-4, abs=1e-5, nan_ok=True), key
        else:
            assert got == want, key
