"""NaN in the order statistics (pycoll.order_ops) and the counting ops, as paddle 3.3.1 treats it:
values, indices and where the gradient goes, measured on paddle (CPU) and written in."""
import numpy as np
import pytest

import pycoll

NAN = np.nan
ROWS = [[NAN, NAN, NAN, 1], [5, NAN, 1, NAN], [NAN, 2, 1, 4], [3, 1, 2, NAN], [1, 2, 3, 4]]


def _t(data, dtype="float64"):
    return pycoll.to_tensor(data, dtype=dtype, stop_gradient=False)


def _same(a, b):
    np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-6)


def test_median_gives_nan_for_rows_with_nan():
    x = _t(ROWS)
    m = pycoll.median(x, axis=1)
    _same(m.numpy(), [NAN, NAN, NAN, NAN, 2.5])
    m.sum().backward()  # paddle shares a NaN row's gradient among its NaNs
    _same(x.grad.numpy(), [[1 / 3, 1 / 3, 1 / 3, 0], [0, 0.5, 0, 0.5], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0.5, 0.5, 0]])
    x = _t(ROWS)
    v, i = pycoll.median(x, axis=1, mode="min")  # the first NaN and its index
    _same(v.numpy(), [NAN, NAN, NAN, NAN, 2])
    assert i.numpy().tolist() == [0, 1, 0, 3, 1]
    v.sum().backward()
    _same(x.grad.numpy(), [[1, 0, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 1, 0, 0]])
    assert np.isnan(pycoll.median(_t(ROWS)).item())
    # without an axis mode='min' returns the value alone (paddle's)
    one = pycoll.median(pycoll.arange(12).reshape([3, 4]), mode="min")
    assert isinstance(one, pycoll.Tensor) and one.item() == 5 and one.dtype == np.int64


def test_quantile_gives_nan_for_rows_with_nan():
    x = _t([[1, NAN, 3, NAN], [1, 2, 3, 4], [NAN, 1, 2, 3], [4, 3, 2, 1]], "float32")
    _same(pycoll.quantile(x, [0.25, 0.5], axis=1).numpy(), [[NAN, 1.75, NAN, 1.75], [NAN, 2.5, NAN, 2.5]])
    q = pycoll.quantile(x, 0.3, axis=1)
    q.sum().backward()  # a NaN row's gradient goes to its last NaN
    _same(x.grad.numpy(), [[0, 0, 0, 1], [0.1, 0.9, 0, 0], [1, 0, 0, 0], [0, 0, 0.9, 0.1]])


def test_nanmedian_and_nanquantile_leave_nan_out():
    x = _t([[NAN, 2, 1], [3, NAN, NAN], [1, 2, 3]], "float32")
    m = pycoll.nanmedian(x, axis=1)
    _same(m.numpy(), [1.5, 3, 2])
    m.sum().backward()
    _same(x.grad.numpy(), [[0, 0.5, 0.5], [1, 0, 0], [0, 1, 0]])
    v, i = pycoll.nanmedian(x, axis=0, mode="min", keepdim=True)
    _same(v.numpy(), [[1, 2, 1]])
    assert i.numpy().tolist() == [[2, 0, 0]]
    assert pycoll.nanmedian(x, mode="min").item() == 2.0  # no axis, or a list: the value alone
    assert pycoll.nanmedian(x, axis=[0, 1]).item() == 2.0
    v, i = pycoll.nanmedian(pycoll.to_tensor([[NAN, NAN], [1.0, 2.0]]), axis=1, mode="min")
    _same(v.numpy(), [NAN, 1])
    assert i.numpy().tolist() == [-1, 0]
    ints = pycoll.nanmedian(pycoll.to_tensor([[1, 2, 3, 4]], dtype="int32"), axis=1)
    assert ints.numpy().tolist() == [2] and ints.dtype == np.int32  # paddle keeps (truncates) integers
    y = _t([[1, NAN, 3, NAN], [1, 2, 3, 4], [NAN, 1, 2, 3], [4, 3, 2, 1]], "float32")
    _same(pycoll.nanquantile(y, [0.25, 0.5], axis=1).numpy(), [[1.5, 1.75, 1.5, 1.75], [2, 2.5, 2, 2.5]])
    q = pycoll.nanquantile(y, 0.3, axis=1)
    q.sum().backward()
    _same(y.grad.numpy(), [[0.7, 0, 0.3, 0], [0.1, 0.9, 0, 0], [0, 0.4, 0.6, 0], [0, 0, 0.9, 0.1]])
    row = pycoll.to_tensor([[1.0, NAN, 3, 4, 6]])
    _same(pycoll.nanquantile(row, [0.1, 0.6], axis=1, interpolation="midpoint").numpy(), [[2], [3.5]])
    _same(pycoll.nanquantile(row, [0.1, 0.6], axis=1, interpolation="nearest").numpy(), [[1], [4]])
    _same(pycoll.nanquantile(pycoll.to_tensor([[NAN, NAN], [1.0, 2.0]]), 0.5, axis=1).numpy(), [NAN, 1.5])
    # with no NaN they are median and quantile
    a = np.random.default_rng(0).standard_normal((3, 6))
    _same(pycoll.nanquantile(pycoll.to_tensor(a), [0.2, 0.9], axis=1).numpy(), np.quantile(a, [0.2, 0.9], axis=1))
    _same(pycoll.nanmedian(pycoll.to_tensor(a), axis=0).numpy(), np.median(a, axis=0))
    with pytest.raises(ValueError, match="mode"):
        pycoll.nanmedian(x, mode="max")


