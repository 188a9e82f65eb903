"""copysign, signbit, sinc, gcd, lcm, polygamma, gammaln, stanh, unflatten, vander, renorm and
cumulative_trapezoid (pycoll.special_ops): values, dtypes and gradients. Numbers marked "paddle"
were measured on paddle 3.3.1 (CPU) with the same inputs; the rest are NumPy/math by hand."""
import math

import numpy as np
import pytest

import pycoll


def t(values, dtype="float32", grad=False):
    return pycoll.to_tensor(values, dtype=dtype, stop_gradient=not grad)


def test_copysign_signbit():
    x, y = t([1.5, -2.0, 0.0, -0.0, 3.0], grad=True), t([-1.0, 2.0, -1.0, 1.0, -0.0], grad=True)
    z = pycoll.copysign(x, y)
    z.sum().backward()
    np.testing.assert_array_equal(z.numpy(), [-1.5, 2.0, -0.0, 0.0, -3.0])
    assert np.signbit(z.numpy()).tolist() == [True, False, True, False, True]
    np.testing.assert_array_equal(x.grad.numpy(), [-1, -1, 0, 0, -1])  # paddle
    np.testing.assert_array_equal(y.grad.numpy(), [0, 0, 0, 0, 0])  # paddle
    ints = pycoll.to_tensor([1, -2, 3], dtype="int32").copysign(pycoll.to_tensor([-1, 1, -1], dtype="int32"))
    assert ints.dtype == pycoll.int32 and ints.tolist() == [-1, 2, -3]
    assert pycoll.copysign(t([2.0, -3.0]), -1.0).tolist() == [-2.0, -3.0]
    assert pycoll.signbit(t([1.0, -0.0, -2.0, 0.0])).tolist() == [False, True, True, False]
    assert pycoll.to_tensor([1, -2, 0]).signbit().tolist() == [False, True, False]


def test_sinc_stanh():
    x = t([0.0, 0.5, -1.5, 2.0], grad=True)
    z = pycoll.sinc(x)
    z.sum().backward()
    np.testing.assert_allclose(z.numpy(), [1.0, 0.6366197466850281, -0.21220658719539642, 0.0], atol=1e-7)  # paddle
    np.testing.assert_allclose(x.grad.numpy(), [0.0, -1.2732396125793457, -0.14147107303142548, 0.4999999403953552],
                               rtol=1e-6)  # paddle
    assert pycoll.sinc(t([0.25], "float64")).dtype == pycoll.float64
    x = t([0.5, -1.0, 2.0], grad=True)
    z = pycoll.stanh(x, 0.5, 2.0)
    z.sum().backward()
    np.testing.assert_allclose(z.numpy(), [0.48983731865882874, -0.9242343306541443, 1.5231883525848389], rtol=1e-6)  # paddle
    np.testing.assert_allclose(x.grad.numpy(), [0.9400148391723633, 0.7864477038383484, 0.41997432708740234],
                               rtol=1e-6)  # paddle
    defaults = pycoll.to_tensor([1, 2]).stanh()
    assert defaults.dtype == pycoll.float32
    np.testing.assert_allclose(defaults.numpy(), 1.7159 * np.tanh(0.67 * np.array([1.0, 2.0])), rtol=1e-6)


def test_gcd_lcm():
    a, b = pycoll.to_tensor([12, -18, 0, 7]), pycoll.to_tensor([8, 12, 0, -21])
    assert pycoll.gcd(a, b).tolist() == [4, 6, 0, 7]
    assert pycoll.lcm(a, pycoll.to_tensor([8, 12, 5, -21])).tolist() == [24, 36, 0, 21]
    g = pycoll.to_tensor([[12], [6]], dtype="int32").gcd(pycoll.to_tensor([8, 9], dtype="int32"))
    assert g.dtype == pycoll.int32 and g.tolist() == [[4, 3], [2, 3]]
    with pytest.raises(TypeError, match="gcd: x and y must be integer"):
        pycoll.gcd(t([1.0]), t([2.0]))


