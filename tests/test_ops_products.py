"""Products and distances (pycoll.product_ops), the creation additions (logspace, assign, tolist,
DLPack, increment) and the random tensors of pycoll.sampling: values measured on paddle 3.3.1
(said where) or NumPy's, gradients against finite differences, dtypes as paddle gives them."""
import numpy as np
import pytest

import pycoll
from test_gradcheck import gradcheck

RNG = np.random.default_rng(11)
M = RNG.standard_normal((3, 4))
N = RNG.standard_normal((4, 2))
V = RNG.standard_normal(4)


def _v(t):
    return t.numpy().tolist()


def test_products_match_paddle():
    # paddle 3.3.1
    a, b = pycoll.to_tensor([[1.0, 2.0], [3.0, 4.0]]), pycoll.to_tensor([[5.0, 6.0], [7.0, 8.0]])
    v = pycoll.to_tensor([1.0, -1.0])
    assert _v(pycoll.mm(a, b)) == [[19.0, 22.0], [43.0, 50.0]] and _v(pycoll.mv(a, v)) == [-1.0, -1.0]
    assert pycoll.dot(v, v).item() == 2.0 and _v(a.dot(b)) == [17.0, 53.0]
    assert _v(pycoll.outer(v, pycoll.to_tensor([1.0, 2.0, 3.0]))) == [[1.0, 2.0, 3.0], [-1.0, -2.0, -3.0]]
    assert _v(pycoll.inner(a, b)) == [[17.0, 23.0], [39.0, 53.0]]
    np.testing.assert_array_equal(pycoll.kron(a, b).numpy(), np.kron(a.numpy(), b.numpy()))
    c, d = pycoll.to_tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]), pycoll.to_tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert _v(pycoll.cross(c, d)) == [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]] and pycoll.cross(c.T, d.T).shape == [3, 2]
    assert pycoll.tensordot(pycoll.ones([2, 3, 4]), pycoll.ones([3, 4, 5])).shape == [2, 5]
    assert pycoll.tensordot(pycoll.ones([2, 3]), pycoll.ones([2, 3]), axes=[[0, 1], [0, 1]]).shape == []
    assert pycoll.tensordot(pycoll.ones([2, 3]), pycoll.ones([2, 3]), axes=[1]).shape == [2, 2]
    assert _v(pycoll.addmm(pycoll.ones([2, 2]), a, b, beta=0.5, alpha=2.0)) == [[38.5, 44.5], [86.5, 100.5]]
    assert _v(pycoll.add_n([a, b, a])) == [[7.0, 10.0], [13.0, 16.0]]
    with pytest.raises(ValueError, match="mv"):
        pycoll.mv(a, pycoll.ones([3]))


def test_add_n_without_gradients_sums_in_one_buffer_and_leaves_its_inputs_alone():
    parts = [pycoll.to_tensor(RNG.standard_normal((3, 2)).astype(np.float32)) for _ in range(50)]
    before = [p.numpy().copy() for p in parts]
    total = pycoll.add_n(parts)
    assert total.stop_gradient and total.dtype == pycoll.float32
    np.testing.assert_allclose(total.numpy(), np.sum(before, axis=0), rtol=1e-5)
    assert all(np.array_equal(p.numpy(), b) for p, b in zip(parts, before))  # nothing written in place
    assert _v(pycoll.add_n([pycoll.to_tensor([True, False])] * 3)) == [True, False]  # paddle's bool add: or
    with pytest.raises(TypeError, match="paddle promotes only between floating-point"):  # the pairwise path's
        pycoll.add_n([pycoll.to_tensor([1.0]), pycoll.to_tensor([1]), pycoll.to_tensor([2.0])])



@pytest.mark.parametrize("grad", [False, True])
def test_add_n_sums_16_bit_floats_in_float32_as_paddle(grad):
    # paddle 3.3.1: float16 [2048] + 8 x [1] -> [2056] (float16 running sums stall at 2048)
    parts = [pycoll.to_tensor([2048.0], dtype="float16", stop_gradient=not grad)] + \
            [pycoll.to_tensor([1.0], dtype="float16", stop_gradient=not grad) for _ in range(8)]
    total = pycoll.add_n(parts)
    assert total.dtype == pycoll.float16 and total.astype("float32").numpy().tolist() == [2056.0]
    if grad:
        total.sum().backward()
        assert parts[1].grad.dtype == pycoll.float16 and parts[1].grad.numpy().tolist() == [1.0]
    with pytest.raises(ValueError, match="0-d tensors, which have no axis"):  # paddle's ValueError
        pycoll.concat([pycoll.to_tensor(1.0), pycoll.to_tensor(2.0)])


