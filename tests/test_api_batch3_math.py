"""paddle 3.3.1's top-level names pycoll lacked: div / sub / true_divide (rounding_mode, alpha,
out), asarray, from_numpy, range, set_flags / get_flags, get_default_device, pycoll.version,
utils.run_check, and the math functions (multiplex, baddbmm, broadcast_shapes, polar, ldexp,
frexp, the Bessel functions i0 / i0e / i1 / i1e, nextafter, msort, gammainc / gammaincc,
multigammaln, histogramdd, histogram_bin_edges, reduce_as, shard_index). Numbers marked "paddle"
were measured on paddle 3.3.1 (CPU) with the same inputs."""
import numpy as np
import pytest

import pycoll


def T(v, dtype="float32", grad=False):
    return pycoll.to_tensor(np.asarray(v, dtype=dtype), stop_gradient=not grad)


def central_grad(fn, x, eps=1e-6):
    """d sum(fn(x)) / dx by central differences (float64)."""
    g = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        hi, lo = x.copy(), x.copy()
        hi[i] += eps
        lo[i] -= eps
        g[i] = (fn(hi).sum() - fn(lo).sum()) / (2 * eps)
    return g


# ---- div / sub / true_divide ------------------------------------------------------------------

def test_div_rounding_modes_dtypes_and_gradients():
    y = T([2, 2, -2])
    expected = {None: [3.5, -3.5, -2.75], "floor": [3, -4, -3], "trunc": [3, -3, -2]}  # paddle
    grads = {None: [0.5, 0.5, -0.5], "floor": [0, 0, 0], "trunc": [0, 0, 0]}  # paddle
    for mode, values in expected.items():
        x = T([7, -7, 5.5], grad=True)
        out = pycoll.div(x, y, rounding_mode=mode)
        np.testing.assert_array_equal(out.numpy(), values)
        out.sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), grads[mode])
    xi, yi = T([7, -7, 5], "int64"), T([2, 2, -2], "int64")
    assert pycoll.div(xi, yi).dtype == np.float32  # paddle: true division of ints is float32
    trunc = pycoll.div(xi, yi, rounding_mode="trunc")
    assert trunc.dtype == np.int64 and trunc.numpy().tolist() == [3, -3, -2]  # paddle
    assert pycoll.div(xi, yi, rounding_mode="floor").numpy().tolist() == [3, -4, -3]  # paddle
    np.testing.assert_array_equal(pycoll.true_divide(xi, yi).numpy(), [3.5, -3.5, -2.5])  # paddle
    np.testing.assert_array_equal(T([7, -7, 5.5]).div(y, rounding_mode="floor").numpy(), [3, -4, -3])
    with pytest.raises(ValueError, match="rounding_mode must be None, 'trunc' or 'floor'"):
        pycoll.div(xi, yi, rounding_mode="bad")


def test_sub_alpha_out_and_in_place_forms():
    x, y = T([7, -7, 5.5], grad=True), T([2, 2, -2])
    out = pycoll.sub(x, y, alpha=3)
    np.testing.assert_array_equal(out.numpy(), [1, -13, 11.5])  # paddle
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1, 1, 1])
    np.testing.assert_array_equal(pycoll.sub(input=x, other=y, alpha=2).numpy(), [3, -11, 9.5])  # paddle
    holder = pycoll.zeros([3])
    result = pycoll.sub(x, y, out=holder)
    np.testing.assert_array_equal(holder.numpy(), [5, -9, 7.5])  # paddle
    assert result is not holder  # paddle returns a new tensor too
    with pytest.raises(TypeError, match="alpha must be an integer"):
        pycoll.sub(T([1, 2], "int64"), T([1, 1], "int64"), alpha=0.5)
    a = T([7, -7, 5.5])
    assert pycoll.div_(a, y, rounding_mode="floor") is a and a.numpy().tolist() == [3, -4, -3]
    pycoll.sub_(a, y, alpha=2)
    np.testing.assert_array_equal(a.numpy(), [-1, -8, 1])


# ---- creation ---------------------------------------------------------------------------------

def test_range_is_end_inclusive_in_the_default_float_dtype():
    np.testing.assert_array_equal(pycoll.range(5).numpy(), [0, 1, 2, 3, 4, 5])  # paddle
    assert pycoll.range(5).dtype == np.float32 and pycoll.range(1, 4).dtype == np.float32  # paddle
    np.testing.assert_array_equal(pycoll.range(0, 1, 0.25).numpy(), [0, 0.25, 0.5, 0.75, 1])  # paddle
    np.testing.assert_array_equal(pycoll.range(0, 1, 0.3).numpy(),
                                  np.array([0, 0.3, 0.6, 0.90000004], np.float32))  # paddle, float32 steps
    np.testing.assert_array_equal(pycoll.range(4, 0, -1).numpy(), [4, 3, 2, 1, 0])  # paddle
    assert pycoll.range(0, 4, 1, dtype="int32").dtype == np.int32
    np.testing.assert_array_equal(pycoll.range(pycoll.to_tensor(1), 3).numpy(), [1, 2, 3])  # paddle
    assert pycoll.range(end=3).shape == [4] and pycoll.range(0, 3, requires_grad=True).stop_gradient is False
    with pytest.raises(ValueError, match="step must be nonzero"):
        pycoll.range(0, 3, 0)
    with pytest.raises(ValueError, match="cannot be reached"):
        pycoll.range(3, 0, 1)


