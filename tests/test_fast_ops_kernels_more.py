"""The host kernels behind sigmoid, its gradient and the Adam/AdamW step
(pycoll.kernels.host_math): the same bits as the array formulas that CuPy arrays and a build
without the kernels take (host_math._kernels patched to None gives those formulas here)."""
import numpy as np
import pytest

import pycoll
from pycoll import math_ops
from pycoll.kernels import host_math

pytestmark = pytest.mark.skipif(host_math._kernels() is None, reason="pycoll._C lacks the host math kernels")


def formula(monkeypatch, fn, *args):
    """fn(*args) on the array formulas alone."""
    with monkeypatch.context() as m:
        m.setattr(host_math, "_kernels", lambda: None)
        return fn(*args)


def sigmoid_inputs(dtype):
    rs = np.random.RandomState(0)
    big = 800.0 if dtype == np.float64 else 110.0  # past where exp(-x) overflows (exp(x) then)
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, -88.5, -88.8, -100.0, -103.9, -104.0,
               -745.0, -709.9, -710.0, 20.0, 17.0, 36.8, 37.0]
    return np.concatenate([special, np.linspace(-big, big, 40001), rs.standard_normal(30000) * 8,
                           -rs.uniform(80, big, 5000)]).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_is_the_array_formula_bit_for_bit(dtype, monkeypatch):
    x = sigmoid_inputs(dtype)
    got = math_ops.sigmoid_array(np, x)
    ref = formula(monkeypatch, math_ops.sigmoid_array, np, x)
    assert got.dtype == ref.dtype == dtype
    np.testing.assert_array_equal(got.view(np.uint8), ref.view(np.uint8))  # bits, NaN and -0 included
    assert np.isnan(got[0]) and got[1] == 1.0 and got[2] == 0.0 and got[3] == got[4] == 0.5
    tiny = got[x < -80]  # exp(x), not 0, where exp(-x) overflows: nonzero down to exp(x)'s underflow
    assert (tiny > 0).sum() > 100 and (tiny[x[x < -80] > -87] > 0).all()
    # another way: 1 / (1 + exp(-x)) in float64 (float32), to the exp's accuracy
    if dtype == np.float32:
        with np.errstate(over="ignore"):
            ref64 = 1.0 / (1.0 + np.exp(-x.astype(np.float64)))
        np.testing.assert_allclose(got[5:], ref64[5:], rtol=3e-7, atol=3e-45)  # subnormals: 2 steps


