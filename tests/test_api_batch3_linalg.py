"""paddle 3.3.1's linalg functions pycoll lacked: lu_solve, cholesky_inverse, householder_product,
ormqr, svd_lowrank and pca_lowrank. Numbers marked "paddle" were measured on paddle 3.3.1 (CPU,
float64) with the same inputs; gradients paddle cannot give (householder_product's) or gives wrong
(lu_solve's with trans='T' for lu) are checked against central differences."""
import numpy as np
import pytest

import pycoll
from pycoll import linalg
from numeric import central_grad

A = np.array([[4.0, 3.0, 2.0], [6.0, 3.0, 1.0], [2.0, 5.0, 7.0]])
B = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
W = np.array([[1.0, -1.0], [2.0, 0.5], [0.0, 3.0]])  # weights of the summed output
H = np.array([[1.0, 0.5, -0.2], [0.3, 2.0, 0.7], [-0.4, 0.1, 1.5], [0.25, -0.6, 0.9]])
TAU = np.array([1.2, 0.8, 0.5])


def T(v, grad=False):
    return pycoll.to_tensor(np.asarray(v, dtype=np.float64), stop_gradient=not grad)


def test_lu_solve_values_and_gradients():
    a, b = T(A, grad=True), T(B, grad=True)
    lu, pivots = linalg.lu(a)
    x = linalg.lu_solve(b, lu, pivots)
    np.testing.assert_allclose(x.numpy(), [[4, 3.75], [-9, -8], [6, 5.5]], rtol=1e-12)  # paddle
    (x * T(W)).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), [[8, -4.5], [-4.625, 2.375], [-1.625, 1.375]], rtol=1e-12)  # paddle
    np.testing.assert_allclose(a.grad.numpy(), [[-15.125, 36, -23.25], [9.59375, -22.625, 14.6875],
                                                [1.34375, -3.625, 2.1875]], rtol=1e-12)  # paddle
    a, b = T(A, grad=True), T(B, grad=True)
    lu, pivots = linalg.lu(a)
    x = linalg.lu_solve(b, lu, pivots, trans="T")
    np.testing.assert_allclose(x.numpy(), [[-2, -2], [1.125, 1.25], [1.125, 1.25]], rtol=1e-12)  # paddle
    (x * T(W)).sum().backward()
    np.testing.assert_allclose(b.grad.numpy(), [[0.75, 3.8125], [-1, -9.5], [0.5, 6.125]], rtol=1e-12)  # paddle
    expected = central_grad(lambda m: (np.linalg.solve(m.T, B) * W).sum(), A)
    np.testing.assert_allclose(a.grad.numpy(), expected, rtol=1e-6)  # paddle 3.3.1's is wrong here
    np.testing.assert_array_equal(linalg.lu_solve(T(B), lu, pivots, trans="C").numpy(), x.numpy())
    lub, pivb = linalg.lu(T(np.stack([A, A + np.eye(3)])))
    batch = linalg.lu_solve(T(B), lub, pivb).numpy()  # b broadcast over lu's batch
    np.testing.assert_allclose(batch[1], [[-0.9756097560975611, -0.7804878048780489],
                                          [2.3658536585365857, 2.2926829268292686],
                                          [-0.6097560975609759, -0.4878048780487807]], rtol=1e-12)  # paddle
    with pytest.raises(ValueError, match="trans must be"):
        linalg.lu_solve(T(B), lu, pivots, trans="X")
    with pytest.raises(ValueError, match="b must be matrices"):
        linalg.lu_solve(T(B[:2]), lu, pivots)


def test_cholesky_inverse_values_and_gradient():
    low = np.array([[2.0, 0.0, 0.0], [1.0, 3.0, 0.0], [0.5, -1.0, 1.5]])
    x = T(low, grad=True)
    out = linalg.cholesky_inverse(x)
    expected = [[0.35493827160493824, -0.11728395061728394, -0.18518518518518517],
                [-0.11728395061728392, 0.16049382716049382, 0.14814814814814814],
                [-0.18518518518518515, 0.14814814814814814, 0.4444444444444444]]  # paddle
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)
    (out * T(np.arange(9.0).reshape(3, 3))).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0.9753086419753083, 0.2551440329218104, 0.8655692729766805],
                                                [-0.9135802469135803, -0.5596707818930043, -2.307270233196159],
                                                [-2.0740740740740735, -1.234567901234568, -5.069958847736625]],
                               rtol=1e-12)  # paddle
    np.testing.assert_allclose(T(low.T).cholesky_inverse(upper=True).numpy(), expected, rtol=1e-12)  # paddle
    with pytest.raises(ValueError, match="2-D"):
        linalg.cholesky_inverse(T(np.stack([low, low])))


HOUSEHOLDER_Q = [[-0.19999999999999996, -0.25439999999999996, 0.40879200000000004],  # paddle
                 [-0.36, 0.1236799999999999, -0.13336240000000002],
                 [0.48, 0.021759999999999988, 0.31088319999999997],
                 [-0.3, 0.4164000000000001, -0.19420200000000004]]


def _numpy_householder(x, tau):
    q = np.eye(x.shape[0])
    for i in range(len(tau)):
        v = np.where(np.arange(x.shape[0]) > i, x[:, i], 0.0)
        v[i] = 1
        q = q - tau[i] * (q @ v)[:, None] * v[None, :]
    return q[:, :x.shape[1]]