def test_polygamma_gammaln():
    x = t([0.5, 1.0, 2.5, -1.5], "float64", grad=True)
    paddle_values = {  # paddle.polygamma(x, n) for n = 0..4 (n = 4: the gradient of n = 3)
        0: [-1.9635100260214227, -0.5772156649015323, 0.7031566406452434, 0.7031566406452434],
        1: [4.93480220054468, 1.6449340668482266, 0.4903577561002349, 9.379246644989124],
        2: [-16.828796644234316, -2.404113806319188, -0.23620405164172736, -0.23620405164172825],
        3: [97.40909103400242, 6.493939402266829, 0.2239058488172521, 194.59427621918758],
        4: [-771.474249826668, -24.886266123440894, -0.3137559995067314, -0.31375599950666083]}
    for n in range(4):
        z = pycoll.polygamma(x, n)
        (g,) = pycoll.grad(z.sum(), x)
        np.testing.assert_allclose(z.numpy(), paddle_values[n], rtol=1e-11)
        np.testing.assert_allclose(g.numpy(), paddle_values[n + 1], rtol=1e-11)
    far = pycoll.polygamma(t([0.0, -2.0, 1e-3, -2.7, 7.3, 30.0], "float64"), 3)
    np.testing.assert_allclose(far.numpy(), [math.inf, math.inf, 6000000000006.467, 768.9626351155221,
                                             0.00629315871319849, 7.786003664736127e-05], rtol=1e-11)  # paddle
    assert pycoll.polygamma(t([0.0]), 2).tolist() == [-math.inf]  # paddle
    assert pycoll.to_tensor([1, 2]).polygamma(1).dtype == pycoll.float32
    with pytest.raises(ValueError, match="n must be >= 0"):
        pycoll.polygamma(x, -1)
    with pytest.raises(TypeError, match="n must be an int"):
        pycoll.polygamma(x, 1.5)
    np.testing.assert_allclose(pycoll.gammaln(t([0.5, 3.0])).numpy(), [math.lgamma(0.5), math.log(2.0)], rtol=1e-6)


def test_unflatten_vander():
    x = pycoll.arange(24).reshape([2, 12])
    assert pycoll.unflatten(x, 1, [3, -1]).shape == [2, 3, 4]
    assert x.unflatten(-1, (2, 2, 3)).shape == [2, 2, 2, 3]
    assert pycoll.unflatten(x, 0, pycoll.to_tensor([1, 2])).shape == [1, 2, 12]
    np.testing.assert_array_equal(pycoll.unflatten(x, 1, [3, 4]).numpy(), np.arange(24).reshape(2, 3, 4))
    for bad in ([5, -1], [], [3, 3]):
        with pytest.raises(ValueError, match="unflatten: shape"):
            pycoll.unflatten(x, 1, bad)
    x = t([1.0, 2.0, 3.0], grad=True)
    v = pycoll.vander(x)
    np.testing.assert_array_equal(v.numpy(), np.vander([1.0, 2.0, 3.0]))
    (v * pycoll.arange(9, dtype="float32").reshape([3, 3])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 16.0, 43.0])  # paddle
    np.testing.assert_array_equal(x.vander(2, True).numpy(), [[1, 1], [1, 2], [1, 3]])
    assert pycoll.vander(x, 0).shape == [3, 0]
    ints = pycoll.vander(pycoll.to_tensor([1, 2, 3]))
    assert ints.dtype == pycoll.int64 and ints.tolist() == np.vander([1, 2, 3]).tolist()
    with pytest.raises(ValueError, match="vander: x must be a 1-D"):
        pycoll.vander(t([[1.0]]))
    with pytest.raises(ValueError, match="vander: n must be"):
        pycoll.vander(x, -1)