def test_sigmoid_strided_and_zero_dimensional_inputs(monkeypatch):
    x = np.linspace(-120, 30, 600, dtype=np.float32).reshape(20, 30)[::2, ::3]  # not contiguous
    got = math_ops.sigmoid_array(np, x)
    np.testing.assert_array_equal(got, formula(monkeypatch, math_ops.sigmoid_array, np, x))
    assert got.shape == (10, 10) and got.flags.c_contiguous
    zero_d = math_ops.sigmoid_array(np, np.array(-95.0, np.float32))
    assert zero_d.shape == () and zero_d == np.exp(np.float32(-95.0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_gradient_is_the_array_formula_bit_for_bit(dtype, monkeypatch):
    rs = np.random.RandomState(1)
    out = math_ops.sigmoid_array(np, sigmoid_inputs(dtype))
    g = rs.standard_normal(out.shape).astype(dtype)
    g[:3] = [np.nan, np.inf, -0.0]
    with np.errstate(invalid="ignore"):  # inf * 0 (the caller is quiet)
        got = math_ops._sigmoid_grad(g, out)
        ref = formula(monkeypatch, math_ops._sigmoid_grad, g, out)
    np.testing.assert_array_equal(got.view(np.uint8), ref.view(np.uint8))
    # another way: the float64 product, to float32 rounding
    if dtype == np.float32:
        o64 = out[3:].astype(np.float64)
        np.testing.assert_allclose(got[3:], g[3:].astype(np.float64) * o64 * (1 - o64), rtol=4e-7, atol=3e-45)


def test_sigmoid_op_and_silu_gradients_unchanged(monkeypatch):
    x0 = np.random.RandomState(2).standard_normal((7, 9)).astype(np.float32) * 6

    def run():
        x = pycoll.to_tensor(x0, stop_gradient=False)
        y = pycoll.nn.functional.sigmoid(x) * 3 + pycoll.nn.functional.silu(x)
        (y * y).sum().backward()
        return y.numpy(), x.grad.numpy()

    got, ref = run(), formula(monkeypatch, run)
    for a, b in zip(got, ref):
        np.testing.assert_array_equal(a, b)
    s = 1 / (1 + np.exp(-x0.astype(np.float64)))  # another way, float64
    np.testing.assert_allclose(got[0], 3 * s + x0 * s, rtol=2e-6, atol=1e-6)


def adam_run(opt_class, dtype, steps=5, **kwargs):
    """Parameters and moments after `steps` steps of a two-layer model on fixed data (w1 has 3081
    elements: the kernel's blocks of 1024 and an odd tail)."""
    rs = np.random.RandomState(3)
    w1 = pycoll.to_tensor(rs.standard_normal((13, 237)).astype(dtype) * 0.3, stop_gradient=False)
    w2 = pycoll.to_tensor(rs.standard_normal((237, 5)).astype(dtype) * 0.3, stop_gradient=False)
    b = pycoll.to_tensor(np.zeros(5, dtype), stop_gradient=False)
    x = pycoll.to_tensor(rs.standard_normal((16, 13)).astype(dtype))
    opt = opt_class(learning_rate=0.01, parameters=[w1, w2, b], **kwargs)
    for _ in range(steps):
        y = pycoll.matmul(pycoll.tanh(pycoll.matmul(x, w1)), w2) + b
        (y * y).mean().backward()
        opt.step()
        opt.clear_grad()
    state = opt.state_dict()
    moments = [np.asarray(v.numpy()) for k, v in sorted(state.items()) if "moment" in k]
    return [p.numpy() for p in (w1, w2, b)], moments


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("opt_class, kwargs", [
    (pycoll.optimizer.Adam, {}),
    (pycoll.optimizer.Adam, {"weight_decay": 0.05, "amsgrad": True, "beta1": 0.8, "epsilon": 1e-3}),
    (pycoll.optimizer.AdamW, {}),
    (pycoll.optimizer.AdamW, {"weight_decay": 0.3, "amsgrad": True, "beta2": 0.99}),
])
def test_adam_steps_are_the_array_formula_bit_for_bit(opt_class, kwargs, dtype, monkeypatch):
    params, moments = adam_run(opt_class, dtype, **kwargs)
    ref_params, ref_moments = formula(monkeypatch, lambda: adam_run(opt_class, dtype, **kwargs))
    assert len(moments) == len(ref_moments) == (9 if kwargs.get("amsgrad") else 6)
    for a, b in zip(params + moments, ref_params + ref_moments):
        assert a.dtype == dtype
        np.testing.assert_array_equal(a, b)
    start = adam_run(opt_class, dtype, steps=0)[0]
    assert all(np.abs(a - s).max() > 1e-3 for a, s in zip(params, start))  # the steps moved every parameter


def test_adam_step_against_numpy_by_hand():
    """One step of the kernel against the formula written out in float64, to float32 rounding."""
    rs = np.random.RandomState(5)
    p, g, m, v = (rs.standard_normal(2051).astype(np.float32) for _ in range(4))
    v = np.abs(v)
    p0, m0, v0 = p.copy(), m.copy(), v.copy()
    assert host_math.adam_step(p, g, m, v, None, decay=0.99, beta1=0.9, beta2=0.999, epsilon=1e-6, step=0.01)
    f = [x.astype(np.float64) for x in (p0, g, m0, v0)]
    m64 = 0.9 * f[2] + 0.1 * f[1]
    v64 = 0.999 * f[3] + 0.001 * f[1] ** 2
    np.testing.assert_allclose(m, m64, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(v, v64, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(p, f[0] * 0.99 - 0.01 * m64 / (np.sqrt(v64) + 1e-6), rtol=1e-5, atol=1e-6)


def test_kernels_decline_what_they_do_not_serve():
    half = np.linspace(-3, 3, 8).astype(np.float16)
    assert host_math.sigmoid(half) is None and host_math.sigmoid_grad(half, half) is None
    assert host_math.sigmoid(np.ones(3, np.float32).view(np.recarray)) is None
    assert host_math.sigmoid_grad(np.ones(3, np.float32), np.ones(3)) is None  # mixed dtypes
    assert host_math.sigmoid_grad(np.ones((1, 3), np.float32), np.ones((2, 3), np.float32)) is None
    np.testing.assert_allclose(math_ops.sigmoid_array(np, half), 1 / (1 + np.exp(-half.astype(np.float64))),
                               rtol=1e-6)  # the formula serves float16, in float32

    def arrays(n=6):
        return [np.ones(n, np.float32) for _ in range(4)]

    scalars = dict(decay=1.0, beta1=0.9, beta2=0.999, epsilon=1e-8, step=0.1)
    p, g, m, v = arrays()
    read_only = np.ones(6, np.float32)
    read_only.flags.writeable = False
    assert host_math.adam_step(read_only, g, m, v, None, **scalars) is None
    assert host_math.adam_step(np.ones(12, np.float32)[::2], g, m, v, None, **scalars) is None  # in place: strided
    assert host_math.adam_step(p, g.astype(np.float16), m, v, None, **scalars) is None
    assert host_math.adam_step(p, g, m, np.ones(5, np.float32), None, **scalars) is None
    np.testing.assert_array_equal(p, np.ones(6, np.float32))  # nothing written by a declined call
    assert host_math.adam_step(p, g[::-1], m, v, None, **scalars)  # a strided gradient is read as a copy
