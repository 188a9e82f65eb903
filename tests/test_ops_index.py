"""Index reads and writes (pycoll.index_ops), order statistics and counting (pycoll.stats_ops) and
running ops (pycoll.scan_ops): values and gradients measured on paddle 3.3.1 (said where) or
computed with NumPy, gradients against finite differences."""
import numpy as np
import pytest

import pycoll
from test_gradcheck import gradcheck

W = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=np.float32)  # a weight for the backward passes


def _t(data, grad=False, dtype=None):
    return pycoll.to_tensor(np.array(data, dtype=dtype or np.float32), stop_gradient=not grad)  # a copy


def _grads(*tensors):
    return [t.grad.numpy().tolist() for t in tensors]


# ---- index_ops ---------------------------------------------------------------------------

def test_argmin_nonzero_masked_select():
    # paddle 3.3.1
    x = _t([[1.0, 0.0, 3.0], [0.0, 5.0, 0.0]])
    assert pycoll.argmin(x).item() == 1 and pycoll.argmin(x).dtype == np.int64
    assert x.argmin(axis=1, keepdim=True).numpy().tolist() == [[1], [0]]
    assert pycoll.argmin(x, axis=0, dtype="int32").dtype == np.int32
    nz = pycoll.nonzero(x)
    assert nz.dtype == np.int64 and nz.numpy().tolist() == [[0, 0], [0, 2], [1, 1]]
    assert [t.numpy().tolist() for t in pycoll.nonzero(x, as_tuple=True)] == [[0, 0, 1], [0, 2, 1]]
    x = _t([[1.0, 0.0, 3.0], [0.0, 5.0, 0.0]], grad=True)
    out = pycoll.masked_select(x, pycoll.to_tensor([True, False, True]))  # the mask broadcasts
    assert out.numpy().tolist() == [1.0, 3.0, 0.0, 0.0]
    (out * _t([1.0, 2.0, 3.0, 4.0])).sum().backward()
    assert x.grad.numpy().tolist() == [[1.0, 0.0, 2.0], [3.0, 0.0, 4.0]]


def test_index_select_add_fill():
    # paddle 3.3.1, values and gradients
    x = _t(W, grad=True)
    out = pycoll.index_select(x, pycoll.to_tensor([2, 0, 2]))
    assert out.numpy().tolist() == [[5.0, 6.0], [1.0, 2.0], [5.0, 6.0]]
    out.sum().backward()
    assert x.grad.numpy().tolist() == [[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]]
    x, v = _t(W, grad=True), _t([[10.0, 10.0], [20.0, 20.0], [30.0, 30.0]], grad=True)
    out = pycoll.index_add(x, pycoll.to_tensor([2, 0, 2]), 0, v, alpha=2)
    assert out.numpy().tolist() == [[41.0, 42.0], [3.0, 4.0], [85.0, 86.0]]
    (out * _t(W)).sum().backward()
    assert _grads(x, v) == [W.tolist(), [[10.0, 12.0], [2.0, 4.0], [10.0, 12.0]]]
    x = _t(W, grad=True)
    out = x.index_fill(pycoll.to_tensor([1]), 0, -1.0)
    assert out.numpy().tolist() == [[1.0, 2.0], [-1.0, -1.0], [5.0, 6.0]]
    out.sum().backward()
    assert x.grad.numpy().tolist() == [[1.0, 1.0], [0.0, 0.0], [1.0, 1.0]]
    y = _t(W)
    y.index_add_(pycoll.to_tensor([1]), 1, _t([[1.0], [1.0], [1.0]]))
    assert y.numpy().tolist() == [[1.0, 3.0], [3.0, 5.0], [5.0, 7.0]]
    with pytest.raises(ValueError, match="index must be 1-D"):
        pycoll.index_select(x, pycoll.to_tensor([[0]]))


