"""The host kernels behind erf, exact gelu, cumsum and batch norm (pycoll.kernels.host_math):
their values against references computed another way (math.erf in float64, NumPy's cumsum, a
float64 NumPy batch norm), against numbers measured on Paddle 3.3.1's CPU build, and against the
array formulas that CuPy arrays and a build without the kernels take."""
import math

import numpy as np
import pytest

import pycoll
import pycoll.nn.functional as F
from pycoll import _special
from pycoll.kernels import host_math

pytestmark = pytest.mark.skipif(host_math._kernels() is None, reason="pycoll._C lacks the host math kernels")


def ulps(got, ref64):
    """|got - ref| in float32 ulps of the reference (float32-rounded)."""
    spacing = np.spacing(np.abs(ref64.astype(np.float32))).astype(np.float64)
    return np.abs(got.astype(np.float64) - ref64) / spacing


def float32_grid():
    rs = np.random.RandomState(0)
    return np.concatenate([np.linspace(-4.5, 4.5, 100001), rs.uniform(-5, 5, 50000),
                           np.exp(rs.uniform(-80, 1.5, 20000)) * rs.choice([-1, 1], 20000)]).astype(np.float32)


def test_erf_float32_is_correctly_rounded_but_rarely():
    x = float32_grid()
    ref = np.array([math.erf(v) for v in x.astype(np.float64)])
    got = host_math.erf(x)
    assert got.dtype == np.float32
    assert ulps(got, ref).max() < 0.502
    assert np.mean(got != ref.astype(np.float32)) < 1e-3
    # the array formula (CuPy arrays, no kernels) agrees to its own accuracy (~1.2e-7 relative)
    assert ulps(_special._erf_fit(np, x), got.astype(np.float64)).max() <= 4


def test_erf_special_values_and_float64():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -3.92, 3.95, 30.0], np.float32)
    got = host_math.erf(x)
    np.testing.assert_array_equal(got[:4], [0.0, -0.0, 1.0, -1.0])
    assert np.signbit(got[1]) and not np.signbit(got[0]) and np.isnan(got[4])
    np.testing.assert_array_equal(got[5:], [1e-45 * np.float32(2 / math.sqrt(math.pi)), -1.0, 1.0, 1.0])
    x64 = np.linspace(-6, 6, 2001)
    np.testing.assert_allclose(host_math.erf(x64), [math.erf(v) for v in x64], rtol=2e-16, atol=1e-300)
    np.testing.assert_allclose(_special.erf(x64[::7].copy()), _special._erf64(np, x64[::7]), rtol=1e-15)


def test_erf_op_matches_paddle_and_keeps_its_gradient():
    x = pycoll.to_tensor(np.array([-3.0, -1.7, -0.3, 0.0, 0.3, 1.7, 3.0], np.float32), stop_gradient=False)
    e = pycoll.erf(x)
    e.sum().backward()
    # measured on paddle 3.3.1 (CPU): paddle.erf of the same values, then .sum().backward()
    np.testing.assert_allclose(e.numpy(), [-0.9999780058860779, -0.983790397644043, -0.3286267817020416, 0.0,
                                           0.3286267817020416, 0.983790397644043, 0.9999780058860779], rtol=3e-7)
    np.testing.assert_allclose(x.grad.numpy(), [0.00013925305393058807, 0.06271103769540787, 1.0312609672546387,
                                                1.128379225730896, 1.0312609672546387, 0.06271103769540787,
                                                0.00013925305393058807], rtol=3e-7)


def gelu_reference(x):
    """float64 exact gelu and its derivative."""
    x = x.astype(np.float64)
    cdf = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in x])
    return x * cdf, cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)


def test_gelu_exact_forward_and_gradient_against_float64():
    x = float32_grid()[::5].copy()
    t = pycoll.to_tensor(x, stop_gradient=False)
    w = np.random.RandomState(1).randn(x.size).astype(np.float32)
    out = F.gelu(t)
    (out * pycoll.to_tensor(w)).sum().backward()
    ref, dref = gelu_reference(x)
    # float32 steps as paddle's: cdf = 0.5 * (1 + erf) rounds to ulp(1)/2, so the error floor is |x| 2^-24
    floor = np.maximum(np.spacing(np.abs(ref).astype(np.float32)), np.abs(x) * 2.0 ** -24)
    assert (np.abs(out.numpy() - ref) / floor).max() <= 2
    dfloor = np.maximum(np.spacing(np.abs(dref).astype(np.float32)), 2.0 ** -24)
    assert (np.abs(t.grad.numpy() - w * dref) / (np.abs(w) * dfloor)).max() <= 3