def test_renorm():
    x = t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [0.1, 0.2, 0.2]], grad=True)
    r = pycoll.renorm(x, 2.0, 0, 5.0)
    (r * pycoll.arange(9, dtype="float32").reshape([3, 3])).sum().backward()
    np.testing.assert_allclose(r.numpy(), [[1, 2, 3], [4 * 5 / math.sqrt(77), 5 * 5 / math.sqrt(77), 6 * 5 / math.sqrt(77)],
                                           [0.1, 0.2, 0.2]], rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), [[0.0, 1.0, 2.0], [-0.1258007287979126, -0.014800190925598145,
                                                0.09620022773742676], [6.0, 7.0, 8.0]], rtol=1e-4, atol=1e-6)  # paddle
    cols = [[0.5882353186607361, 0.8333333730697632, 0.97826087474823],
            [2.3529412746429443, 2.0833334922790527, 1.95652174949646],
            [0.05882353335618973, 0.0833333358168602, 0.06521739810705185]]  # paddle: renorm(x, 1.0, 1, 3.0)
    np.testing.assert_allclose(x.detach().renorm(1.0, -1, 3.0).numpy(), cols, rtol=1e-6)


def test_cumulative_trapezoid():
    y = t([[1.0, 2.0, 4.0], [3.0, 5.0, 6.0]], grad=True)
    np.testing.assert_allclose(pycoll.cumulative_trapezoid(y).numpy(), [[1.5, 4.5], [4.0, 9.5]])  # paddle
    np.testing.assert_allclose(y.cumulative_trapezoid(dx=0.5, axis=0).numpy(), [[1.0, 1.75, 2.5]])  # paddle
    c = pycoll.cumulative_trapezoid(y, x=t([0.0, 1.0, 3.0]))
    np.testing.assert_allclose(c.numpy(), [[1.5, 7.5], [4.0, 15.0]])  # paddle
    (c * t([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), [[1.5, 3.5, 2.0], [3.5, 7.5, 4.0]])  # paddle
    xs = t([[0.0, 1.0, 3.0], [0.0, 2.0, 3.0]])
    np.testing.assert_allclose(pycoll.cumulative_trapezoid(y.detach(), x=xs).numpy(), [[1.5, 7.5], [8.0, 13.5]])  # paddle
    with pytest.raises(TypeError, match="floating-point"):
        pycoll.cumulative_trapezoid(pycoll.to_tensor([1, 2, 4]))
    with pytest.raises(ValueError, match="give x or dx"):
        pycoll.cumulative_trapezoid(y, x=t([0.0, 1.0, 2.0]), dx=1.0)


def test_in_place_forms():
    x = t([1.0, -2.0])
    assert x.copysign_(t([-1.0, -1.0])) is x and x.tolist() == [-1.0, -2.0]
    n = pycoll.to_tensor([12, 18])
    pycoll.gcd_(n, pycoll.to_tensor([8, 12]))
    assert n.tolist() == [4, 6]
    s = t([0.0, 0.5])
    pycoll.sinc_(s)
    np.testing.assert_allclose(s.numpy(), [1.0, 2 / math.pi], rtol=1e-6)


def test_the_device_formulas_match_scipys_host_values():
    """CuPy arrays take array formulas where host arrays take SciPy: run on NumPy, the formulas
    agree with SciPy (float64) so that CPU and GPU runs agree."""
    import scipy.special

    from pycoll import _special, bessel_ops

    x = np.concatenate([np.linspace(-40, 40, 4001), [0.0, 1e-8, 29.99, 30.01, 700.0]])
    for order, reference in ((0, scipy.special.i0e), (1, scipy.special.i1e)):
        np.testing.assert_allclose(bessel_ops.scaled_series(order, x), reference(np.abs(x)), rtol=1e-13, atol=1e-300)
    p = np.linspace(-0.999999, 0.999999, 4001)
    np.testing.assert_allclose(_special.erfinv_formula(p), scipy.special.erfinv(p), rtol=1e-12)
    g = np.concatenate([np.linspace(-9.75, 60, 4001), [1e-5, 0.5, 1.0, 2.0, 170.5]])
    np.testing.assert_allclose(_special.lgamma_formula(g), scipy.special.gammaln(g), rtol=1e-12, atol=1e-13)
    assert _special.lgamma(np.array([-np.inf, np.inf, 0.0, -3.0])).tolist() == [np.inf] * 4  # paddle's


def test_probe_math_edges_follow_paddle():
    """nanmean of integers is float32; heaviside keeps integers and gives 0 at NaN; logcumsumexp
    gives no gradient (not NaN) at -inf; renorm scales by max_norm / norm (paddle 3.3.1's); var
    refuses unbiased beside a correction."""
    assert pycoll.nanmean(pycoll.to_tensor([[1, 2], [3, 6]]), axis=1).numpy().tolist() == [1.5, 4.5]
    h = pycoll.heaviside(pycoll.to_tensor([-1, 0, 3], "int32"), pycoll.to_tensor([5, 5, 5], "int32"))
    assert h.dtype == pycoll.int32 and h.tolist() == [0, 5, 1]  # paddle
    assert pycoll.heaviside(t([-1.0, 0.0, 3.0, np.nan]), t(0.5)).tolist() == [0.0, 0.5, 1.0, 0.0]  # paddle
    assert pycoll.heaviside(t([[-1.0], [0.0]]), t([0.5, 0.6])).numpy().tolist() == [[0, 0], [0.5, 0.6000000238418579]]
    x = t([-np.inf, 0.0, 1.0], grad=True)
    pycoll.logcumsumexp(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 1.2689414, 0.7310586], rtol=1e-6)  # paddle
    small = t([[3e-7, 4e-7]], "float64", grad=True)
    out = pycoll.renorm(small, 2.0, 0, 1e-7)
    (out * t([[1.0, 2.0]], "float64")).sum().backward()
    np.testing.assert_allclose(out.numpy(), [[6e-8, 8e-8]], rtol=1e-7)  # paddle: 6.00000007e-08, 8.00000009e-08
    np.testing.assert_allclose(small.grad.numpy(), [[-0.064, 0.048]], rtol=1e-9)  # paddle
    with pytest.raises(ValueError, match="var: give unbiased or correction, not both"):
        pycoll.var(t([1.0, 2.0, 4.0]), unbiased=False, correction=2)