def test_distances_match_paddle():
    # paddle 3.3.1
    x, y = pycoll.to_tensor([[0.0, 0.0], [3.0, 4.0]]), pycoll.to_tensor([[0.0, 0.0], [1.0, 1.0], [3.0, 0.0]])
    np.testing.assert_allclose(pycoll.cdist(x, y).numpy(), [[0.0, 1.4142135, 3.0], [5.0, 3.6055512, 4.0]], rtol=1e-6)
    assert _v(pycoll.cdist(x, y, p=1)) == [[0.0, 2.0, 3.0], [7.0, 5.0, 4.0]]
    a, b = pycoll.to_tensor([[1.0, 2.0], [3.0, 4.0]], stop_gradient=False), pycoll.to_tensor([[5.0, 6.0], [7.0, 8.0]])
    assert [pycoll.dist(a, b, p).item() for p in (2, 1, float("inf"), 0)] == [8.0, 16.0, 4.0, 4.0]
    pycoll.dist(a, b, p=float("inf")).backward()  # every element at the maximum gets the whole gradient
    assert _v(a.grad) == [[-1.0, -1.0], [-1.0, -1.0]]


@pytest.mark.parametrize("fn, inputs", [
    (lambda x, y: pycoll.mm(x, y), [M, N]),
    (lambda x, y: pycoll.mv(x, y), [M, V]),
    (lambda x, y: pycoll.dot(x, y), [M, M[::-1].copy()]),
    (lambda x, y: pycoll.outer(x, y), [V, N[:, 0].copy()]),
    (lambda x, y: pycoll.inner(x, y), [M, M[:2].copy()]),
    (lambda x, y: pycoll.kron(x, y), [M[:2, :2].copy(), N[:3].copy()]),
    (lambda x, y: pycoll.cross(x, y, axis=0), [M[:3, :2].copy(), N[:3].copy()]),
    (lambda x, y: pycoll.tensordot(x, y, [[1, 0], [0, 1]]), [RNG.standard_normal((2, 3, 4)), RNG.standard_normal((3, 2))]),
    (lambda i, x, y: pycoll.addmm(i, x, y, beta=0.3, alpha=-2.0), [N[0].copy(), M, N]),
    (lambda x, y: pycoll.cdist(x, y), [M, RNG.standard_normal((5, 4))]),
    (lambda x, y: pycoll.cdist(x, y, p=3.0), [M, RNG.standard_normal((2, 4))]),
    (lambda x, y: pycoll.dist(x, y, p=1.5), [M, M[0].copy()]),
    (lambda x, y: pycoll.add_n([x, y, x]), [M, M * 2]),
])
def test_product_gradients(fn, inputs):
    gradcheck(fn, inputs)


def test_tensordot_matches_numpy():
    a, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((4, 3, 5))
    for axes in ([[1, 2], [1, 0]], [[2], [0]]):
        np.testing.assert_allclose(pycoll.tensordot(pycoll.to_tensor(a), pycoll.to_tensor(b), axes).numpy(),
                                   np.tensordot(a, b, axes), rtol=1e-12)
    np.testing.assert_allclose(pycoll.tensordot(pycoll.to_tensor(a), pycoll.to_tensor(b.transpose(2, 0, 1)), 0).numpy(),
                               np.tensordot(a, b.transpose(2, 0, 1), 0), rtol=1e-12)


def test_creation_additions_follow_paddle():
    # paddle 3.3.1
    assert _v(pycoll.logspace(0, 2, 3)) == [1.0, 10.0, 100.0] and pycoll.logspace(0, 3, 4, base=2).dtype == np.float32
    assert _v(pycoll.logspace(0, 3, 4, dtype="int64")) == [1, 10, 100, 1000]
    assert _v(pycoll.assign(np.array([1, 2]))) == [1, 2] and pycoll.assign([1.5, 2.0]).dtype == np.float64
    a = pycoll.to_tensor([[1.0, 2.0], [3.0, 4.0]], stop_gradient=False)
    out = pycoll.zeros([2, 2])
    assert pycoll.assign(a, out) is out and _v(out) == [[1.0, 2.0], [3.0, 4.0]]
    copy = pycoll.assign(a)
    assert copy.array is not a.array
    (copy * 3).sum().backward()
    assert _v(a.grad) == [[3.0] * 2] * 2
    i = pycoll.to_tensor([1.0])
    assert pycoll.increment(i, 2.0) is i and _v(i) == [3.0]
    with pytest.raises(ValueError, match="one element"):
        pycoll.increment(pycoll.ones([2]))
    assert pycoll.tolist(a) == [[1.0, 2.0], [3.0, 4.0]]
    shared = pycoll.from_dlpack(pycoll.to_dlpack(a))
    assert np.shares_memory(shared.numpy(), a.numpy())
    with pycoll.no_grad():
        shared[0, 0] = 10.0  # paddle's docs: shared both ways (NumPy made the capsule's array read-only)
        shared.add_(pycoll.ones([2, 2]))
        assert a.numpy().tolist() == [[11.0, 3.0], [4.0, 5.0]]
        column = pycoll.from_dlpack(pycoll.to_dlpack(a[:, 1:]))  # strided: the view's elements only
        column[1, 0] = 7.0
        assert a.numpy().tolist() == [[11.0, 3.0], [4.0, 7.0]]
    assert np.shares_memory(pycoll.from_dlpack(a.numpy()).numpy(), a.numpy())


