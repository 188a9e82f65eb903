"""maximum/minimum, // and %, equal/allclose/isnan..., and the reductions cumsum, prod, var, std,
logsumexp, amax/amin: values against NumPy or paddle 3.3.1 (said where), gradients against finite
differences."""
import numpy as np
import pytest
import scipy.special

import pycoll
from test_gradcheck import _rand, gradcheck

A = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], dtype=np.float32)
T = pycoll.to_tensor(A)
C = np.array([1.0, 0.0, 3.5], dtype=np.float32)
D = np.array([2.0, -2.0, 2.0], dtype=np.float32)
ODD = np.array([1.0, np.nan, np.inf, -np.inf], dtype=np.float32)


# ---- elementwise -------------------------------------------------------------------------

@pytest.mark.parametrize("op, expected", [
    (lambda t: pycoll.maximum(t, pycoll.to_tensor(C)), np.maximum(A, C)),
    (lambda t: pycoll.minimum(t, pycoll.to_tensor(C)), np.minimum(A, C)),
    (lambda t: t.maximum(pycoll.zeros([2, 1])), np.maximum(A, 0)),
    (lambda t: t // 0.7, np.floor_divide(A, np.float32(0.7))),
    (lambda t: 7.0 // t, np.floor_divide(np.float32(7.0), A)),
    (lambda t: t % 0.7, np.remainder(A, np.float32(0.7))),
    (lambda t: 5.0 % t, np.remainder(np.float32(5.0), A)),
    (lambda t: pycoll.floor_divide(t, t.abs() + 1), np.floor_divide(A, np.abs(A) + 1)),
    (lambda t: pycoll.remainder(t, pycoll.to_tensor(D)), np.remainder(A, D)),
    (lambda t: t.mod(2.0), np.remainder(A, 2.0)),
    (lambda t: pycoll.equal(t, 3.0), A == 3.0),
    (lambda t: t.equal(t), A == A),
    (lambda t: pycoll.isnan(pycoll.to_tensor(ODD)), np.isnan(ODD)),
    (lambda t: pycoll.isinf(pycoll.to_tensor(ODD)), np.isinf(ODD)),
    (lambda t: pycoll.to_tensor(ODD).isfinite(), np.isfinite(ODD)),
])
def test_elementwise_values_match_numpy(op, expected):
    out = op(T)
    expected = np.asarray(expected)
    assert out.dtype == expected.dtype
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


def test_floor_division_and_remainder_follow_paddle():
    # values from paddle 3.3.1: the sign of the divisor, rounding towards minus infinity
    assert (pycoll.to_tensor([-7, 7]) // 2).numpy().tolist() == [-4, 3]
    assert (pycoll.to_tensor([-7, 7]) % 3).numpy().tolist() == [2, 1]
    assert pycoll.remainder(pycoll.to_tensor([-7, 7]), pycoll.to_tensor([3, -3])).numpy().tolist() == [2, -2]
    assert (7 % pycoll.to_tensor([3, -3])).numpy().tolist() == [1, -2]
    assert (7.5 // pycoll.to_tensor([2.0, -2.0])).numpy().tolist() == [3.0, -4.0]
    assert (pycoll.to_tensor([-7.5, 7.5]) % 2).numpy().tolist() == [0.5, 1.5]
    r = pycoll.to_tensor([1, 2]) // 2.5
    assert r.dtype == np.float32 and r.numpy().tolist() == [0.0, 0.0]
    assert (pycoll.to_tensor([1, 2]) % 1.5).numpy().tolist() == [1.0, 0.5]
    assert pycoll.floor_mod is pycoll.mod is pycoll.remainder


def test_maximum_propagates_nan_and_ties_share_the_gradient():
    # paddle 3.3.1: maximum([nan, 1], [1, 2]) = [nan, 2]; at a tie each side gets half
    out = pycoll.maximum(pycoll.to_tensor([np.nan, 1.0]), pycoll.to_tensor([1.0, 2.0])).numpy()
    assert np.isnan(out[0]) and out[1] == 2.0
    x = pycoll.to_tensor([1.0, 2.0, 2.0], stop_gradient=False)
    y = pycoll.to_tensor([2.0, 2.0, 1.0], stop_gradient=False)
    pycoll.maximum(x, y).sum().backward()
    assert x.grad.numpy().tolist() == [0.0, 0.5, 1.0] and y.grad.numpy().tolist() == [1.0, 0.5, 0.0]
    x.clear_grad(), y.clear_grad()
    pycoll.minimum(x, y).sum().backward()
    assert x.grad.numpy().tolist() == [1.0, 0.5, 0.0] and y.grad.numpy().tolist() == [0.0, 0.5, 1.0]


def test_remainder_and_floor_divide_gradients_are_paddle_s():
    # paddle 3.3.1: d(x % y) = (1, -floor(x / y)); x // y has zero gradients
    x = pycoll.to_tensor([1.5, -2.5, 3.0], stop_gradient=False)
    y = pycoll.to_tensor([1.0, 2.0, -2.0], stop_gradient=False)
    pycoll.remainder(x, y).sum().backward()
    assert x.grad.numpy().tolist() == [1.0, 1.0, 1.0] and y.grad.numpy().tolist() == [-1.0, 2.0, 2.0]
    x.clear_grad(), y.clear_grad()
    (x // y).sum().backward()
    assert x.grad.numpy().tolist() == [0.0] * 3 and y.grad.numpy().tolist() == [0.0] * 3


def test_comparisons_take_no_gradient():
    x = pycoll.to_tensor([1.0, np.nan], stop_gradient=False)
    for out in (pycoll.equal(x, 1.0), pycoll.isnan(x), pycoll.isinf(x), pycoll.isfinite(x),
                pycoll.allclose(x, x)):
        assert out.stop_gradient and out.dtype == np.bool_


def test_negating_a_bool_tensor_keeps_its_values_as_paddle_s():
    # paddle 3.3.1: -to_tensor([True, False]) is [True, False] (NumPy refuses `-` on bools)
    flags = pycoll.to_tensor([True, False])
    for out in (-flags, pycoll.neg(flags)):
        assert out.dtype == np.bool_ and out.numpy().tolist() == [True, False]


def test_allclose_is_a_0d_bool_tensor():
    # paddle 3.3.1 returns a 0-d bool tensor
    close = pycoll.allclose(T, T + 1e-9)
    assert close.shape == [] and close.dtype == np.bool_ and bool(close)
    assert not bool(pycoll.allclose(T, T + 1e-3))
    assert bool(pycoll.allclose(T, T + 1e-3, atol=1e-2))
    nan = pycoll.to_tensor([np.nan])
    assert not bool(pycoll.allclose(nan, nan)) and bool(pycoll.allclose(nan, nan, equal_nan=True))
    assert bool(T.allclose(T))


def test_value_tests_of_integers():
    assert pycoll.isnan(pycoll.to_tensor([1])).numpy().tolist() == [False]  # paddle 3.3.1


# ---- reductions ----------------------------------------------------------------------------

@pytest.mark.parametrize("op, expected", [
    (lambda t: pycoll.cumsum(t), np.cumsum(A)),
    (lambda t: t.cumsum(axis=1), np.cumsum(A, axis=1)),
    (lambda t: pycoll.cumsum(t, axis=-2, dtype="float64"), np.cumsum(A, axis=0, dtype=np.float64)),
    (lambda t: pycoll.prod(t), np.prod(A)),
    (lambda t: t.prod(axis=[0], keepdim=True), np.prod(A, axis=0, keepdims=True)),
    (lambda t: pycoll.prod(t, axis=1, dtype="float64"), np.prod(A, axis=1, dtype=np.float64)),
    (lambda t: pycoll.var(t), np.var(A, ddof=1)),
    (lambda t: t.var(axis=0, keepdim=True), np.var(A, axis=0, ddof=1, keepdims=True)),
    (lambda t: pycoll.var(t, axis=1, unbiased=False), np.var(A, axis=1)),
    (lambda t: pycoll.var(t, correction=0), np.var(A)),
    (lambda t: pycoll.std(t), np.std(A, ddof=1)),
    (lambda t: t.std(axis=1, unbiased=False), np.std(A, axis=1)),
    (lambda t: pycoll.logsumexp(t), np.log(np.exp(A).sum())),
    (lambda t: t.logsumexp(axis=1, keepdim=True), np.log(np.exp(A).sum(1, keepdims=True))),
    (lambda t: pycoll.amax(t, axis=[0, 1]), A.max()),
    (lambda t: t.amin(axis=0), A.min(0)),
])
def test_reduction_values_match_numpy(op, expected):
    out = op(T)
    expected = np.asarray(expected)
    assert out.shape == list(expected.shape)
    assert out.dtype == expected.dtype
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-5)


def test_integer_reductions_follow_paddle():
    # dtypes and values from paddle 3.3.1
    i32 = pycoll.to_tensor([1, 2], dtype="int32")
    assert pycoll.cumsum(i32).dtype == np.int64 and pycoll.cumsum(i32).numpy().tolist() == [1, 3]
    assert pycoll.prod(i32).dtype == np.int32 and pycoll.prod(i32).item() == 2
    v = pycoll.var(pycoll.to_tensor([1, 2, 4]))  # 7/3 truncated
    assert v.dtype == np.int64 and v.item() == 2
    s = pycoll.std(pycoll.to_tensor([1, 2, 4]))  # the root of the truncated var
    assert s.dtype == np.float32 and s.item() == pytest.approx(np.sqrt(2.0))
    lse = pycoll.logsumexp(pycoll.to_tensor([1, 2]))
    assert lse.dtype == np.float32 and lse.item() == pytest.approx(2.3132617, rel=1e-6)


def test_var_of_one_element_is_nan():
    assert np.isnan(pycoll.var(pycoll.to_tensor([1.0])).item())  # paddle 3.3.1: nan


def test_logsumexp_is_stable_and_handles_infinities():
    big = pycoll.to_tensor([1000.0, 1000.0])
    assert pycoll.logsumexp(big).item() == pytest.approx(1000.0 + np.log(2.0))
    assert pycoll.logsumexp(pycoll.to_tensor([-np.inf, -np.inf])).item() == -np.inf


def test_prod_gradient_with_zeros():
    # the product of the others, also where x has a zero (paddle 3.3.1 gives nan there instead)
    x = pycoll.to_tensor([2.0, 0.0, 3.0], stop_gradient=False)
    pycoll.prod(x).backward()
    assert x.grad.numpy().tolist() == [0.0, 6.0, 0.0]


def test_amax_ties_share_the_gradient():
    # paddle 3.3.1: max and amax both split the gradient among ties
    x = pycoll.to_tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], stop_gradient=False)
    pycoll.amax(x, axis=1).sum().backward()
    assert x.grad.numpy().tolist() == [[0.0, 0.5, 0.5], [0.5, 0.5, 0.0]]


GRAD_CASES = {
    "maximum": (lambda x, y: pycoll.maximum(x, y), [_rand(3, 4), _rand(4)]),
    "minimum": (lambda x, y: pycoll.minimum(x, y), [_rand(2, 3), _rand(2, 3)]),
    "remainder": (lambda x, y: x % y, [_rand(3, 4), _rand(4, low=0.5)]),
    "cumsum_all": (lambda x: pycoll.cumsum(x), [_rand(3, 4)]),
    "cumsum_axis": (lambda x: pycoll.cumsum(x, axis=0), [_rand(3, 4)]),
    "prod_all": (lambda x: pycoll.prod(x), [_rand(2, 3)]),
    "prod_axes_keepdim": (lambda x: pycoll.prod(x, axis=[0, 2], keepdim=True), [_rand(2, 3, 2)]),
    "prod_with_zero": (lambda x: pycoll.prod(x, axis=1), [np.array([[1.5, 0.0, 2.0], [0.5, -1.0, 3.0]])]),
    "var_all": (lambda x: pycoll.var(x), [_rand(3, 4)]),
    "var_axis_biased": (lambda x: pycoll.var(x, axis=1, unbiased=False), [_rand(3, 4)]),
    "std_all": (lambda x: pycoll.std(x), [_rand(3, 4)]),
    "std_axis_keepdim": (lambda x: pycoll.std(x, axis=0, keepdim=True), [_rand(3, 4)]),
    "logsumexp_all": (lambda x: pycoll.logsumexp(x), [_rand(3, 4)]),
    "logsumexp_axis": (lambda x: pycoll.logsumexp(x, axis=-1), [_rand(2, 3, 4)]),
    "amax_axis": (lambda x: pycoll.amax(x, axis=1), [_rand(3, 4)]),
    "amin_all": (lambda x: pycoll.amin(x), [_rand(3, 4)]),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradient(name):
    fn, inputs = GRAD_CASES[name]
    gradcheck(fn, [a.copy() for a in inputs])


@pytest.mark.parametrize("fn, want", [("floor", [np.nan, np.nan, 0.0]), ("ceil", [np.nan, np.nan, 0.0]),
                                      ("sign", [np.nan, np.nan, 0.0]), ("round", [np.nan, np.nan, 0.0]),
                                      ("neg", [-np.inf, np.nan, -2.0]), ("frac", [np.inf, np.nan, 2.0])])
def test_constant_slope_gradients_are_g_times_the_slope_as_paddle_s(fn, want):
    """paddle 3.3.1 (measured 2026-11-27): floor's gradient of g = [inf, nan, 2] is [nan, nan, 0]
    (0 * g), neg's is -g; float32 stays float32."""
    x = pycoll.to_tensor(np.array([1.5, -2.5, 3.0], dtype="float32"), stop_gradient=False)
    g = pycoll.to_tensor(np.array([np.inf, np.nan, 2.0], dtype="float32"))
    (gx,) = pycoll.grad([getattr(pycoll, fn)(x)], [x], [g])
    assert gx.dtype == pycoll.float32
    np.testing.assert_array_equal(gx.numpy(), np.array(want, dtype="float32"))


@pytest.mark.parametrize("fn, slope", [
    (pycoll.nn.functional.sigmoid, lambda v: 1 / (1 + np.exp(-v)) * (1 - 1 / (1 + np.exp(-v)))),
    (pycoll.nn.functional.log_sigmoid, lambda v: 1 - 1 / (1 + np.exp(-v))),
    (lambda t: pycoll.nn.functional.binary_cross_entropy_with_logits(t, pycoll.to_tensor(np.float32(1.0))),
     lambda v: 1 / (1 + np.exp(-v)) - 1),
    (pycoll.erf, lambda v: 2 / np.sqrt(np.pi) * np.exp(-v * v)),
    (pycoll.erfinv, lambda v: np.sqrt(np.pi) / 2 * np.exp(scipy.special.erfinv(v) ** 2)),
])
def test_0d_tensors_keep_their_shape_through_forward_and_backward(fn, slope):
    # paddle 3.3.1: output and gradient of a 0-d input are 0-d (NumPy gives a 0-d array's
    # arithmetic as a scalar, which broke these backward passes, or made the gradient [1])
    x = pycoll.to_tensor(np.float64(0.3), stop_gradient=False)
    out = fn(x)
    out.backward()
    assert out.shape == [] and x.grad.shape == []
    np.testing.assert_allclose(float(x.grad), slope(0.3), rtol=1e-6)


def test_rrelu_draws_a_slope_for_a_0d_tensor():
    x = pycoll.to_tensor(np.float32(-1.0), stop_gradient=False)
    out = pycoll.nn.functional.rrelu(x, lower=0.1, upper=0.3, training=True)
    out.backward()
    assert out.shape == [] and 0.1 <= -float(out) <= 0.3 and float(x.grad) == -float(out)