def test_gelu_exact_float64():
    x = np.linspace(-5, 5, 1001)
    t = pycoll.to_tensor(x, stop_gradient=False)
    out = F.gelu(t)
    out.sum().backward()
    ref, dref = gelu_reference(x)
    floor = 4e-16 * np.maximum(np.abs(x), 1)  # 0.5 * (1 + erf) rounds to ulp(1) / 2
    assert (np.abs(out.numpy() - ref) <= floor).all()
    assert (np.abs(t.grad.numpy() - dref) <= floor).all()


def test_gelu_exact_matches_paddle_and_the_array_formula():
    x = np.array([-3.0, -1.7, -0.3, 0.0, 0.3, 1.7, 3.0], np.float32)
    t = pycoll.to_tensor(x, stop_gradient=False)
    out = F.gelu(t)
    out.sum().backward()
    # measured on paddle 3.3.1 (CPU): paddle.nn.functional.gelu(x), then .sum().backward()
    np.testing.assert_allclose(out.numpy(), [-0.0040496885776519775, -0.07576129585504532, -0.11462657898664474, 0.0,
                                             0.1853734254837036, 1.6242388486862183, 2.995950222015381], rtol=3e-7)
    np.testing.assert_allclose(t.grad.numpy(), [-0.011945649981498718, -0.11531797051429749, 0.26767221093177795, 0.5,
                                                0.7323277592658997, 1.1153180599212646, 1.0119456052780151],
                               rtol=3e-7)
    grid = float32_grid()
    fused_out, fused_cdf = host_math.gelu(grid)
    formula_out, formula_cdf = F._gelu_exact(grid)  # what CuPy arrays compute, with the formula's erf
    assert np.abs(fused_cdf - formula_cdf).max() <= 4 * 2.0 ** -24
    assert (np.abs(fused_out - formula_out) / np.maximum(np.abs(grid) * 2.0 ** -24, 1e-45)).max() <= 5


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_cumsum_kernel_is_numpys_bit_for_bit(dtype):
    rs = np.random.RandomState(2)
    a = (rs.randn(5, 19, 6) * 100).astype(dtype)
    for axis in range(3):
        np.testing.assert_array_equal(host_math.cumsum(a, axis), np.cumsum(a, axis))
        flipped = np.flip(np.cumsum(np.flip(a, axis), axis), axis)
        np.testing.assert_array_equal(host_math.cumsum(a, axis, reverse=True), flipped)
    assert host_math.cumsum(np.zeros((3, 0, 2), dtype), 1).shape == (3, 0, 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_cumprod_kernel_is_numpys_bit_for_bit(dtype):
    rs = np.random.RandomState(3)
    a = (rs.rand(5, 19, 17) * 2.2).astype(dtype) if dtype != np.int64 else rs.randint(-9, 10, (5, 19, 17)).astype(dtype)
    for axis in range(3):  # 19 and 17 rows: the kernel's eight at a time and the rest
        np.testing.assert_array_equal(host_math.cumprod(a, axis), np.cumprod(a, axis))
    assert host_math.cumprod(np.zeros((3, 0, 2), dtype), 1).shape == (3, 0, 2)
    if dtype == np.int64:  # wraps around on overflow as NumPy's does
        np.testing.assert_array_equal(host_math.cumprod(a * 1000, 1), np.cumprod(a * 1000, 1))
    else:  # inf * 0 gives NaN, as NumPy's
        edge = np.array([[np.inf, 0.0, 2.0], [-0.0, 3.0, np.nan]], dtype)
        with np.errstate(invalid="ignore"):
            expected = np.cumprod(edge, 1)
        np.testing.assert_array_equal(host_math.cumprod(edge, 1), expected)


def test_cumsum_edge_values():
    big = np.array([2 ** 62, 2 ** 62, 2 ** 62], np.int64)  # wraps around as NumPy's does
    np.testing.assert_array_equal(host_math.cumsum(big, 0), np.cumsum(big))
    z = np.array([[-0.0, -0.0], [np.inf, -np.inf]], np.float32)
    got = host_math.cumsum(z, 1)
    assert np.signbit(got[0, 0]) and np.signbit(got[0, 1]) and np.isnan(got[1, 1])
    view = np.arange(40.0).reshape(5, 8)[:, ::2]  # not contiguous: copied first
    np.testing.assert_array_equal(host_math.cumsum(view, 1), np.cumsum(view, 1))


def test_cumsum_op_matches_paddle():
    c = pycoll.to_tensor(np.array([[1.5, -2.25, 3.0, 0.125], [4.0, 0.5, -1.0, 2.0]], np.float32), stop_gradient=False)
    w = pycoll.to_tensor(np.array([[1.0, 2.0, 3.0, 4.0], [-1.0, 0.5, 0.25, 2.0]], np.float32))
    out = pycoll.cumsum(c, 1)
    (out * w).sum().backward()
    # measured on paddle 3.3.1 (CPU): paddle.cumsum(c, 1), then (out * w).sum().backward()
    np.testing.assert_array_equal(out.numpy(), [[1.5, -0.75, 2.25, 2.375], [4.0, 4.5, 3.5, 5.5]])
    np.testing.assert_array_equal(c.grad.numpy(), [[10.0, 9.0, 7.0, 4.0], [1.75, 2.75, 2.25, 2.0]])


def batch_norm_reference(x, weight, bias, g, channel_axis):
    """float64 training batch norm: (y, dx, dweight, dbias, mean, biased var)."""
    x, g = x.astype(np.float64), g.astype(np.float64)
    axes = tuple(i for i in range(x.ndim) if i != channel_axis)
    shape = [1] * x.ndim
    shape[channel_axis] = -1
    mean, var = x.mean(axes), x.var(axes)
    xhat = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + 1e-5)
    w = np.ones(x.shape[channel_axis]) if weight is None else weight.astype(np.float64)
    b = np.zeros(x.shape[channel_axis]) if bias is None else bias.astype(np.float64)
    y = xhat * w.reshape(shape) + b.reshape(shape)
    gw, gb, n = (g * xhat).sum(axes), g.sum(axes), x.size // x.shape[channel_axis]
    dx = (w / np.sqrt(var + 1e-5)).reshape(shape) * (g - gb.reshape(shape) / n - xhat * gw.reshape(shape) / n)
    return y, dx, gw, gb, mean, var