def test_asarray_dtypes_copies_and_grad():
    assert pycoll.asarray([1, 2.5]).dtype == np.float32 and pycoll.asarray([1, 2]).dtype == np.int64  # paddle
    assert pycoll.asarray(np.float64(2.5)).dtype == np.float64 and pycoll.asarray(True).dtype == np.bool_
    t = pycoll.asarray([1, 2], dtype="float64", requires_grad=True)
    assert t.dtype == np.float64 and t.stop_gradient is False  # paddle
    x = T([1, 2], grad=True)
    y = pycoll.asarray(x)
    y[0] = 5
    assert y is not x and y.stop_gradient and x.numpy().tolist() == [1, 2]  # paddle: a Tensor is copied
    a = np.arange(3.0)
    shared, copied = pycoll.asarray(a), pycoll.asarray(a, copy=True)
    a[0] = 9
    assert shared.numpy()[0] == 9 and copied.numpy()[0] == 0
    np.testing.assert_array_equal(pycoll.asarray([T(1), T(2)]).numpy(), [1, 2])


def test_from_numpy_wraps_the_array():
    a = np.arange(3, dtype=np.int32)
    t = pycoll.from_numpy(a)
    assert t.dtype == np.int32  # paddle keeps the dtype
    t[0] = 10
    assert a[0] == 10  # pycoll's zero-copy contract (paddle 3.3.1's CPU build copies)
    with pytest.raises(TypeError, match="must be a numpy.ndarray"):
        pycoll.from_numpy([1, 2])


# ---- flags, device, version, run_check --------------------------------------------------------

def test_flags_set_get_defaults_and_errors():
    assert pycoll.get_flags("FLAGS_check_nan_inf") == {"FLAGS_check_nan_inf": False}  # paddle's default
    # paddle's CPU build defaults; cudnn_deterministic is its CUDA build's
    assert pycoll.get_flags(["FLAGS_call_stack_level", "FLAGS_allocator_strategy", "FLAGS_cudnn_deterministic"]) == {
        "FLAGS_call_stack_level": 1, "FLAGS_allocator_strategy": "auto_growth", "FLAGS_cudnn_deterministic": False}
    try:
        pycoll.set_flags({"FLAGS_check_nan_inf": True, "FLAGS_call_stack_level": 3,
                          "FLAGS_eager_delete_tensor_gb": 1})
        assert pycoll.get_flags(("FLAGS_check_nan_inf", "FLAGS_call_stack_level", "FLAGS_eager_delete_tensor_gb")) == {
            "FLAGS_check_nan_inf": True, "FLAGS_call_stack_level": 3, "FLAGS_eager_delete_tensor_gb": 1.0}
        pycoll.set_flags({"FLAGS_check_nan_inf": 0})
        assert pycoll.get_flags("FLAGS_check_nan_inf")["FLAGS_check_nan_inf"] is False  # paddle
    finally:
        pycoll.set_flags({"FLAGS_check_nan_inf": False, "FLAGS_call_stack_level": 1,
                          "FLAGS_eager_delete_tensor_gb": 0.0})
    with pytest.raises(ValueError, match="Flag FLAGS_nonexistent_x cannot get"):  # paddle's words
        pycoll.get_flags("FLAGS_nonexistent_x")
    with pytest.raises(ValueError, match="Flag check_nan_inf cannot set"):
        pycoll.set_flags({"check_nan_inf": True})
    with pytest.raises(TypeError, match="FLAGS_call_stack_level takes a int value"):
        pycoll.set_flags({"FLAGS_call_stack_level": "abc"})
    with pytest.raises(TypeError, match="should be a dict"):
        pycoll.set_flags("FLAGS_check_nan_inf")
    with pytest.raises(TypeError, match="list, tuple or string"):
        pycoll.get_flags(3)


def test_default_device_version_and_run_check(capsys):
    assert pycoll.get_default_device() == pycoll.get_device()
    v = pycoll.version
    assert v.full_version == pycoll.__version__ and [v.major, v.minor, v.patch] == pycoll.__version__.split(".")
    if not pycoll.is_compiled_with_cuda():
        assert v.cuda() == "False" and v.cuda == "False" and v.nccl() == "0"  # paddle's CPU build
    assert v.cudnn() == "False" and v.cuda_archs() == []
    v.show()
    shown = capsys.readouterr().out.splitlines()
    assert shown[0] == f"full_version: {pycoll.__version__}" and shown[5].startswith("cuda: ")
    pycoll.utils.run_check()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Running verify pycoll program ... "
    assert lines[1] in ("pycoll works well on 1 CPU.", "pycoll works well on 1 GPU.")
    assert lines[2].startswith("pycoll is installed successfully!")