def test_gather_nd_and_scatter_nd():
    g = _t([[[1, 2], [3, 4]], [[5, 6], [7, 8]]])
    assert pycoll.gather_nd(g, pycoll.to_tensor([[0, 1], [1, 0]])).numpy().tolist() == [[3.0, 4.0], [5.0, 6.0]]
    assert pycoll.gather_nd(g, pycoll.to_tensor([[1, 1, 0]])).numpy().tolist() == [7.0]
    gradcheck(lambda a: pycoll.gather_nd(a, pycoll.to_tensor([[0, 1], [0, 1], [1, 0]])), [np.arange(8.0).reshape(2, 2, 2)])
    out = pycoll.scatter_nd_add(pycoll.zeros([3, 2]), pycoll.to_tensor([[1], [1], [2]]), _t(W))
    assert out.numpy().tolist() == [[0.0, 0.0], [4.0, 6.0], [5.0, 6.0]]
    assert pycoll.scatter_nd(pycoll.to_tensor([[1], [1]]), _t([1.0, 2.0]), [3]).numpy().tolist() == [0.0, 3.0, 0.0]
    gradcheck(lambda a, u: pycoll.scatter_nd_add(a, pycoll.to_tensor([[1], [1], [2]]), u),
              [np.ones((3, 2)), np.arange(6.0).reshape(3, 2)])