@pytest.mark.parametrize("fn, values, index, grad", [
    (pycoll.cummax, [[1, NAN, NAN, NAN, NAN], [3, 3, 5, 5, 5], [2, 2, NAN, NAN, NAN]],
     [[0, 1, 1, 3, 3], [0, 0, 2, 3, 3], [0, 0, 2, 2, 2]], [[1, 2, 0, 2, 0], [2, 0, 1, 2, 0], [2, 0, 3, 0, 0]]),
    (pycoll.cummin, [[1, NAN, NAN, NAN, NAN], [3, 2, 2, 2, 1], [2, 1, NAN, NAN, NAN]],
     [[0, 1, 1, 3, 3], [0, 1, 1, 1, 4], [0, 1, 2, 2, 2]], [[1, 2, 0, 2, 0], [1, 3, 0, 0, 1], [1, 1, 3, 0, 0]])])
def test_running_extremes_propagate_nan_with_its_index(fn, values, index, grad):
    # paddle 3.3.1: a NaN propagates and each NaN takes the index (never -1)
    x = _t([[1, NAN, 3, NAN, 0], [3, 2, 5, 5, 1], [2, 1, NAN, 0, 4]], "float32")
    v, i = fn(x, axis=1)
    _same(v.numpy(), values)
    assert i.numpy().tolist() == index
    v.sum().backward()
    _same(x.grad.numpy(), grad)


def test_ops_along_an_axis_of_a_0d_tensor_give_0d_results_as_paddles():
    x = pycoll.to_tensor(3.0, stop_gradient=False)
    calls = {"sort": lambda: pycoll.sort(x), "argsort": lambda: pycoll.argsort(x), "topk": lambda: pycoll.topk(x, 1),
             "kthvalue": lambda: pycoll.kthvalue(x, 1), "mode": lambda: pycoll.mode(x),
             "cumsum": lambda: pycoll.cumsum(x, axis=0), "cumprod": lambda: pycoll.cumprod(x, dim=-1),
             "cummax": lambda: pycoll.cummax(x, axis=0), "logcumsumexp": lambda: pycoll.logcumsumexp(x, axis=0),
             "method": lambda: x.topk(1)}
    for name, call in calls.items():  # paddle 3.3.1: shape [] for each result, the value 3 (an index 0)
        out = call()
        for t in (out if isinstance(out, tuple) else (out,)):
            assert t.shape == [] and float(t) in (3.0, 0.0), (name, t)
    assert pycoll.cumsum(x).shape == [1]  # axis None flattens, in paddle too
    pycoll.sort(x).backward()
    assert float(x.grad) == 1.0


def test_topk_names_its_values_and_indices_as_paddle():
    result = pycoll.topk(pycoll.to_tensor([[1.0, 5.0, 3.0], [6.0, 2.0, 4.0]]), 2)
    values, indices = result
    assert result.values is values and result.indices is indices
    assert values.numpy().tolist() == [[5.0, 3.0], [6.0, 4.0]] and indices.numpy().tolist() == [[1, 2], [0, 2]]


def _mode_by_pairs(a, axis):
    """mode's value by counting every pair of a row's values (NaN equal to nothing)."""
    s = np.moveaxis(np.sort(a, axis=axis), axis, -1)
    counts = (s[..., :, None] == s[..., None, :]).sum(-1)
    return np.take_along_axis(s, counts.argmax(-1)[..., None], -1)[..., 0]