def test_random_tensors():
    # dtypes and shapes from paddle 3.3.1; values through pycoll's seeded generator
    a = pycoll.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    pycoll.seed(3)
    r = pycoll.randint_like(a, 0, 5)
    assert r.dtype == np.float32 and set(r.numpy().ravel().tolist()) <= {0, 1, 2, 3, 4}
    assert pycoll.randint_like(pycoll.ones([2], dtype="int32"), 5).dtype == np.int32
    assert pycoll.rand_like(a).dtype == np.float32 and pycoll.randn_like(pycoll.ones([2], dtype="float64")).dtype == np.float64
    p = pycoll.randperm(50)
    assert p.dtype == np.int64 and sorted(p.numpy().tolist()) == list(range(50))
    assert pycoll.normal(shape=[2]).dtype == np.float32 and pycoll.normal(pycoll.ones([3]), 2.0).shape == [3]
    wide = pycoll.normal(pycoll.full([20000], 5.0), pycoll.full([20000], 0.5)).numpy()
    assert abs(wide.mean() - 5) < 0.02 and abs(wide.std() - 0.5) < 0.02
    # a complex mean: complex normal draws, each part N(0, std ** 2 / 2) around the mean's (paddle's)
    cplx = pycoll.normal(mean=1 + 2j, std=2.0, shape=[40000]).numpy()
    assert cplx.dtype == np.complex64 and abs(cplx.real.mean() - 1) < 0.05 and abs(cplx.imag.mean() - 2) < 0.05
    assert abs(cplx.real.std() - 2 ** 0.5) < 0.05 and abs(cplx.imag.std() - 2 ** 0.5) < 0.05
    per_element = pycoll.normal(pycoll.to_tensor([1 + 1j, 2 + 2j], dtype="complex128"), pycoll.to_tensor([0.0, 0.0]))
    assert per_element.dtype == np.complex128 and _v(per_element) == [1 + 1j, 2 + 2j]
    assert pycoll.log_normal(mean=1 + 1j, shape=[3]).dtype == np.complex64
    with pytest.raises(TypeError, match="std must be a floating-point tensor"):
        pycoll.normal(0.0, pycoll.to_tensor([1 + 1j]))
    u = pycoll.uniform([20000], min=-2.0, max=3.0).numpy()
    assert u.dtype == np.float32 and u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.05
    assert np.array_equal(pycoll.uniform([4], seed=9).numpy(), pycoll.uniform([4], seed=9).numpy())
    assert pycoll.standard_normal([2, 3]).shape == [2, 3]
    assert _v(pycoll.bernoulli(pycoll.to_tensor([0.0, 1.0]))) == [0.0, 1.0]
    assert _v(pycoll.bernoulli(pycoll.to_tensor([0.5, 0.5]), p=1.0)) == [1.0, 1.0]
    assert _v(pycoll.multinomial(pycoll.to_tensor([0.0, 1.0, 0.0]), 2, replacement=True)) == [1, 1]
    assert _v(pycoll.to_tensor([[0.0, 1.0], [1.0, 0.0]]).multinomial()) == [[1], [0]]
    draws = pycoll.multinomial(pycoll.to_tensor([1.0, 2.0, 3.0, 4.0]), 4).numpy()
    assert sorted(draws.tolist()) == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="num_samples"):
        pycoll.multinomial(pycoll.to_tensor([0.0, 1.0]), 2)
    with pytest.raises(ValueError, match="num_samples must be an int > 0, got 0"):
        pycoll.multinomial(pycoll.to_tensor([0.5, 1.0]), 0)
    with pytest.raises(ValueError, match="x holds NaN"):
        pycoll.multinomial(pycoll.to_tensor([0.5, np.nan]), 1)
    assert _v(pycoll.multinomial(pycoll.to_tensor([[0.2, np.inf, 0.3], [1.0, 0.0, 0.0]]), 1)) == [[1], [0]]
    weights = np.array([[0.1, 0.0, 0.6, 0.3], [0.0, 0.0, 5.0, 0.0], [1.0, 1.0, 1.0, 1.0]])
    freq = [np.bincount(row, minlength=4) / 20000
            for row in pycoll.multinomial(pycoll.to_tensor(weights), 20000, replacement=True).numpy()]
    np.testing.assert_allclose(freq, weights / weights.sum(1, keepdims=True), atol=0.012)
    pairs = pycoll.multinomial(pycoll.to_tensor(np.tile([0.1, 0.2, 0.3, 0.4], (20000, 1))), 2).numpy()
    assert (pairs[:, 0] != pairs[:, 1]).all()
    # a draw without replacement, in order: P(first 3, then 2) = 0.4 * 0.3 / 0.6
    assert abs(((pairs[:, 0] == 3) & (pairs[:, 1] == 2)).mean() - 0.2) < 0.012
    po = pycoll.poisson(pycoll.full([20000], 3.0)).numpy()
    assert po.dtype == np.float32 and abs(po.mean() - 3) < 0.05
    pycoll.seed(3)
    assert _v(pycoll.randint_like(a, 0, 5)) == _v(r)  # the seed replays the draws