@pytest.mark.parametrize("overwrite, expected", [
    (True, [[30.0, 30.0], [20.0, 20.0], [3.0, 3.0]]),  # a repeated index takes its last row
    (False, [[30.0, 30.0], [30.0, 30.0], [3.0, 3.0]]),  # the rows sent there, summed
])
def test_scatter_follows_paddle(overwrite, expected):
    # paddle 3.3.1: every update row gets its target row's gradient, the targets none
    x = _t([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]], grad=True)
    u = _t([[10.0, 10.0], [20.0, 20.0], [30.0, 30.0]], grad=True)
    out = pycoll.scatter(x, pycoll.to_tensor([1, 1, 0]), u, overwrite=overwrite)
    assert out.numpy().tolist() == expected
    (out * _t(W)).sum().backward()
    assert _grads(x, u) == [[[0.0, 0.0], [0.0, 0.0], [5.0, 6.0]], [[3.0, 4.0], [3.0, 4.0], [1.0, 2.0]]]
    y = _t([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
    assert y.scatter_(pycoll.to_tensor([2]), _t([[9.0, 9.0]])) is y and y.numpy().tolist()[2] == [9.0, 9.0]


def test_scatter_of_many_repeated_rows_keeps_each_ones_last():
    """NumPy's in-order writes (pycoll's host path) against the order-free rule CuPy's path takes."""
    from pycoll.inplace_ops import last_writes

    rng = np.random.RandomState(4)
    index = rng.randint(0, 1000, 200_000)
    u = rng.rand(200_000, 2)
    out = pycoll.scatter(pycoll.zeros([1000, 2], dtype="float64"), pycoll.to_tensor(index), pycoll.to_tensor(u))
    want = np.zeros((1000, 2))
    win = last_writes(index)
    want[index[win]] = u[win]
    np.testing.assert_array_equal(out.numpy(), want)


def test_take_and_put_along_axis():
    # paddle 3.3.1
    a = _t([[10.0, 30.0, 20.0], [60.0, 40.0, 50.0]], grad=True)
    out = pycoll.take_along_axis(a, pycoll.to_tensor([[0], [2]]), 1)
    assert out.numpy().tolist() == [[10.0], [50.0]]
    out.sum().backward()
    assert a.grad.numpy().tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]
    base = [[10.0, 30.0, 20.0], [60.0, 40.0, 50.0]]
    idx, vals = pycoll.to_tensor([[1, 1], [0, 0]]), _t([[1.0, 2.0], [3.0, 4.0]])
    for reduce, include_self, expected in [
            ("add", True, [[10.0, 33.0, 20.0], [67.0, 40.0, 50.0]]),
            ("mean", True, [[10.0, 11.0, 20.0], [22.333334, 40.0, 50.0]]),
            ("mul", False, [[10.0, 2.0, 20.0], [12.0, 40.0, 50.0]]),
            ("amax", True, [[10.0, 30.0, 20.0], [60.0, 40.0, 50.0]]),
            ("amin", True, [[10.0, 1.0, 20.0], [3.0, 40.0, 50.0]])]:
        out = pycoll.put_along_axis(_t(base), idx, vals, 1, reduce=reduce, include_self=include_self)
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6, err_msg=reduce)
    out = pycoll.put_along_axis(_t(base), pycoll.to_tensor([[1]]), 7.0, 1)  # indices broadcast
    assert out.numpy().tolist() == [[10.0, 7.0, 20.0], [60.0, 7.0, 50.0]]
    weight = _t([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    for reduce, expected_out, grad_a, grad_v in [
            ("assign", [[10.0, 2.0, 20.0], [3.0, 40.0, 4.0]], [[1.0, 0.0, 3.0], [0.0, 5.0, 0.0]], [[0.0, 2.0], [4.0, 6.0]]),
            ("add", None, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[2.0, 2.0], [4.0, 6.0]])]:
        a, v = _t(base, grad=True), _t([[1.0, 2.0], [3.0, 4.0]], grad=True)
        out = pycoll.put_along_axis(a, pycoll.to_tensor([[1, 1], [0, 2]]), v, 1, reduce=reduce)
        if expected_out:
            assert out.numpy().tolist() == expected_out
        (out * weight).sum().backward()
        assert _grads(a, v) == [grad_a, grad_v], reduce
    gradcheck(lambda a, v: pycoll.put_along_axis(a, pycoll.to_tensor([[1, 1], [0, 2]]), v, 1, reduce="mean"),
              [np.array(base), np.array([[1.0, 2.0], [3.0, 4.0]])])
    for reduce in ("mul", "amin", "amax"):  # distinct values: each place has one winner
        for include_self in (True, False):
            gradcheck(lambda a, v: pycoll.put_along_axis(a, pycoll.to_tensor([[1, 1], [0, 2]]), v, 1, reduce=reduce,
                                                         include_self=include_self),
                      [np.array(base) / 7, np.array([[1.5, 2.5], [3.5, 4.5]])])


@pytest.mark.parametrize("reduce, include_self, out, grad_x, grad_v", [
    # paddle 3.3.1 on the inputs below, except where said: its 'mul' gradient divides out by the
    # factor, giving NaN at every zero factor (here ga[0][0], gv[0][1], gv[1][0], gv[1][1]) where
    # the product of the other factors is finite (0 there, but 2 = v[0][0] for gv[1][0] without self)
    ("mul", True, [[0, 0, 3], [1, 5, 6]], [[0, 0, 100], [1000, 10000, 300000]], [[0, 0, 200000], [0, 0, 600000]]),
    ("mul", False, [[0, 0, 3], [1, 5, 3]], [[0, 0, 100], [1000, 10000, 0]], [[0, 0, 100000], [2, 0, 300000]]),
    # ties share the gradient evenly, x's own element included (paddle 3.3.1)
    ("amin", True, [[0, 0, 3], [1, 5, 1]], [[0.5, 0, 100], [1000, 10000, 0]], [[0, 5, 0], [0.5, 5, 100000]]),
    ("amax", True, [[2, 2, 3], [1, 5, 3]], [[0, 10, 100], [1000, 10000, 0]], [[1, 0, 100000], [0, 0, 0]]),
    ("amax", False, [[2, 0, 3], [1, 5, 3]], [[0, 0, 100], [1000, 10000, 0]], [[1, 5, 100000], [0, 5, 0]]),
    # paddle gives gv[1][0] 0.5: it counts x's own 0 as a tied winner although include_self=False
    # leaves it out (and gives it nothing), so the place's gradient does not add up to 1
    ("amin", False, [[0, 0, 3], [1, 5, 1]], [[0, 0, 100], [1000, 10000, 0]], [[0, 5, 0], [1, 5, 100000]]),
])
def test_put_along_axis_gradients_with_zeros_and_ties(reduce, include_self, out, grad_x, grad_v):
    x, v = _t([[0.0, 2.0, 3.0], [1.0, 5.0, 2.0]], grad=True), _t([[2.0, 0.0, 3.0], [0.0, 0.0, 1.0]], grad=True)
    got = pycoll.put_along_axis(x, pycoll.to_tensor([[0, 0, 1], [0, 0, 1]]), v, 0, reduce=reduce,
                                include_self=include_self, broadcast=False)
    assert got.numpy().tolist() == out
    (got * _t([[1.0, 10.0, 100.0], [1000.0, 10000.0, 100000.0]])).sum().backward()
    assert _grads(x, v) == [grad_x, grad_v]


# ---- stats_ops ---------------------------------------------------------------------------

def test_order_statistics_follow_paddle():
    # paddle 3.3.1: values, indices and where the gradient goes
    data = [[3.0, 1.0, 2.0, 1.0], [5.0, 4.0, 4.0, 6.0]]
    for fn, vals, idx, grad in [
            (lambda x: pycoll.kthvalue(x, 2), [1.0, 4.0], [3, 2], [[0, 0, 0, 1], [0, 0, 1, 0]]),
            (lambda x: pycoll.mode(x), [1.0, 4.0], [3, 2], [[0, 0, 0, 1], [0, 0, 1, 0]]),
            (lambda x: pycoll.median(x, axis=1, mode="min"), [1.0, 4.0], [3, 2], [[0, 0, 0, 1], [0, 0, 1, 0]])]:
        x = _t(data, grad=True)
        v, i = fn(x)
        assert v.numpy().tolist() == vals and i.numpy().tolist() == idx and i.dtype == np.int64
        v.sum().backward()
        assert x.grad.numpy().tolist() == grad
    x = _t(data, grad=True)
    m = pycoll.median(x, axis=1)
    assert m.numpy().tolist() == [1.5, 4.5]
    m.sum().backward()
    assert x.grad.numpy().tolist() == [[0.0, 0.0, 0.5, 0.5], [0.5, 0.0, 0.5, 0.0]]
    assert pycoll.median(x).item() == 3.5
    assert pycoll.median(pycoll.to_tensor([1, 2, 3, 4])).dtype == np.float32
    q = pycoll.quantile(x, 0.3, axis=1)
    np.testing.assert_allclose(q.numpy(), [1.0, 4.0])
    np.testing.assert_allclose(pycoll.quantile(x, [0.25, 0.75], axis=1).numpy(), [[1.0, 4.0], [2.25, 5.25]])
    assert pycoll.quantile(x, 0.4, axis=1, interpolation="lower").numpy().tolist() == [1.0, 4.0]


@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_matches_numpy(interpolation):
    a = np.random.default_rng(3).standard_normal((3, 5, 4))
    for q, axis in [(0.3, None), ([0.1, 0.5, 0.9], 1), (0.75, [0, 2])]:
        out = pycoll.quantile(pycoll.to_tensor(a), q, axis=axis, keepdim=True, interpolation=interpolation)
        ref = np.quantile(a, q, axis=tuple(axis) if isinstance(axis, list) else axis, keepdims=True,
                          method=interpolation)
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12)
    gradcheck(lambda t: pycoll.quantile(t, [0.2, 0.65], axis=1, interpolation=interpolation), [a])
    gradcheck(lambda t: pycoll.median(t, axis=2), [a])


