"""topk's partition path and batch norm's in-place arithmetic against references computed by
NumPy by hand: the full stable sort for topk (ties in their original order, NaNs largest), the
textbook formulas in float64 for batch norm."""
import numpy as np
import pytest

import pycoll
import pycoll.nn.functional as F


def _stable_first_k(a, axis, k, largest):
    """The first k of NumPy's stable argsort, descending by sorting -rank of the flipped row."""
    if largest:
        back = np.argsort(np.flip(a, axis), axis=axis, kind="stable")
        order = (a.shape[axis] - 1) - np.flip(back, axis)
    else:
        order = np.argsort(a, axis=axis, kind="stable")
    return np.take(order, np.arange(k), axis=axis)


def _data(rng, shape, dtype, kind):
    v = rng.integers(-2, 3, shape).astype(np.float64)  # many ties
    if kind == "nan":
        v[rng.random(shape) < 0.3] = np.nan
        v[rng.random(shape) < 0.1] = np.inf
        v[rng.random(shape) < 0.2] = -0.0
    elif kind == "spread":
        v = rng.standard_normal(shape) * 100
    if np.dtype(dtype).kind != "f":
        v = np.nan_to_num(v, nan=7, posinf=9)
    return v.astype(dtype)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("kind", ["ties", "nan", "spread"])
def test_topk_picks_what_the_stable_sort_picks(dtype, kind):
    rng = np.random.default_rng(3)
    for shape in [(6, 9), (3, 4, 5), (0, 5), (40, 37), (3, 25, 20)]:  # small: sorted whole; large: partitioned
        a = _data(rng, shape, dtype, kind)
        for axis in range(len(shape)):
            n = shape[axis]
            for k in sorted({1, 2, n - 1, n} & set(range(1, n + 1))):
                for largest in (True, False):
                    x = pycoll.to_tensor(a, stop_gradient=np.dtype(dtype).kind != "f")
                    values, index = pycoll.topk(x, k, axis=axis, largest=largest)
                    want = _stable_first_k(a, axis, k, largest)
                    np.testing.assert_array_equal(index.numpy(), want)
                    np.testing.assert_array_equal(values.numpy(), np.take_along_axis(a, want, axis))
                    if np.dtype(dtype).kind == "f":
                        g = rng.standard_normal(values.shape).astype(dtype)
                        (values * pycoll.to_tensor(g)).sum().backward()
                        grad = np.zeros(a.shape, dtype)
                        np.put_along_axis(grad, want, g, axis)
                        np.testing.assert_array_equal(x.grad.numpy(), grad)


def test_topk_nan_rows_and_bad_k():
    a = np.array([[np.nan, 1.0, np.nan, 3.0], [np.nan] * 4], "float32")
    v, i = pycoll.topk(pycoll.to_tensor(a), 3)
    np.testing.assert_array_equal(i.numpy(), [[0, 2, 3], [0, 1, 2]])  # NaNs first, in order
    v, i = pycoll.topk(pycoll.to_tensor(a), 3, largest=False)
    np.testing.assert_array_equal(i.numpy(), [[1, 3, 0], [0, 1, 2]])  # NaNs last
    with pytest.raises(ValueError, match="k must be in"):
        pycoll.topk(pycoll.to_tensor(a), 5)


@pytest.mark.parametrize("dtype,tol", [("float32", 2e-5), ("float64", 1e-12)])
def test_batch_norm_training_matches_the_formulas(dtype, tol):
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((4, 3, 5, 6)) * 2 + 1).astype(dtype)
    g = rng.standard_normal(a.shape).astype(dtype)
    w, b = np.array([0.5, 1.0, 2.0], dtype), np.array([-1.0, 0.0, 1.0], dtype)
    x, wt, bt = (pycoll.to_tensor(v, stop_gradient=False) for v in (a, w, b))
    rm, rv = pycoll.to_tensor(np.zeros(3, "float32")), pycoll.to_tensor(np.ones(3, "float32"))
    y = F.batch_norm(x, rm, rv, wt, bt, training=True)
    (y * pycoll.to_tensor(g)).sum().backward()
    # by hand, in float64
    d, gd = a.astype(np.float64), g.astype(np.float64)
    axes, c = (0, 2, 3), (1, 3, 1, 1)
    mean, var = d.mean(axis=axes), d.var(axis=axes)
    xhat = (d - mean.reshape(c)) / np.sqrt(var.reshape(c) + 1e-5)
    gx = (w.reshape(c) / np.sqrt(var.reshape(c) + 1e-5)) * (
        gd - gd.mean(axis=axes).reshape(c) - xhat * (gd * xhat).mean(axis=axes).reshape(c))
    np.testing.assert_allclose(y.numpy(), xhat * w.reshape(c) + b.reshape(c), rtol=tol, atol=tol)
    np.testing.assert_allclose(x.grad.numpy(), gx, rtol=tol, atol=tol)
    np.testing.assert_allclose(wt.grad.numpy(), (gd * xhat).sum(axis=axes), rtol=tol, atol=tol * 100)
    np.testing.assert_allclose(bt.grad.numpy(), gd.sum(axis=axes), rtol=tol, atol=tol * 100)
    np.testing.assert_allclose(rm.numpy(), 0.1 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.numpy(), 0.9 + 0.1 * var, rtol=1e-5)


def test_float16_batch_norm_sums_in_float32():
    # a float16 batch around 10: its per-channel sum (8 * 32 * 32 * 10 = 81920) overflows float16's
    # 65504 when added in float16; paddle (and pycoll) compute in float32 and round once, so every
    # output is finite and equals the float32 computation rounded
    rng = np.random.default_rng(0)
    x = (10 + rng.standard_normal((8, 3, 32, 32))).astype(np.float16)
    stats = [pycoll.zeros([3]), pycoll.ones([3])]
    t = pycoll.to_tensor(x, stop_gradient=False)
    y = pycoll.nn.functional.batch_norm(t, *[s.astype("float16") for s in stats], training=True)
    assert y.dtype == np.float16 and np.isfinite(y.numpy()).all()
    want = pycoll.nn.functional.batch_norm(pycoll.to_tensor(x.astype(np.float32)), *stats, training=True)
    np.testing.assert_array_equal(y.numpy(), want.numpy().astype(np.float16))  # computed in float32, rounded once
    y.sum().backward()
    assert t.grad.dtype == np.float16 and np.isfinite(t.grad.numpy()).all()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8"])
def test_kthvalue_is_the_stable_sorts_kth_with_its_dtype(dtype):
    """kthvalue through a partition: the value and index the stable sort gives (ties by position,
    NaNs largest), in x's dtype (paddle 3.3.1: int32 in, int32 values, int64 indices), the gradient
    at that index"""
    rng = np.random.default_rng(4)
    a = rng.integers(0, 4, (5, 7)).astype(dtype)
    if dtype.startswith("float"):
        a[rng.random(a.shape) < 0.2] = np.nan
    order = np.argsort(a, axis=1, kind="stable")
    for k in (1, 3, 7):
        x = pycoll.to_tensor(a, stop_gradient=not dtype.startswith("float"))
        v, i = pycoll.kthvalue(x, k, axis=1)
        assert v.dtype == np.dtype(dtype) and i.dtype == np.int64
        np.testing.assert_array_equal(i.numpy(), order[:, k - 1])
        np.testing.assert_array_equal(v.numpy(), a[np.arange(5), order[:, k - 1]])
        if dtype.startswith("float"):
            v.sum().backward()
            want = np.zeros_like(a)
            want[np.arange(5), order[:, k - 1]] = 1
            np.testing.assert_array_equal(x.grad.numpy(), want)
