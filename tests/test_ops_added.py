"""unique_consecutive, isin, histogram, trapezoid, masked_scatter and F.diag_embed; expected
values measured on paddle 3.3.1 (CPU) and written in, or from NumPy."""
import numpy as np
import pytest
from test_gradcheck import gradcheck

import pycoll
import pycoll.nn.functional as F


def test_unique_consecutive_and_isin():
    out, inverse, counts = pycoll.unique_consecutive(pycoll.to_tensor([1, 1, 2, 2, 2, 3, 1, 1]),
                                                     return_inverse=True, return_counts=True)
    assert [t.numpy().tolist() for t in (out, inverse, counts)] == [[1, 2, 3, 1], [0, 0, 1, 1, 1, 2, 3, 3],
                                                                     [2, 3, 1, 2]]
    out, inverse, counts = pycoll.unique_consecutive(pycoll.to_tensor([[1, 2], [1, 2], [3, 4]]), axis=0,
                                                     return_inverse=True, return_counts=True, dtype="int32")
    assert out.numpy().tolist() == [[1, 2], [3, 4]] and inverse.numpy().tolist() == [0, 0, 1]
    assert counts.numpy().tolist() == [2, 1] and counts.dtype == np.int32
    assert pycoll.unique_consecutive(pycoll.to_tensor([5.0])).numpy().tolist() == [5.0]
    found = pycoll.isin(pycoll.to_tensor([[1, 2], [3, 4]]), pycoll.to_tensor([2, 3, 9]))
    assert found.numpy().tolist() == [[False, True], [True, False]] and found.dtype == np.bool_
    assert pycoll.isin(pycoll.to_tensor([1.0, 2]), pycoll.to_tensor([2.0]), invert=True).numpy().tolist() == [True,
                                                                                                              False]


def test_histogram_follows_paddle():
    data = pycoll.to_tensor([1.0, 2, 1, 4, 5])
    h = pycoll.histogram(data, bins=4)  # min == max == 0: the data's range
    assert h.numpy().tolist() == [2, 1, 0, 2] and h.dtype == np.int64
    assert pycoll.histogram(data, bins=3, min=1, max=4).numpy().tolist() == [2, 1, 1]
    w = pycoll.to_tensor([1.0, 2, 3])
    d = pycoll.histogram(pycoll.to_tensor([1.0, 2, 1]), bins=4, min=0, max=3, weight=w, density=True)
    np.testing.assert_allclose(d.numpy(), [0.0, 0.8888889, 0.44444445, 0.0], rtol=1e-6)
    assert pycoll.histogram(pycoll.to_tensor([1.0, 2, 1]), bins=2, weight=w).numpy().tolist() == [4.0, 2.0]
    with pytest.raises(ValueError, match="bins"):
        pycoll.histogram(data, bins=0)


def test_trapezoid_values_and_gradient():
    y = pycoll.to_tensor([[1.0, 2, 4], [0, 1, 3]])
    assert pycoll.trapezoid(y).numpy().tolist() == [4.5, 2.5]
    assert pycoll.trapezoid(pycoll.to_tensor([1.0, 2, 4]), dx=0.5).item() == 2.25
    assert pycoll.trapezoid(pycoll.to_tensor([1.0, 2, 4]), x=pycoll.to_tensor([0.0, 1, 3])).item() == 7.5
    a = np.random.default_rng(1).standard_normal((3, 4))
    xs = np.cumsum(np.random.default_rng(2).random(3))
    np.testing.assert_allclose(pycoll.trapezoid(pycoll.to_tensor(a), pycoll.to_tensor(xs), axis=0).numpy(),
                               ((a[1:] + a[:-1]) * np.diff(xs)[:, None]).sum(0) / 2, rtol=1e-12)
    gradcheck(lambda t: pycoll.trapezoid(t, pycoll.to_tensor(xs), axis=0), [a])
    with pytest.raises(ValueError, match="x or dx"):
        pycoll.trapezoid(y, x=pycoll.to_tensor([0.0, 1, 2]), dx=1.0)


def test_masked_scatter_and_diag_embed_alias():
    x = pycoll.to_tensor([[1.0, 2], [3, 4]], stop_gradient=False)
    v = pycoll.to_tensor([10.0, 20, 30, 40], stop_gradient=False)
    out = pycoll.masked_scatter(x, pycoll.to_tensor([[True, False], [False, True]]), v)
    assert out.numpy().tolist() == [[10.0, 2.0], [3.0, 20.0]]
    (out * pycoll.to_tensor([[1.0, 2], [3, 4]])).sum().backward()
    assert x.grad.numpy().tolist() == [[0.0, 2.0], [3.0, 0.0]] and v.grad.numpy().tolist() == [1.0, 4.0, 0.0, 0.0]
    assert x.masked_scatter(pycoll.to_tensor([True, False]), v).numpy().tolist() == [[10.0, 2.0], [20.0, 4.0]]
    with pytest.raises(ValueError, match="value has only"):
        pycoll.masked_scatter(x, pycoll.to_tensor([True, True]), pycoll.to_tensor([1.0]))
    assert F.diag_embed(pycoll.to_tensor([1.0, 2])).numpy().tolist() == [[1.0, 0.0], [0.0, 2.0]]