def test_nan_reductions_and_counts():
    # paddle 3.3.1
    n = _t([[1.0, np.nan], [3.0, 4.0]], grad=True)
    m = pycoll.nanmean(n, axis=1)
    assert m.numpy().tolist() == [1.0, 3.5]
    m.sum().backward()
    assert n.grad.numpy().tolist() == [[1.0, 0.0], [0.5, 0.5]]
    n.clear_grad()
    s = n.nansum()
    assert s.item() == 8.0
    s.backward()
    assert n.grad.numpy().tolist() == [[1.0, 0.0], [1.0, 1.0]]
    assert np.isnan(pycoll.nanmean(_t([[np.nan, np.nan]]), axis=1).item())
    c = pycoll.count_nonzero(pycoll.to_tensor([[0, 1, 2], [0, 0, 3]]), axis=1)
    assert c.numpy().tolist() == [2, 1] and c.dtype == np.int64
    b = pycoll.bincount(pycoll.to_tensor([1, 1, 3]))
    assert b.numpy().tolist() == [0, 2, 0, 1] and b.dtype == np.int64
    b = pycoll.bincount(pycoll.to_tensor([1, 1, 3]), weights=_t([0.5, 1.0, 2.0]), minlength=5)
    assert b.numpy().tolist() == [0.0, 1.5, 0.0, 2.0, 0.0] and b.dtype == np.float32
    with pytest.raises(ValueError, match="non-negative"):
        pycoll.bincount(pycoll.to_tensor([1, -1]))
    # paddle 3.3.1: integer (and float64) weights sum in float64, float32 ones in float32
    for dtype, summed in [("int32", np.float64), ("int64", np.float64), ("float64", np.float64)]:
        b = pycoll.bincount(pycoll.to_tensor([0, 1, 1]), weights=pycoll.to_tensor([1, 2, 3], dtype=dtype))
        assert b.numpy().tolist() == [1.0, 5.0] and b.dtype == summed, (dtype, b.dtype)
    with pytest.raises(ValueError, match=r"weights must have x's shape \[3\], got \[2\]"):
        pycoll.bincount(pycoll.to_tensor([0, 1, 1]), weights=_t([1.0, 2.0]))
    with pytest.raises(ValueError, match="indices' dtype and must be int32 or int64, got 'float32'"):
        pycoll.cummax(_t([1.0, 2.0]), dtype="float32")  # paddle: "dtype of indices must be INT32 or INT64"
    assert pycoll.cummin(_t([2.0, 1.0]), dtype="int32")[1].dtype == np.int32