@pytest.mark.parametrize("data_format,shape,affine", [("NCHW", (4, 6, 5, 7), True), ("NHWC", (3, 5, 4, 6), True),
                                                      ("NCL", (8, 3, 20), False), ("NCL", (64, 9), True),
                                                      ("NLC", (4, 10, 6), False)])  # the last two: channels last
@pytest.mark.parametrize("kernels", [True, False])
def test_batch_norm_training_against_float64(data_format, shape, affine, kernels, monkeypatch):
    if not kernels:  # the array formulas a build without the kernels (and CuPy) runs
        monkeypatch.setattr(host_math, "_kernels", lambda: None)
    rs = np.random.RandomState(3)
    channel_axis = 1 if data_format[1] == "C" else len(shape) - 1
    c = shape[channel_axis]
    x0 = (rs.randn(*shape) * 3 + 5).astype(np.float32)
    g0 = rs.randn(*shape).astype(np.float32)
    w0, b0 = (rs.rand(c) + 0.5).astype(np.float32), rs.randn(c).astype(np.float32)
    x = pycoll.to_tensor(x0, stop_gradient=False)
    weight = pycoll.to_tensor(w0, stop_gradient=False) if affine else None
    bias = pycoll.to_tensor(b0, stop_gradient=False) if affine else None
    rm, rv = pycoll.zeros([c]), pycoll.ones([c])
    y = F.batch_norm(x, rm, rv, weight, bias, training=True, data_format=data_format)
    (y * pycoll.to_tensor(g0)).sum().backward()
    ry, rdx, rgw, rgb, rmean, rvar = batch_norm_reference(x0, w0 if affine else None, b0 if affine else None, g0,
                                                          channel_axis)
    for got, ref in ((y, ry), (x.grad, rdx)) + (((weight.grad, rgw), (bias.grad, rgb)) if affine else ()):
        np.testing.assert_allclose(got.numpy(), ref, rtol=0, atol=2e-6 * np.abs(ref).max())
    np.testing.assert_allclose(rm.numpy(), 0.1 * rmean, rtol=1e-6)
    np.testing.assert_allclose(rv.numpy(), 0.9 + 0.1 * rvar, rtol=1e-6)


