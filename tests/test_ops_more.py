"""The elementwise maths of one and two tensors (pycoll.unary_ops, pycoll.binary_ops) and the
comparisons, logical and bitwise ops (pycoll.logic_ops): values against NumPy / the math module or
numbers measured on paddle 3.3.1 (said where), dtypes as paddle gives them, gradients against
finite differences."""
import math

import numpy as np
import pytest

import pycoll
from test_gradcheck import gradcheck

X = np.array([[0.3, -0.7, 1.2], [-0.05, 0.9, -1.6]])
UNIT = np.array([[0.3, -0.7, 0.2], [-0.05, 0.9, -0.6]])  # inside (-1, 1)
POS = np.array([[0.3, 1.7, 2.2], [0.05, 0.9, 4.6]])


@pytest.mark.parametrize("name, ref, data", [
    ("sin", np.sin, X), ("cos", np.cos, X), ("tan", np.tan, X), ("asin", np.arcsin, UNIT),
    ("acos", np.arccos, UNIT), ("atan", np.arctan, X), ("sinh", np.sinh, X), ("cosh", np.cosh, X),
    ("asinh", np.arcsinh, X), ("acosh", np.arccosh, POS + 1), ("atanh", np.arctanh, UNIT),
    ("log1p", np.log1p, POS), ("log2", np.log2, POS), ("log10", np.log10, POS), ("expm1", np.expm1, X),
    ("rsqrt", lambda a: 1 / np.sqrt(a), POS), ("reciprocal", lambda a: 1 / a, POS),
    ("deg2rad", np.deg2rad, X), ("rad2deg", np.rad2deg, X),
    ("erf", np.vectorize(math.erf), X), ("lgamma", np.vectorize(math.lgamma), POS),
    ("logit", lambda a: np.log(a / (1 - a)), UNIT * 0.5 + 0.5),
    ("neg", np.negative, X), ("frac", lambda a: a - np.trunc(a), X),
])
def test_unary_values_and_gradients(name, ref, data):
    fn = getattr(pycoll, name)
    out = fn(pycoll.to_tensor(data.astype(np.float32)))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), ref(data), rtol=2e-6, atol=2e-7)
    np.testing.assert_allclose(getattr(pycoll.to_tensor(data), name)().numpy(), ref(data), rtol=1e-7, atol=1e-12)
    gradcheck(fn, [data])


def test_special_functions_match_paddle():
    # values and digamma's gradient (trigamma) measured on paddle 3.3.1, float64
    x = pycoll.to_tensor([-0.9, -0.3, 0.0, 0.5, 0.99], dtype="float64")
    np.testing.assert_allclose(pycoll.erfinv(x).numpy(), [-1.1630871536766743, -0.27246271472675443, 0.0,
                                                          0.4769362762044699, 1.8213863677184496], rtol=1e-13)
    x = pycoll.to_tensor([-2.5, 0.1, 1.0, 3.7, 12.0], dtype="float64", stop_gradient=False)
    y = pycoll.digamma(x)
    np.testing.assert_allclose(y.numpy(), [1.1031566406452433, -10.423754940411076, -0.5772156649015323,
                                           1.167153539361511, 2.4426616799758123], rtol=1e-11)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [9.539246644989124, 101.43329915079275, 1.6449340668482266,
                                                0.31003785767003833, 0.0869018728717684], rtol=1e-10)
    # the edges, as paddle's: erfinv(+-1) = +-inf, lgamma at poles inf, digamma -inf at 0 and NaN below
    assert pycoll.erfinv(pycoll.to_tensor([1.0, -1.0])).numpy().tolist() == [np.inf, -np.inf]
    assert pycoll.lgamma(pycoll.to_tensor([0.0, -2.0])).numpy().tolist() == [np.inf, np.inf]
    d = pycoll.digamma(pycoll.to_tensor([0.0, -1.0])).numpy()
    assert d[0] == -np.inf and np.isnan(d[1])
    # erfinv's gradient: sqrt(pi)/2 exp(erfinv(x)^2)
    x = pycoll.to_tensor([0.3, -0.6], dtype="float64", stop_gradient=False)
    y = pycoll.erfinv(x)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), math.sqrt(math.pi) / 2 * np.exp(y.numpy() ** 2), rtol=1e-12)
    np.testing.assert_allclose(pycoll.erf(y).numpy(), [0.3, -0.6], rtol=1e-14)