def test_unique_searchsorted_bucketize():
    # paddle 3.3.1
    out, index, inverse, counts = pycoll.unique(pycoll.to_tensor([2, 3, 3, 1, 5, 3]), return_index=True,
                                                return_inverse=True, return_counts=True)
    assert [t.numpy().tolist() for t in (out, index, inverse, counts)] == [
        [1, 2, 3, 5], [3, 0, 1, 4], [1, 2, 2, 0, 3, 2], [1, 1, 3, 1]]
    assert index.dtype == np.int64
    out, inverse, counts = pycoll.unique(pycoll.to_tensor([[2, 1], [2, 1], [0, 3]]), axis=0, return_inverse=True,
                                         return_counts=True)
    assert [t.numpy().tolist() for t in (out, inverse, counts)] == [[[0, 3], [2, 1]], [1, 1, 0], [1, 2]]
    s, v = _t([[1.0, 3.0, 5.0, 7.0], [2.0, 4.0, 6.0, 8.0]]), _t([[3.0, 6.0], [1.0, 9.0]])
    assert pycoll.searchsorted(s, v).numpy().tolist() == [[1, 3], [0, 4]]
    assert pycoll.searchsorted(s, v, right=True).numpy().tolist() == [[2, 3], [0, 4]]
    assert pycoll.searchsorted(s, v, out_int32=True).dtype == np.int32
    assert pycoll.bucketize(v, _t([1.0, 3.0, 5.0])).numpy().tolist() == [[1, 3], [0, 3]]
    assert pycoll.bucketize(v, _t([1.0, 3.0, 5.0]), right=True).numpy().tolist() == [[2, 3], [1, 3]]


# ---- scan_ops ----------------------------------------------------------------------------

def test_running_ops_follow_paddle():
    # paddle 3.3.1
    c = _t([[1.0, 2.0, 0.5], [3.0, 0.0, 2.0]], grad=True)
    out = pycoll.cumprod(c, dim=1)
    assert out.numpy().tolist() == [[1.0, 2.0, 1.0], [3.0, 0.0, 0.0]]
    out.sum().backward()
    assert c.grad.numpy().tolist() == [[4.0, 1.5, 2.0], [1.0, 9.0, 0.0]]
    assert pycoll.cumprod(pycoll.to_tensor([1, 2, 3]), dim=0).dtype == np.int64
    c = _t([[1.0, 3.0, 2.0, 3.0], [0.0, -1.0, 5.0, 5.0]], grad=True)
    values, index = pycoll.cummax(c, axis=1)
    assert values.numpy().tolist() == [[1.0, 3.0, 3.0, 3.0], [0.0, 0.0, 5.0, 5.0]]
    assert index.numpy().tolist() == [[0, 1, 1, 3], [0, 0, 2, 3]]
    values.sum().backward()
    assert c.grad.numpy().tolist() == [[1.0, 2.0, 0.0, 1.0], [2.0, 0.0, 1.0, 1.0]]
    values, index = c.cummin(axis=1)
    assert index.numpy().tolist() == [[0, 0, 0, 0], [0, 1, 1, 1]]
    assert pycoll.cummax(c)[0].numpy().tolist() == [1.0, 3.0, 3.0, 3.0, 3.0, 3.0, 5.0, 5.0]
    lc = pycoll.logcumsumexp(pycoll.to_tensor([[1, 2], [3, 4]]))
    assert lc.dtype == np.float32
    np.testing.assert_allclose(lc.numpy(), [1.0, 2.3132617, 3.4076061, 4.4401898], rtol=1e-6)
    d = _t([[1.0, 4.0, 9.0], [2.0, 2.0, 5.0]])
    assert pycoll.diff(d).numpy().tolist() == [[3.0, 5.0], [0.0, 3.0]]
    assert d.diff(n=2).numpy().tolist() == [[2.0], [3.0]]
    assert pycoll.diff(d, axis=0).numpy().tolist() == [[1.0, -2.0, -4.0]]
    assert pycoll.diff(d, prepend=_t([[0.0], [0.0]]), append=_t([[10.0], [10.0]])).numpy().tolist() == [
        [1.0, 3.0, 5.0, 1.0], [2.0, 0.0, 3.0, 5.0]]
    assert pycoll.diff(pycoll.to_tensor([True, True, False])).numpy().tolist() == [False, True]


