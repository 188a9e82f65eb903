"""paddle's other names and constants (cat, concatenate, softmax, eq..le, pi, e, inf, nan,
newaxis), finfo / iinfo and Tensor.to; expected values measured on paddle 3.3.1 (CPU)."""
import math

import numpy as np
import pytest

import pycoll

X = [[1.0, 2.0, 3.0], [1.0, 0.0, -1.0]]


def _softmax(a, axis):
    e = np.exp(a - a.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_cat_concatenate_comparisons_and_constants():
    x = pycoll.to_tensor(X)
    assert pycoll.cat([x, x], 1).shape == [2, 6] and pycoll.concatenate([x, x]).shape == [4, 3]
    out = pycoll.zeros([4, 3])
    assert pycoll.cat([x, x], out=out) is out and out.numpy().tolist() == X + X
    y = pycoll.to_tensor([1.0, 0.0, 3.0])
    for fn, op in [(pycoll.eq, np.equal), (pycoll.ne, np.not_equal), (pycoll.gt, np.greater),
                   (pycoll.ge, np.greater_equal), (pycoll.lt, np.less), (pycoll.le, np.less_equal)]:
        r = fn(x, y)
        assert r.dtype == np.bool_ and r.numpy().tolist() == op(np.array(X), [1.0, 0.0, 3.0]).tolist()
    assert pycoll.eq(x, y).numpy().tolist() == [[True, False, True], [True, True, False]]  # paddle's
    assert (pycoll.pi, pycoll.e) == (math.pi, math.e) and pycoll.inf == math.inf and math.isnan(pycoll.nan)
    assert pycoll.newaxis is None and x[:, pycoll.newaxis].shape == [2, 1, 3]


def test_softmax_picks_paddles_dim_and_has_a_gradient():
    a = np.array(X, np.float32)
    x = pycoll.to_tensor(a, stop_gradient=False)
    s = pycoll.softmax(x)  # 2-D without dim: along dim 1 (paddle's rule)
    np.testing.assert_allclose(s.numpy(), _softmax(a, 1), rtol=1e-6)
    np.testing.assert_allclose(s.numpy()[0], [0.09003057, 0.24472848, 0.66524094], rtol=1e-6)  # paddle's
    np.testing.assert_allclose(x.softmax(0).numpy(), _softmax(a, 0), rtol=1e-6)
    np.testing.assert_allclose(pycoll.softmax(pycoll.to_tensor([1.0, 2.0])).numpy(), [0.26894142, 0.7310586], rtol=1e-6)
    assert pycoll.softmax(x, dim=-1, dtype="float64").dtype == np.float64
    (s * pycoll.to_tensor([[1.0, 0, 0], [0, 0, 0]])).sum().backward()
    p = _softmax(a, 1)[0]
    np.testing.assert_allclose(x.grad.numpy()[0], p[0] * (np.eye(3)[0] - p), rtol=1e-5)
    with pytest.raises(TypeError, match="input"):
        pycoll.softmax([1.0, 2.0])


def test_finfo_and_iinfo_as_paddle_reports_them():
    f = pycoll.finfo(pycoll.float32)
    assert (f.min, f.max, f.eps, f.tiny, f.bits, f.dtype) == (-3.4028234663852886e+38, 3.4028234663852886e+38,
                                                               1.1920928955078125e-07, 1.1754943508222875e-38, 32,
                                                               "float32")
    assert f.resolution == 1e-06 and f.smallest_normal == f.tiny
    b = pycoll.finfo(pycoll.bfloat16)  # paddle: max 3.3895313892515355e+38, eps 0.0078125, resolution 0.01
    assert (b.max, b.eps, b.bits, b.dtype, b.resolution) == (3.3895313892515355e+38, 0.0078125, 16, "bfloat16", 0.01)
    h = pycoll.finfo("float16")
    assert (h.min, h.eps, h.tiny, h.resolution) == (-65504.0, 0.0009765625, 6.103515625e-05, 0.001)
    assert pycoll.finfo(np.float64).eps == 2.220446049250313e-16
    assert (pycoll.finfo("complex64").bits, pycoll.finfo("complex64").dtype) == (32, "float32")
    i = pycoll.iinfo(pycoll.int32)
    assert (i.min, i.max, i.bits, i.dtype) == (-2147483648, 2147483647, 32, "int32")
    assert (pycoll.iinfo("uint8").min, pycoll.iinfo("uint8").max) == (0, 255)
    with pytest.raises(ValueError, match="finfo: dtype"):
        pycoll.finfo("int32")
    with pytest.raises(ValueError, match="iinfo: dtype"):
        pycoll.iinfo(pycoll.float32)


def test_tensor_to_dtype_device_or_other():
    y = pycoll.to_tensor([1, 2, 3])
    assert y.to("float32").dtype == np.float32 and y.to(pycoll.float64).dtype == np.float64
    assert y.to("cpu") is y and y.to(pycoll.CPUPlace()) is y
    assert y.to("cpu", "float64").dtype == np.float64 and y.to(dtype="int32").dtype == np.int32
    x = pycoll.to_tensor(X)
    assert y.to(x).dtype == np.float32 and y.to(other=x).dtype == np.float32
    assert y.to(np.dtype("float16")).dtype == np.float16 and y.to(device="cpu", dtype="float32").place == "cpu"
    z = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    w = z.to("float64")
    (w * w).sum().backward()
    assert w.stop_gradient is False and z.grad.numpy().tolist() == [2.0, 4.0]  # paddle's
    with pytest.raises(TypeError, match="to\\(\\)"):
        y.to()
    with pytest.raises(TypeError, match="foo"):
        y.to(foo=1)
    with pytest.raises(ValueError, match="place"):
        y.to("bogus")
