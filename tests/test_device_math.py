"""pycoll.kernels.device_math: the Adam step on CuPy arrays in one CUDA kernel.

On a GPU (tests marked gpu) the kernel's results are compared bit for bit with the host kernel's
(host_math.adam_step, itself bit-identical to the optimizer's array formula:
test_fast_ops_kernels_more), on float32 and float64, with and without AMSGrad's maximum and
AdamW's decay, sizes from 0 to past one grid of threads, with subnormals, infinities and NaNs in
the data, a strided gradient, and on a stream of the caller's; then Adam and AdamW on GPU
parameters against the same optimizers on the CPU. Anywhere: what the kernel does not serve, and
the compiled entry's own checks, which raise before anything is launched.
"""
import numpy as np
import pytest

import pycoll
from pycoll.kernels import compiled, device_math, host_math

# compiled.cuda_built() is False on a build without CUDA kernels and under the CuPy stand-in
needs_kernel = pytest.mark.skipif(not compiled.cuda_built(), reason="no CUDA kernels here")
SCALARS = dict(decay=1.0, beta1=0.9, beta2=0.999, epsilon=1e-8 * np.sqrt(1 - 0.999), step=1e-3)


def _state(n, dtype, seed):
    """param, grad, m, v, v_max (host arrays) with awkward values among ordinary ones."""
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(n).astype(dtype) for _ in range(3)]
    arrays += [np.abs(rng.standard_normal(n)).astype(dtype) for _ in range(2)]
    if n >= 8:
        tiny = np.finfo(dtype).smallest_subnormal
        arrays[1][:4] = [tiny, -tiny * 3, np.inf, np.nan]  # the gradient
        arrays[3][4] = tiny  # v
        arrays[4][5:7] = [np.nan, np.inf]  # v_max
    return arrays


def _host_step(arrays, use_max, **scalars):
    param, grad, m, v, v_max = (a.copy() for a in arrays)
    assert host_math.adam_step(param, grad, m, v, v_max if use_max else None, **scalars)
    return [param, m, v] + ([v_max] if use_max else [])


@pytest.mark.gpu
@needs_kernel
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("use_max, decay", [(False, 1.0), (True, 1.0), (False, 0.9995)])
@pytest.mark.parametrize("n", [0, 1, 7, 4099, (1 << 20) + 3])
def test_the_cuda_kernel_gives_the_host_kernels_bits(dtype, use_max, decay, n):
    import cupy

    arrays = _state(n, dtype, seed=n)
    scalars = {**SCALARS, "decay": decay}
    want = _host_step(arrays, use_max, **scalars)
    param, grad, m, v, v_max = (cupy.asarray(a) for a in arrays)
    assert device_math.adam_step(param, grad, m, v, v_max if use_max else None, **scalars)
    got = [param, m, v] + ([v_max] if use_max else [])
    for name, g, w in zip(["param", "moment1", "moment2", "moment2_max"], got, want):
        _assert_same_bits(g.get(), w, name)


def _assert_same_bits(got, want, name):
    """Bit for bit, except a NaN's payload: CUDA's float32 arithmetic gives the canonical NaN
    (0x7fffffff) where the host's keeps its operand's sign and payload (seen on an H100,
    2026-11-27). A NaN must still be a NaN exactly where the host kernel has one."""
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan, err_msg=f"{name}: where the NaNs are")
    bits = f"u{want.itemsize}"
    np.testing.assert_array_equal(got[~nan].view(bits), want[~nan].view(bits), err_msg=name)


@pytest.mark.gpu
@needs_kernel
def test_a_strided_gradient_on_a_stream_of_the_callers():
    import cupy

    arrays = _state(1000, np.float32, seed=1)
    wide = np.repeat(arrays[1], 2)  # the gradient at every other element
    want = _host_step(arrays, False, **SCALARS)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        param, m, v = (cupy.asarray(a) for a in (arrays[0], arrays[2], arrays[3]))
        grad = cupy.asarray(wide)[::2]
        assert device_math.adam_step(param, grad, m, v, None, **SCALARS)
    stream.synchronize()
    for g, w in zip([param, m, v], want):
        np.testing.assert_array_equal(g.get(), w)


@pytest.mark.gpu
@pytest.mark.parametrize("optimizer, amsgrad", [("Adam", False), ("AdamW", True)])
def test_adam_on_gpu_parameters_equals_the_cpu(optimizer, amsgrad):
    """The optimizers take the kernel on the GPU and the host kernel on the CPU: the same bits.
    Each loss is sum(p * c), so that the gradients are exactly c on both (no matmul rounding)."""
    rng = np.random.default_rng(0)
    init = [rng.standard_normal((33, 17)).astype(np.float32), rng.standard_normal(17)]  # f32, f64
    coefs = [[rng.standard_normal(a.shape).astype(a.dtype) for a in init] for _ in range(3)]
    results = {}
    for place in ("cpu", "gpu"):
        pycoll.set_device(place)
        try:
            params = [pycoll.create_parameter(list(a.shape), str(a.dtype),
                                              default_initializer=pycoll.nn.initializer.Assign(a))
                      for a in init]
            opt = getattr(pycoll.optimizer, optimizer)(learning_rate=0.01, parameters=params,
                                                       amsgrad=amsgrad)
            for coef in coefs:
                sum((p * pycoll.to_tensor(c)).sum() for p, c in zip(params, coef)).backward()
                opt.step()
                opt.clear_grad()
            results[place] = [p.numpy() for p in params]
        finally:
            pycoll.set_device("cpu")
    for cpu, gpu in zip(results["cpu"], results["gpu"]):
        np.testing.assert_array_equal(gpu, cpu)


def test_host_arrays_and_unserved_device_arrays_are_left_to_the_formula():
    arrays = _state(10, np.float32, seed=0)
    assert device_math.adam_step(*arrays, **SCALARS) is None  # numpy arrays: host_math's


def test_on_the_stand_in_the_kernel_counts_as_not_built():
    """Device arrays in host memory (tests/strict_cupy.py) never reach the CUDA kernel."""
    import strict_cupy

    before = compiled.cuda_built()
    with strict_cupy.installed() as cupy:
        assert not compiled.cuda_built()
        param, grad, m, v, v_max = (cupy.asarray(a) for a in _state(10, np.float32, seed=0))
        assert device_math.adam_step(param, grad, m, v, v_max, **SCALARS) is None
    assert compiled.cuda_built() == before  # restored


@pytest.mark.skipif(not compiled.build_info()["cuda_kernels"], reason="a build without CUDA kernels")
@pytest.mark.parametrize("change, error, message", [
    ({"type": 1}, TypeError, "no CUDA kernel for float16"),
    ({"type": 9}, ValueError, "type 9 is not a type code"),
    ({"n": -1}, ValueError, "n is negative"),
    ({"moment1": 6}, ValueError, "not aligned to its element size"),
])
def test_the_compiled_entry_checks_before_it_launches(change, error, message):
    """pycoll._C.cuda_adam_step is private, but a wrong call raises rather than launching."""
    args = dict(param=0, grad=0, moment1=0, moment2=0, moment2_max=0, n=0, type=3, decay=1.0,
                beta1=0.9, one_minus_beta1=0.1, beta2=0.999, one_minus_beta2=0.001, epsilon=1e-8,
                step=1e-3, device=0, stream=0)
    with pytest.raises(error, match=message):
        compiled.ext().cuda_adam_step(**{**args, **change})