def test_batch_norm_matches_paddle():
    x = pycoll.to_tensor(np.arange(24, dtype=np.float32).reshape(2, 3, 2, 2) ** 1.5 / 7, stop_gradient=False)
    bn = pycoll.nn.BatchNorm2D(3)
    bn.weight.set_value(np.array([0.5, 1.5, -2.0], np.float32))
    bn.bias.set_value(np.array([0.1, -0.2, 0.3], np.float32))
    y = bn(x)
    (y * pycoll.to_tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 2, 2))).sum().backward()
    # measured on paddle 3.3.1 (CPU), the same layer, input and weighted sum
    np.testing.assert_allclose(y.numpy().ravel()[:8], [-0.43763086199760437, -0.4169471859931946, -0.3791285753250122,
                                                       -0.33015525341033936, -1.9235985279083252, -1.7679128646850586,
                                                       -1.5957666635513306, -1.4086055755615234], rtol=2e-6)
    np.testing.assert_allclose(x.grad.numpy().ravel()[:4], [-0.012129748240113258, -0.002705751918256283,
                                                            0.004095382522791624, 0.009189051575958729], rtol=2e-5)
    np.testing.assert_allclose(bn.weight.grad.numpy(), [4.2288994789123535, 4.240267276763916, 4.242904186248779],
                               rtol=2e-6)
    np.testing.assert_allclose(bn.bias.grad.numpy(), [-2.782608985900879, 0.0, 2.782608985900879], atol=2e-6)
    np.testing.assert_allclose(bn._variance.numpy(), [2.092580795288086, 2.8161816596984863, 3.514641284942627],
                               rtol=2e-6)


def test_kernels_decline_what_they_do_not_serve():
    half = np.ones(4, np.float16)
    assert host_math.erf(half) is None and host_math.gelu(half) is None
    assert host_math.cumsum(np.ones(3, np.int32), 0) is None
    assert host_math.erf([0.5]) is None
    assert host_math.erf(np.ones(3, np.float32).view(np.recarray)) is None  # a subclass keeps its formula
    assert host_math.channel_sums_and_dots(np.ones((2, 3), np.float32), np.ones((2, 3)), 1) is None  # mixed dtypes
    np.testing.assert_allclose(_special.erf(half), [0.8427] * 4, rtol=1e-3)  # the formula serves float16