def test_rounding_keeps_integers_and_has_zero_gradient():
    # paddle 3.3.1: round halves to even; ceil/floor/round/trunc/sign/neg/frac keep int64
    r = pycoll.round(pycoll.to_tensor([0.5, 1.5, 2.5, -0.5, -1.7]))
    assert r.numpy().tolist() == [0.0, 2.0, 2.0, -0.0, -2.0]
    np.testing.assert_allclose(pycoll.round(pycoll.to_tensor([1.234, 5.678]), decimals=1).numpy(), [1.2, 5.7])
    ints = pycoll.to_tensor([3, -2, 0])
    for name in ("ceil", "floor", "round", "trunc", "sign", "neg", "frac", "sgn", "negative"):
        out = getattr(pycoll, name)(ints)
        assert out.dtype == np.int64, name
    assert pycoll.sign(ints).numpy().tolist() == [1, -1, 0] and pycoll.frac(ints).numpy().tolist() == [0, 0, 0]
    for name in ("sin", "erf", "reciprocal", "rsqrt", "log1p", "lgamma", "logit", "deg2rad"):
        assert getattr(pycoll, name)(ints).dtype == np.float32, name
    f = pycoll.to_tensor([1.3, -2.7])
    assert pycoll.ceil(f).numpy().tolist() == [2.0, -2.0] and pycoll.floor(f).numpy().tolist() == [1.0, -3.0]
    assert pycoll.trunc(f).numpy().tolist() == [1.0, -2.0]
    for name in ("ceil", "floor", "round", "trunc", "sign"):
        x = pycoll.to_tensor([1.3, -2.7], stop_gradient=False)
        getattr(pycoll, name)(x).sum().backward()
        assert x.grad.numpy().tolist() == [0.0, 0.0], name


def test_logit_with_eps_and_nan_to_num_follow_paddle():
    # paddle 3.3.1: logit(eps=0.1) clips to [0.1, 0.9] and zeroes the gradient outside
    x = pycoll.to_tensor([0.05, 0.5, 0.97], stop_gradient=False)
    y = pycoll.logit(x, eps=0.1)
    np.testing.assert_allclose(y.numpy(), [-2.1972246, 0.0, 2.1972244], rtol=1e-6)
    y.sum().backward()
    assert x.grad.numpy().tolist() == [0.0, 4.0, 0.0]
    assert np.isnan(pycoll.logit(pycoll.to_tensor([1.2])).numpy()[0])
    x = pycoll.to_tensor([np.nan, np.inf, -np.inf, 1.0], stop_gradient=False)
    y = pycoll.nan_to_num(x)
    big = np.finfo(np.float32).max
    assert y.numpy().tolist() == [0.0, big, -big, 1.0]
    y.sum().backward()
    assert x.grad.numpy().tolist() == [0.0, 0.0, 0.0, 1.0]
    assert pycoll.nan_to_num(pycoll.to_tensor([np.nan, np.inf]), nan=1.0, posinf=9.0).numpy().tolist() == [1.0, 9.0]


def test_in_place_forms_write_the_tensor():
    x = pycoll.to_tensor([0.3, 0.5])
    array = x.array
    assert x.sin_() is x and x.array is array
    np.testing.assert_allclose(array, np.sin([0.3, 0.5]).astype(np.float32))
    pycoll.log1p_(x)
    np.testing.assert_allclose(x.numpy(), np.log1p(np.sin([0.3, 0.5])).astype(np.float32), rtol=1e-6)
    y = pycoll.to_tensor([1.7, -1.2])
    y.floor_().neg_()
    assert y.numpy().tolist() == [-1.0, 2.0]
    z = pycoll.to_tensor([0.5, 1.0], stop_gradient=False)
    out = z * 1
    out.erf_()  # an op's output may change in place; the gradient flows through erf
    out.sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), 2 / math.sqrt(math.pi) * np.exp(-np.array([0.25, 1.0])), rtol=1e-6)
    w = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    with pytest.raises(ValueError, match="in place"):
        w.sin_()


# ---- two tensors ------------------------------------------------------------------------

A = np.array([[0.3, -0.7, 1.2], [-0.05, 0.9, -1.6]])
B = np.array([[1.1, 0.4, -0.8], [0.6, -0.3, 2.0]])


@pytest.mark.parametrize("name, ref", [
    ("atan2", np.arctan2), ("hypot", np.hypot), ("logaddexp", np.logaddexp), ("fmax", np.fmax),
    ("fmin", np.fmin),
])
def test_binary_values_and_gradients(name, ref):
    fn = getattr(pycoll, name)
    out = fn(pycoll.to_tensor(A.astype(np.float32)), pycoll.to_tensor(B.astype(np.float32)))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.numpy(), ref(A, B), rtol=1e-6)
    gradcheck(fn, [A, B])
    gradcheck(fn, [A, B[0]])  # broadcast