def test_remainder_zeros_keep_xs_sign_and_copysign_of_bools_is_x():
    r = pycoll.remainder(t([-4.0, 4.0, -0.0, -7.5]), t([2.0, -2.0, 3.0, 0.5])).numpy()
    assert r.tolist() == [0.0, 0.0, 0.0, 0.0] and np.signbit(r).tolist() == [True, False, True, True]  # paddle
    assert pycoll.remainder(t([-1.0, 5.5]), t([3.0, -2.0])).tolist() == [2.0, -0.5]
    flags = pycoll.to_tensor([True, False])
    assert pycoll.copysign(flags, pycoll.to_tensor([False, True])).tolist() == [True, False]  # paddle


def test_digamma_and_trigamma_poles_are_paddles():
    x = t([0.0, -0.0, -1.0, -2.5, 3.0], "float64", grad=True)
    d = pycoll.digamma(x)
    d.sum().backward()
    np.testing.assert_allclose(d.numpy(), [-np.inf, np.inf, np.nan, 1.10315664, 0.92278434], rtol=1e-8)  # paddle
    np.testing.assert_allclose(x.grad.numpy(), [np.inf, np.inf, np.inf, 9.53924664, 0.39493407], rtol=1e-8)  # paddle


def test_scatter_and_index_fill_take_nonzeros_column_index():
    rows = pycoll.nonzero(pycoll.to_tensor([False, True, False, True]))  # [2, 1], as paddle's
    assert pycoll.scatter(pycoll.zeros([4, 2]), rows, pycoll.ones([2, 2])).tolist() == [[0, 0], [1, 1], [0, 0], [1, 1]]
    assert pycoll.zeros([4, 2]).index_fill_(rows, 0, 5.0).tolist() == [[0, 0], [5, 5], [0, 0], [5, 5]]
    with pytest.raises(ValueError, match=r"index_add: index must be 1-D, got shape \[2, 1\]"):  # paddle refuses too
        pycoll.zeros([4, 2]).index_add_(rows, 0, pycoll.ones([2, 2]))