def test_batch_norm_gradient_of_a_plain_sum():
    """y.sum().backward() hands batch norm a broadcast gradient, which the kernels copy once and
    write the input gradient over."""
    rs = np.random.RandomState(4)
    x0 = (rs.randn(4, 6, 5, 7) * 3 + 5).astype(np.float32)
    x = pycoll.to_tensor(x0, stop_gradient=False)
    bn = pycoll.nn.BatchNorm2D(6)
    bn(x).sum().backward()
    y, dx, gw, gb, _, _ = batch_norm_reference(x0, np.ones(6, np.float32), np.zeros(6, np.float32),
                                               np.ones_like(x0), 1)
    np.testing.assert_allclose(x.grad.numpy(), dx, atol=1e-6)  # zero up to rounding
    np.testing.assert_allclose(bn.weight.grad.numpy(), gw, atol=2e-4)
    np.testing.assert_array_equal(bn.bias.grad.numpy(), gb)
    assert np.abs(x.grad.numpy()).max() < 1e-6


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_scatter_add_of_rows_gives_np_add_ats_bits(dtype):
    from pycoll.device import scatter_add

    rng = np.random.default_rng(5)
    index = rng.integers(-40, 40, 3000)  # repeats and negative rows
    values = rng.standard_normal((3000, 7, 3)).astype(dtype)
    start = rng.standard_normal((40, 7, 3)).astype(dtype)
    want, got = start.copy(), start.copy()
    np.add.at(want, index, values)
    assert host_math.scatter_add_rows(got, index, values) is True
    assert np.array_equal(got, want)
    kept = start.copy()
    with pytest.raises(IndexError, match="index 40 is out of bounds for axis 0 with size 40"):
        scatter_add(kept, np.array([1, 40]), values[:2])
    assert np.array_equal(kept, start)  # nothing added
    assert host_math.scatter_add_rows(got, (index,), values) is None  # a tuple key: np.add.at's


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("ufunc", [np.maximum, np.minimum])
def test_a_scatter_extreme_of_rows_gives_the_ufunc_ats_values(dtype, ufunc):
    rng = np.random.default_rng(6)
    index = rng.integers(-30, 30, 2000)
    values = rng.integers(-3, 4, (2000, 5)).astype(dtype)  # ties, and signed zeros below
    values[rng.random(values.shape) < 0.01] = np.nan
    values[rng.random(values.shape) < 0.05] = -0.0
    values[rng.random(values.shape) < 0.02] = np.inf
    start = np.full((30, 5), -np.inf if ufunc is np.maximum else np.inf, dtype)
    start[3] = np.nan  # a NaN already there stays
    want, got = start.copy(), start.copy()
    ufunc.at(want, index, values)
    assert host_math.scatter_extreme_rows(got, index, values, ufunc is np.maximum) is True
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))
    with pytest.raises(IndexError, match="index 30 is out of bounds"):
        host_math.scatter_extreme_rows(got, np.array([30]), values[:1], True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kw", [dict(kernel_size=3, stride=2, padding=1), dict(kernel_size=2, stride=2),
                                dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 0), ceil_mode=True),
                                dict(kernel_size=3, stride=2, padding=1, data_format="NHWC")])
def test_max_pool2d_kernel_gives_the_formulas_maxima_picks_and_gradients(dtype, kw, monkeypatch):
    """The host kernel against the window formula it replaces, with NaNs (a NaN wins: the first
    NaN of a window takes the gradient), ties (the first of equal maxima) and -inf."""
    rs = np.random.RandomState(0)
    x0 = rs.randn(2, 3, 9, 11).astype(dtype)
    x0[0, 0, :3, :3] = np.nan
    x0[0, 1] = np.round(x0[0, 1])
    x0[1, 2, 4:, 4:] = -np.inf
    channel_last = kw.get("data_format") == "NHWC"
    if channel_last:
        x0 = np.moveaxis(x0, 1, -1).copy()
    weights = rs.randn(*F.max_pool2d(pycoll.to_tensor(x0), **kw).shape).astype(dtype)

    def run():
        x = pycoll.to_tensor(x0, stop_gradient=False)
        result = F.max_pool2d(x, return_mask=not channel_last, **kw)
        out = result if channel_last else result[0]
        (out * pycoll.to_tensor(weights)).sum().backward()
        return [out.numpy(), x.grad.numpy()] + ([] if channel_last else [result[1].numpy()])
    fast = run()
    monkeypatch.setattr(host_math, "_kernels", lambda: None)
    slow = run()
    np.testing.assert_array_equal(fast[0], slow[0])  # the maxima
    np.testing.assert_array_equal(fast[2:], slow[2:])  # the mask
    # the gradient: overlapping windows add into a cell in another order
    np.testing.assert_allclose(fast[1], slow[1], rtol=1e-6 if dtype == np.float32 else 1e-14)