@pytest.mark.parametrize("shape, axis", [((7,), 0), ((5, 9), 1), ((5, 9), 0), ((3, 4, 6), 1), ((1, 1), -1)])
@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_mode_takes_the_most_frequent_value_the_smallest_of_a_tie(shape, axis, dtype):
    rs = np.random.RandomState(len(shape) * 10 + axis)
    a = rs.randint(0, 4, shape).astype(dtype)
    if dtype == "float32":
        a[rs.rand(*shape) < 0.2] = NAN
    value, index = pycoll.mode(pycoll.to_tensor(a), axis=axis)
    expected = _mode_by_pairs(a, axis)
    np.testing.assert_array_equal(value.numpy(), expected)
    found = np.take_along_axis(a, np.expand_dims(index.numpy(), axis), axis).squeeze(axis)
    np.testing.assert_array_equal(found, expected)  # the index points at the value


def test_mode_of_a_long_row_counts_runs_not_pairs():
    # a probe: every pair of a row's values was compared, O(n^2): 27 s and 10 GB for 100 000
    # values (paddle: 10 ms); these 300 000 would have needed 90 GB
    a = np.arange(300_000) % 1000
    a[[5, 77, 999_9]] = 123  # 123 three times more than the others
    value, index = pycoll.mode(pycoll.to_tensor(a))
    assert value.item() == 123 and index.item() == 299_123


@pytest.mark.parametrize("fn", [pycoll.median, pycoll.nanmedian])
def test_the_avg_median_shares_its_gradient_among_the_elements_equal_to_it(fn):
    # paddle 3.3.1 (measured): elements equal to the median share its gradient evenly; two
    # different middles take half each (the tied one paddle's unstable sort picks is not followed)
    for data, grad in [([1, 3, 3, 2, 3], [0, 1 / 3, 1 / 3, 0, 1 / 3]), ([5, 5, 5, 5], [0.25] * 4),
                       ([1, 2, 2, 2, 3, 4], [0, 1 / 3, 1 / 3, 1 / 3, 0, 0]), ([4, 1, 2], [0, 0, 1]),
                       ([1, 2, 4, 3], [0, 0.5, 0, 0.5])]:
        x = _t([data], dtype="float32")
        fn(x, axis=1).sum().backward()
        np.testing.assert_allclose(x.grad.numpy()[0], grad, rtol=1e-6)
    x = _t([[1, 3], [3, 3]], dtype="float32")
    fn(x).backward()  # over the whole tensor
    np.testing.assert_allclose(x.grad.numpy(), [[0, 1 / 3], [1 / 3, 1 / 3]], rtol=1e-6)
    x = _t([1, 2, 2, 4], dtype="float32")
    fn(x, mode="min").backward()  # mode 'min' without an axis (no index returned) shares it too
    np.testing.assert_allclose(x.grad.numpy(), [0, 0.5, 0.5, 0], rtol=1e-6)
    x = _t([1, 2, 2, 4], dtype="float32")
    fn(x, axis=0, mode="min")[0].backward()  # with one: the element whose index comes back
    assert x.grad.numpy().tolist() == [0, 1, 0, 0]
    x = _t([[1, NAN, 2], [2, 2, 1]])
    fn(x, axis=1).sum().backward()
    expected_nan_row = [0, 1, 0] if fn is pycoll.median else [0.5, 0, 0.5]  # median's NaN takes it
    np.testing.assert_allclose(x.grad.numpy(), [expected_nan_row, [0.5, 0.5, 0]], rtol=1e-6)


def test_nan_medians_share_their_gradient_among_the_nans():
    # paddle 3.3.1 (measured): median(mode='min') without an axis over 3 NaNs gives each 1/3;
    # nanmedian of a column of NaNs only: 'avg' shares among them, 'min' (index -1) sends none
    x = _t([[NAN, NAN, 3.0, 2.0], [5.0, NAN, 1.0, 5.0]], dtype="float32")
    pycoll.median(x, mode="min").backward()
    np.testing.assert_allclose(x.grad.numpy().ravel(), [1 / 3, 1 / 3, 0, 0, 0, 1 / 3, 0, 0], rtol=1e-6)
    for mode, grad in [("avg", [0.5, 0.5, 0.5, 0.5]), ("min", [0, 1, 0, 0])]:
        x = _t([[NAN, 1.0], [NAN, 2.0]], dtype="float32")
        y = pycoll.nanmedian(x, axis=0, mode=mode)
        y = y[0] if isinstance(y, tuple) else y
        assert np.isnan(y.numpy()[0])
        y.sum().backward()
        np.testing.assert_allclose(x.grad.numpy().ravel(), grad, rtol=1e-6)