def test_running_ops_gradients():
    a = np.random.default_rng(5).standard_normal((3, 4))
    gradcheck(lambda t: pycoll.cumprod(t, dim=1), [a])
    with_zero = a.copy()
    with_zero[1, 1] = 0.0
    with_zero[2, 0] = 0.0
    gradcheck(lambda t: pycoll.cumprod(t, dim=1), [with_zero])
    gradcheck(lambda t: pycoll.logcumsumexp(t, axis=0), [a])
    gradcheck(lambda t: pycoll.cummin(t, axis=1)[0], [a])
    gradcheck(lambda t: pycoll.diff(t, n=2, axis=1), [a])
    x = pycoll.to_tensor([1.0, 2.0, 3.0])
    x.cumprod_(0)
    assert x.numpy().tolist() == [1.0, 2.0, 6.0]


def test_an_element_taken_by_integer_index_is_a_view_as_paddles():
    # paddle 3.3.1: x[0], m[1, 1], m[1][0] and x[to_tensor(0)] share x's memory
    x = _t([1.0, 2.0, 3.0])
    x[0].zero_()
    m = _t([[1.0, 2.0], [3.0, 4.0]])
    m[1, 1].fill_(9.0)
    m[1][0].fill_(7.0)
    kept = x[pycoll.to_tensor(2)]
    x.add_(pycoll.ones([3]))
    assert x.numpy().tolist() == [1.0, 3.0, 4.0] and m.numpy().tolist() == [[1.0, 2.0], [7.0, 9.0]]
    assert float(kept) == 4.0 and kept.shape == []
    assert x[pycoll.to_tensor([2])].shape == [1], "an index array of one element still gathers a copy"
    # in the graph the write reaches y, with exact gradients (paddle's leaves a.grad [2, 2, 2])
    a = _t([1.0, 2.0, 3.0], grad=True)
    y = a * 2
    y[0].zero_()
    y.sum().backward()
    assert y.numpy().tolist() == [0.0, 4.0, 6.0] and _grads(a) == [[0.0, 2.0, 2.0]]


def test_diagonal_and_the_real_and_imaginary_parts_are_views_as_paddles():
    # paddle 3.3.1: x.diagonal().fill_(1) makes the identity; real(z).zero_() zeroes z's real parts
    x = pycoll.zeros([2, 3, 3])
    x.diagonal(axis1=1, axis2=2).fill_(1.0)
    x.diagonal(offset=1, axis1=1, axis2=2)[0].fill_(5.0)
    assert x.numpy()[1].tolist() == np.eye(3).tolist() and x.numpy()[0, 0, 1] == 5.0
    z = pycoll.to_tensor(np.array([1 + 2j, 3 + 4j], np.complex64))
    pycoll.real(z).zero_()
    pycoll.imag(z).add_(pycoll.ones([2]))
    assert z.numpy().tolist() == [3j, 5j]
    # gradients as before: the diagonal's back into place, the real part's as a real gradient
    a = _t([[1.0, 2.0], [3.0, 4.0]], grad=True)
    (a.diagonal() * pycoll.to_tensor([2.0, 3.0])).sum().backward()
    assert _grads(a) == [[[2.0, 0.0], [0.0, 3.0]]]
    assert pycoll.real(_t([1.0, 2.0])).numpy().tolist() == [1.0, 2.0]