@pytest.mark.parametrize("size", [(3, 7), (6, 14), (4, 4)])
def test_adaptive_max_pool2d_of_equal_bins_through_the_kernel_as_its_formula(size, monkeypatch):
    """Equal bins (sizes that divide) are max pooling's windows: maxima, mask and gradient as the
    bin-by-bin argmax's (a NaN wins, the first of equal maxima keeps the mask)."""
    rs = np.random.RandomState(1)
    x0 = rs.randn(2, 3, 12, 28)
    x0[0, 0, :3, :3] = np.nan
    x0[0, 1] = np.round(x0[0, 1])

    def run():
        x = pycoll.to_tensor(x0, stop_gradient=False)
        out, mask = F.adaptive_max_pool2d(x, size, return_mask=True)
        (out * pycoll.to_tensor(np.cos(np.arange(out.size)).reshape(out.shape))).sum().backward()
        return out.numpy(), mask.numpy(), x.grad.numpy()
    fast = run()
    monkeypatch.setattr(host_math, "_kernels", lambda: None)
    for got, want in zip(fast, run()):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_roi_max_index_kernel_picks_what_the_array_formula_picks(dtype):
    from pycoll.vision.ops import roi
    rs = np.random.RandomState(5)
    x = rs.randint(0, 4, (2, 3, 9, 11)).astype(dtype)  # many ties: the first of equal maxima wins
    x[1, 2, 4, 5] = np.nan  # a NaN never wins (paddle's comparisons)
    x[0, 1, 8:, :] = -np.inf  # nor does -inf: a bin of -inf cells has no pick
    image = np.array([0, 1, 1, 0], np.int64)
    hs = np.array([[0, 2, 5], [3, 3, 6], [0, 4, 9], [8, 8, 8]], np.int64)  # [3, 3) and [9, 9): empty bins
    he = np.array([[2, 5, 9], [4, 6, 9], [4, 9, 9], [9, 9, 9]], np.int64)
    ws = np.array([[0, 4], [1, 6], [5, 5], [0, 10]], np.int64)
    we = np.array([[4, 11], [6, 11], [5, 11], [10, 11]], np.int64)
    fast = host_math.roi_max_index(x, image, hs, he, ws, we)
    slow = roi._roi_max_index(np, x, image, hs, he, ws, we)
    assert fast.shape == slow.shape == (4, 3, 3, 2) and fast.dtype == np.int64
    np.testing.assert_array_equal(fast, slow)
    empty = ~((hs < he)[:, None, :, None] & (ws < we)[:, None, None, :]).repeat(3, axis=1)
    assert (fast[empty] == -1).all() and (fast[3, 1] == -1).all()  # empty bins; RoI 3's -inf rows
    assert not np.isnan(x.reshape(-1)[fast[fast >= 0]]).any()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_psroi_sums_and_its_gradient_add_each_bins_cells(dtype):
    rs = np.random.RandomState(6)
    x = rs.standard_normal((2, 8, 7, 6)).astype(dtype)  # 2 output channels of 2 x 2 bins
    image = np.array([1, 0, 1], np.int64)
    hs, he = np.array([[0, 3], [2, 2], [6, 7]], np.int64), np.array([[3, 7], [2, 5], [7, 7]], np.int64)
    ws, we = np.array([[0, 2], [1, 4], [0, 3]], np.int64), np.array([[2, 6], [4, 6], [3, 6]], np.int64)
    sums = host_math.psroi_sums(x, image, hs, he, ws, we)
    g = rs.standard_normal(sums.shape).astype(dtype)
    grad = host_math.psroi_sums_grad(g, image, hs, he, ws, we, x.shape)
    want, want_grad = np.zeros(sums.shape), np.zeros(x.shape)
    for r, o, i, j in np.ndindex(*sums.shape):
        rows, cols, channel = slice(hs[r, i], he[r, i]), slice(ws[r, j], we[r, j]), (o * 2 + i) * 2 + j
        want[r, o, i, j] = x[image[r], channel, rows, cols].astype(np.float64).sum()
        want_grad[image[r], channel, rows, cols] += g[r, o, i, j]
    assert sums.dtype == np.float64 and grad.dtype == dtype
    np.testing.assert_allclose(sums, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="psroi_sums: an image index or a bin edge is out of range"):
        host_math.psroi_sums(x, image, hs, he + 1, ws, we)  # row 8 of a 7-row plane
    with pytest.raises(ValueError, match="roi_sample: an image, row or column index is out of range"):
        host_math.roi_sample(x, image[:1], np.full((1, 2, 2), 7), np.ones((1, 2, 2), dtype), np.zeros((1, 2, 2)),
                             np.ones((1, 2, 2), dtype))