def test_binary_edges_follow_paddle():
    # paddle 3.3.1: fmax/fmin skip NaN; a tie gives x the whole gradient; heaviside's y gets it at x == 0
    x = pycoll.to_tensor([1.0, np.nan, 3.0, 2.0], stop_gradient=False)
    y = pycoll.to_tensor([2.0, 1.0, np.nan, 2.0], stop_gradient=False)
    out = pycoll.fmax(x, y)
    assert out.numpy().tolist() == [2.0, 1.0, 3.0, 2.0]
    out.sum().backward()
    assert x.grad.numpy().tolist() == [0.0, 0.0, 1.0, 1.0] and y.grad.numpy().tolist() == [1.0, 1.0, 0.0, 0.0]
    x = pycoll.to_tensor([-1.0, 0.0, 3.0], stop_gradient=False)
    y = pycoll.to_tensor([2.0, 0.5, 7.0], stop_gradient=False)
    out = pycoll.heaviside(x, y)
    assert out.numpy().tolist() == [0.0, 0.5, 1.0]
    out.sum().backward()
    assert x.grad.numpy().tolist() == [0.0] * 3 and y.grad.numpy().tolist() == [0.0, 1.0, 0.0]
    ints = pycoll.to_tensor([1, 2])
    assert pycoll.atan2(ints, ints).dtype == np.float64 and pycoll.hypot(ints, ints).dtype == np.float32
    assert pycoll.fmax(ints, pycoll.to_tensor([2, 1])).dtype == np.int64
    assert pycoll.clamp(pycoll.to_tensor([-2.0, 0.5, 3.0]), -1.0, 1.0).numpy().tolist() == [-1.0, 0.5, 1.0]


def test_lerp():
    # paddle 3.3.1: lerp([1, 2], [3, 5], [0.2, 0.7]) = [1.4, 4.1]; x gets 1 - w, y gets w
    x = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    y = pycoll.to_tensor([3.0, 5.0], stop_gradient=False)
    out = pycoll.lerp(x, y, pycoll.to_tensor([0.2, 0.7]))
    np.testing.assert_allclose(out.numpy(), [1.4, 4.1], rtol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.8, 0.3], rtol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), [0.2, 0.7], rtol=1e-6)
    assert pycoll.lerp(x, y, 0.5).numpy().tolist() == [2.0, 3.5]
    gradcheck(lambda a, b, w: pycoll.lerp(a, b, w), [A, B, np.abs(B) / 3])
    gradcheck(lambda a, b: a.lerp(b, 0.25), [A, B])


# ---- comparisons, logic, bits ------------------------------------------------------------

def test_comparisons_and_logic():
    x, y = pycoll.to_tensor([1, 2, 3]), pycoll.to_tensor([2, 2, 1])
    for name, ref in [("greater_than", np.greater), ("greater_equal", np.greater_equal), ("less_than", np.less),
                      ("less_equal", np.less_equal), ("not_equal", np.not_equal)]:
        out = getattr(pycoll, name)(x, y)
        assert out.dtype == np.bool_ and out.numpy().tolist() == ref([1, 2, 3], [2, 2, 1]).tolist(), name
        assert getattr(x, name)(y).numpy().tolist() == out.numpy().tolist()
    with pytest.raises(TypeError, match="int64"):  # paddle refuses int with float tensors
        pycoll.greater_than(x, pycoll.to_tensor([1.0, 2.0, 3.0]))
    # paddle 3.3.1: the logical ops read any dtype as truth values
    f = pycoll.to_tensor([0.0, 2.0, -1.0])
    g = pycoll.to_tensor([3, 0, 1])
    assert pycoll.logical_and(f, g).numpy().tolist() == [False, False, True]
    assert pycoll.logical_or(f, g).numpy().tolist() == [True, True, True]
    assert pycoll.logical_xor(f, g).numpy().tolist() == [True, True, False]
    assert pycoll.logical_not(g).numpy().tolist() == [False, True, False]
    assert pycoll.bitwise_and(x, y).numpy().tolist() == [0, 2, 1]
    assert pycoll.bitwise_or(x, y).numpy().tolist() == [3, 2, 3]
    assert pycoll.bitwise_xor(x, y).numpy().tolist() == [3, 0, 2]
    assert pycoll.bitwise_not(x).numpy().tolist() == [-2, -3, -4]
    assert pycoll.bitwise_not(pycoll.to_tensor([True, False])).numpy().tolist() == [False, True]
    with pytest.raises(TypeError, match="bool or integer"):
        pycoll.bitwise_and(f, f)


def test_whole_tensor_tests():
    f = pycoll.to_tensor([1.0, 2.0, 3.0])
    assert pycoll.isclose(f, f + 1e-6).numpy().tolist() == [True] * 3
    assert pycoll.isclose(f, f + 0.1).numpy().tolist() == [False] * 3
    nan = pycoll.to_tensor([np.nan])
    assert not pycoll.isclose(nan, nan).item() and pycoll.isclose(nan, nan, equal_nan=True).item()
    assert pycoll.equal_all(f, f).item() is True and pycoll.equal_all(f, f[:2]).item() is False
    assert f.equal_all(f + 1).item() is False and f.equal_all(f).shape == []
    assert pycoll.is_empty(pycoll.zeros([0, 3])).item() and not f.is_empty().item()
    assert pycoll.is_floating_point(f) and not pycoll.is_floating_point(pycoll.to_tensor([1]))
    assert pycoll.is_integer(pycoll.to_tensor([1])) and not pycoll.is_integer(pycoll.to_tensor([True]))
    assert not pycoll.is_complex(f) and pycoll.is_complex(pycoll.to_tensor(np.array([1j])))
    with pytest.raises(TypeError, match="x must be a Tensor"):
        pycoll.is_integer([1, 2])