def test_householder_product_values_batches_and_gradients():
    x, tau = T(H, grad=True), T(TAU, grad=True)
    q = linalg.householder_product(x, tau)
    np.testing.assert_allclose(q.numpy(), HOUSEHOLDER_Q, rtol=1e-12)
    np.testing.assert_array_equal(x.numpy(), H)  # paddle 3.3.1 writes 1s into x's diagonal; pycoll does not
    np.testing.assert_allclose(linalg.householder_product(T(H), T(TAU[:2])).numpy()[:, 2],
                               [0.49056, 0.06716799999999998, 0.7957759999999999, 0.17064000000000001],
                               rtol=1e-12)  # paddle
    batch = linalg.householder_product(T(np.stack([H, 2 * H])), T(np.stack([TAU, TAU / 2]))).numpy()
    np.testing.assert_allclose(batch[0], HOUSEHOLDER_Q, rtol=1e-12)
    np.testing.assert_allclose(batch[1][0], [0.4, -0.3984, 0.468504], rtol=1e-12)  # paddle
    weights = np.arange(12.0).reshape(4, 3)
    (q * T(weights)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), central_grad(lambda m: (_numpy_householder(m, TAU) * weights).sum(), H),
                               rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(tau.grad.numpy(), central_grad(lambda t: (_numpy_householder(H, t) * weights).sum(), TAU),
                               rtol=1e-6)
    with pytest.raises(ValueError, match="M >= N"):
        linalg.householder_product(T(H.T), T(TAU))
    with pytest.raises(TypeError, match="one dtype"):
        linalg.householder_product(T(H), pycoll.to_tensor(TAU.astype(np.float32)))


def test_ormqr_all_four_forms():
    s = np.array([[-114.6, 10.9, 1.1], [-0.304, 38.07, 69.38], [-0.45, -0.17, 62]]) / 100
    tau, y = T([1.55, 1.94, 3.0]), np.arange(6.0).reshape(3, 2) / 10 - 0.2
    qy = [[0.10720379957201401, 0.05036507171302101], [-0.0022530995506989224, -0.09643590981800755],
          [-0.401380174458074, -0.6003434788627086]]  # paddle, Q @ y
    qty = [[0.11139500000000002, 0.0575637], [0.0015448209388049998, -0.09256268437375167],
           [-0.397188974030088, -0.5992350112484675]]  # paddle, Q^T @ y
    np.testing.assert_allclose(linalg.ormqr(T(s), tau, T(y)).numpy(), qy, rtol=1e-12)
    np.testing.assert_allclose(linalg.ormqr(T(s), tau, T(y), transpose=True).numpy(), qty, rtol=1e-12)
    np.testing.assert_allclose(linalg.ormqr(T(s), tau, T(y.T), left=False).numpy(), np.transpose(qty), rtol=1e-12)
    np.testing.assert_allclose(T(s).ormqr(tau, T(y.T), left=False, transpose=True).numpy(), np.transpose(qy),
                               rtol=1e-12)  # paddle
    yy = T(y, grad=True)
    linalg.ormqr(T(s), tau, yy).sum().backward()  # d sum(Q y) / dy = Q^T 1
    np.testing.assert_allclose(yy.grad.numpy(), _numpy_householder(s, tau.numpy()).T @ np.ones((3, 2)), rtol=1e-12)
    with pytest.raises(ValueError, match="cannot multiply"):
        linalg.ormqr(T(s), tau, T(np.ones((2, 2))))


def test_svd_lowrank_and_pca_lowrank_recover_a_low_rank_matrix():
    pycoll.seed(0)
    rng = np.random.RandomState(1)
    low = rng.randn(8, 3) @ rng.randn(3, 5)  # rank 3
    for x in (low, low.T):  # both of paddle's branches (M >= N and M < N)
        u, s, v = linalg.svd_lowrank(T(x), q=4)
        assert u.shape == [x.shape[0], 4] and s.shape == [4] and v.shape == [x.shape[1], 4]
        np.testing.assert_allclose((u.numpy() * s.numpy()) @ v.numpy().T, x, atol=1e-12)
        np.testing.assert_allclose(s.numpy()[:3], np.linalg.svd(x, compute_uv=False)[:3], rtol=1e-12)
        np.testing.assert_allclose(u.numpy().T @ u.numpy(), np.eye(4), atol=1e-12)
    shift = rng.randn(8, 5)
    u, s, v = linalg.svd_lowrank(T(low + shift), q=3, M=T(shift))  # M is subtracted first
    np.testing.assert_allclose((u.numpy() * s.numpy()) @ v.numpy().T, low, atol=1e-12)
    u, s, v = T(low).pca_lowrank()  # q: min(6, M, N) = 5
    assert u.shape == [8, 5] and v.shape == [5, 5]
    np.testing.assert_allclose(s.numpy()[:3], np.linalg.svd(low - low.mean(0), compute_uv=False)[:3], rtol=1e-12)
    x = T(low, grad=True)
    _, s, _ = linalg.svd_lowrank(x, q=3)
    s.sum().backward()  # the nuclear norm's gradient: U V^T
    uu, _, vh = np.linalg.svd(low, full_matrices=False)
    np.testing.assert_allclose(x.grad.numpy(), uu[:, :3] @ vh[:3], atol=1e-9)
    with pytest.raises(ValueError, match=r"q\(=9\) must be non-negative integer"):  # paddle's words
        linalg.svd_lowrank(T(low), q=9)
    with pytest.raises(ValueError, match=r"niter\(=-1\)"):
        linalg.svd_lowrank(T(low), niter=-1)