def test_views_taken_before_an_in_place_op_on_their_base_in_the_graph_see_it():
    # paddle and torch: y and r share x's memory, so x.scale_(10) reaches them; pycoll's in-place op
    # in the graph gives x new memory, and the views are taken again of it (their gradients with it)
    leaf = _t([1.0, 2.0, 3.0, 4.0], grad=True)
    x = leaf * 2
    y, r = x[:2], x.reshape([2, 2])
    first = y[0]
    x.scale_(10)
    assert y.numpy().tolist() == [20.0, 40.0] and r.numpy().tolist() == [[20.0, 40.0], [60.0, 80.0]]
    assert float(first) == 20.0, "a view of a view follows too"
    y.sum().backward()
    assert _grads(leaf) == [[20.0, 20.0, 0.0, 0.0]]  # torch's; paddle 3.3.1 gives [2, 2, 0, 0]
    # copy_ into an op's output (new memory too) reaches its views as well
    x = _t([1.0, 2.0, 3.0], grad=True) * 1
    head = x[:2]
    x.copy_(pycoll.full([3], 9.0))
    assert head.numpy().tolist() == [9.0, 9.0]


def test_astype_to_its_own_dtype_as_real_as_complex_and_unfold_are_views_as_paddles():
    x = _t([1.0, 2.0, 3.0])
    x.astype("float32").add_(pycoll.full([3], 10.0))  # paddle 3.3.1: shares; cast() copies
    pycoll.cast(x, "float32").add_(pycoll.full([3], 5.0))
    assert x.numpy().tolist() == [11.0, 12.0, 13.0] and x.astype("float64").dtype == pycoll.float64
    c = pycoll.to_tensor(np.array([1 + 2j, 3 + 4j], np.complex64))
    pycoll.as_real(c)[0, 0] = 100.0
    pairs = _t([[1.0, 2.0], [3.0, 4.0]])
    pycoll.as_complex(pairs).zero_()
    v = pycoll.arange(6, dtype="float32")
    windows = v.unfold(0, 2, 2)
    v.add_(pycoll.ones([6]))
    assert c.numpy().tolist() == [100 + 2j, 3 + 4j] and pairs.numpy().tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert windows.numpy().tolist() == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    # their gradients as before
    leaf = _t([[1.0, 2.0]], grad=True)
    (pycoll.as_real(pycoll.as_complex(leaf * 2)) * 3).sum().backward()
    w = _t([1.0, 2.0, 3.0, 4.0], grad=True)
    (w.unfold(0, 2, 1) * 1.0).sum().backward()
    assert _grads(leaf, w) == [[[6.0, 6.0]], [1.0, 2.0, 2.0, 1.0]]


def test_an_integer_mean_put_along_an_axis_is_floored():
    # paddle 3.3.1 (measured): (0 - 1 - 1) / 3 -> -1, (-1 - 2) / 2 -> -2; a float division
    # truncated (towards zero) gave 0 and -1
    x = pycoll.to_tensor(np.array([[0], [7]], "int32"))
    idx = pycoll.to_tensor(np.array([[0], [0]], "int64"))
    v = pycoll.to_tensor(np.array([[-1], [-1]], "int32"))
    assert pycoll.put_along_axis(x, idx, v, 0, reduce="mean").numpy().ravel().tolist() == [-1, 7]
    v2 = pycoll.to_tensor(np.array([[-1], [-2]], "int32"))
    got = pycoll.put_along_axis(x, idx, v2, 0, reduce="mean", include_self=False)
    assert got.numpy().ravel().tolist() == [-2, 7] and got.dtype == np.int32
    s = pycoll.scatter_reduce(pycoll.to_tensor(np.array([0, 7], "int64")), 0, pycoll.to_tensor(np.array([0, 0], "int64")),
                              pycoll.to_tensor(np.array([-1, -1], "int64")), "mean")
    assert s.numpy().tolist() == [-1, 7]


def test_along_axis_indices_that_cannot_broadcast_and_rot90_of_a_vector_are_named():
    x, rows = pycoll.ones([4, 3]), pycoll.to_tensor([[0], [1]])
    for call in (lambda: pycoll.take_along_axis(x, rows, 1), lambda: pycoll.put_along_axis(x, rows, 1.0, 1)):
        with pytest.raises(ValueError, match=r"indices has shape \[2, 1\]; away from axis 1 each of its dimensions "
                                             r"must be 1 or x's \(\[4, 3\]\) to broadcast, dimension 0 is 2"):
            call()
    assert pycoll.take_along_axis(x, pycoll.to_tensor([[0, 1]]), 0, broadcast=False).shape == [1, 2]  # paddle's too
    with pytest.raises(ValueError, match=r"rot90: x must have at least 2 dimensions .* got shape \[3\]"):
        pycoll.rot90(pycoll.ones([3]))
