"""pycoll.linalg's decompositions and solvers (svd, qr, eigh, eig, cholesky, triangular_solve,
cholesky_solve, lstsq, pinv, lu, lu_unpack, matrix_rank, cond, vecdot, matrix_exp): values
against NumPy (and paddle 3.3.1's output conventions and gradients, measured on its CPU build,
where noted), gradients against central differences."""
import numpy as np
import pytest
from test_gradcheck import gradcheck

import pycoll
from pycoll import autograd, linalg

RNG = np.random.default_rng(0)
TALL = RNG.standard_normal((2, 4, 3))
WIDE = RNG.standard_normal((2, 3, 4))
SQ = RNG.standard_normal((2, 3, 3)) + 3 * np.eye(3)  # well conditioned
SPD = SQ @ SQ.transpose(0, 2, 1) + np.eye(3)
RHS = RNG.standard_normal((2, 3, 2))
# paddle 3.3.1's literal examples (its gradients below were measured on its CPU build)
S3 = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.3], [0.5, 0.3, 2.0]])
E3 = np.array([[4.0, 1.0, 0.5], [0.2, 1.0, 0.3], [0.1, -0.4, -2.0]])
WEIGHTS = np.arange(9.0).reshape(3, 3)


def flat(*tensors):
    """The tensors' elements in one 1-D tensor (gradcheck takes one output)."""
    return pycoll.concat([t.reshape([-1]) for t in tensors])


def sym(t):
    """(t + t^T) / 2: a symmetric input whose two triangles move together under perturbation."""
    return (t + t.transpose([0, 2, 1] if t.ndim == 3 else [1, 0])) / 2


def T(a):
    return pycoll.to_tensor(a)


def test_svd_values_shapes_and_gradients():
    for a in (TALL, WIDE):
        u, s, vh = linalg.svd(T(a))
        nu, ns, nvh = np.linalg.svd(a, full_matrices=False)  # LAPACK's signs, which paddle's kernel gives too
        for got, want in ((u, nu), (s, ns), (vh, nvh)):
            np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
        np.testing.assert_allclose((u.numpy() * s.numpy()[:, None, :]) @ vh.numpy(), a, atol=1e-12)
        np.testing.assert_allclose(linalg.svdvals(T(a)).numpy(), ns, atol=1e-12)
        gradcheck(lambda t: flat(*linalg.svd(t)), [a.copy()])
    u, s, vh = linalg.svd(T(TALL), full_matrices=True)
    assert (u.shape, s.shape, vh.shape) == ([2, 4, 4], [2, 3], [2, 3, 3])
    gradcheck(lambda t: linalg.svdvals(t), [TALL.copy()])
    x = pycoll.to_tensor(TALL, stop_gradient=False)
    linalg.svd(x, full_matrices=True)[0][..., 3].sum().backward()  # U's 4th column: not unique, no gradient
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros_like(TALL))  # (paddle 3.3.1's zeros, probe p174)
    # through the first K vectors: the reduced SVD's gradient (paddle 3.3.1 computes it, probe p172)
    weights = pycoll.to_tensor(np.cos(np.arange(12.0)).reshape(4, 3))
    gradcheck(lambda t: (linalg.svd(t, full_matrices=True)[0][..., :3] * weights).sum() + linalg.svd(t)[1].sum(),
              [TALL.copy()])
    with pytest.raises(ValueError, match=r"x must be matrices"):
        linalg.svd(T(np.ones(3)))


def test_qr_modes_values_and_gradients():
    for a in (TALL, WIDE):
        q, r = linalg.qr(T(a))
        nq, nr = np.linalg.qr(a)
        np.testing.assert_allclose(q.numpy(), nq, atol=1e-12)
        np.testing.assert_allclose(r.numpy(), nr, atol=1e-12)
        np.testing.assert_allclose(linalg.qr(T(a), mode="r").numpy(), nr, atol=1e-12)
        gradcheck(lambda t: flat(*linalg.qr(t)), [a.copy()])
    q, r = linalg.qr(T(TALL), mode="complete")
    assert (q.shape, r.shape) == ([2, 4, 4], [2, 4, 3])
    np.testing.assert_allclose(q.numpy() @ r.numpy(), TALL, atol=1e-12)
    gradcheck(lambda t: linalg.qr(t, mode="r"), [TALL.copy()])
    q, r = pycoll.to_tensor(WIDE).qr(mode="complete")  # M <= N: complete is reduced, with a gradient
    assert (q.shape, r.shape) == ([2, 3, 3], [2, 3, 4])
    with pytest.raises(ValueError, match="mode"):
        linalg.qr(T(TALL), mode="full")


def test_eigh_eigvalsh_values_and_gradients():
    w, v = linalg.eigh(T(SPD))
    nw, nv = np.linalg.eigh(SPD)
    np.testing.assert_allclose(w.numpy(), nw, atol=1e-12)
    np.testing.assert_allclose(v.numpy(), nv, atol=1e-12)
    upper = np.triu(SPD) + np.tril(np.full((3, 3), 99.0), -1)
    np.testing.assert_allclose(linalg.eigh(T(upper), UPLO="U")[0].numpy(), nw, atol=1e-12)  # reads the upper one
    np.testing.assert_allclose(pycoll.eigvalsh(T(SPD)).numpy(), nw, atol=1e-12)
    # batched, against central differences (paddle 3.3.1 gets the batch's second matrix wrong)
    gradcheck(lambda t: flat(*linalg.eigh(sym(t))), [SPD.copy()])
    gradcheck(lambda t: linalg.eigvalsh(sym(t)), [SPD.copy()])
    x = pycoll.to_tensor(S3, stop_gradient=False)
    w, v = linalg.eigh(x)
    (w * T([1.0, 2.0, 3.0]) + (v * T(WEIGHTS)).sum(0)).sum().backward()
    paddle_grad = [[5.2795804364297085, -0.38947087866902014, -2.6865701526375982],
                   [-0.38947087866901997, 0.42250411986641023, 2.249906059324695],
                   [-2.6865701526375982, 2.2499060593246947, 0.2979154437038789]]
    np.testing.assert_allclose(x.grad.numpy(), paddle_grad, atol=1e-12)
    with pytest.raises(ValueError, match="UPLO"):
        linalg.eigh(T(SPD), UPLO="X")
    with pytest.raises(ValueError, match="square"):
        linalg.eigh(T(TALL))


def test_eig_eigvals_complex_values_and_paddles_gradient():
    w, v = linalg.eig(T(E3))
    assert w.numpy().dtype == np.complex128 and v.shape == [3, 3]
    nw, nv = np.linalg.eig(E3)
    np.testing.assert_allclose(w.numpy(), nw, atol=1e-12)
    np.testing.assert_allclose(v.numpy(), nv, atol=1e-12)
    np.testing.assert_allclose(E3 @ v.numpy(), v.numpy() * w.numpy(), atol=1e-12)
    np.testing.assert_allclose(pycoll.to_tensor(E3).eigvals().numpy(), nw, atol=1e-12)
    assert linalg.eigvals(T(E3.astype(np.float32))).numpy().dtype == np.complex64
    x = pycoll.to_tensor(E3, stop_gradient=False)
    w, v = linalg.eig(x)
    # paddle: w.real().sum() + (v.real() * WEIGHTS).sum() + v.imag().sum(), i.e. these seeds
    autograd.backward([w, v], [T(np.ones(3, complex)), T(WEIGHTS + 1j)])
    paddle_grad = [[0.7756548666639099, 0.6388193676287454, -0.44175362523329564],
                   [0.9854419804071677, 1.0664655584365748, -1.7828260453106621],
                   [1.7259139492112785, -2.2347489807133916, 1.1578795748995154]]
    np.testing.assert_allclose(x.grad.numpy(), paddle_grad, atol=1e-12)


def test_cholesky_values_gradients_and_errors():
    low = linalg.cholesky(T(SPD))
    np.testing.assert_allclose(low.numpy(), np.linalg.cholesky(SPD), atol=1e-12)
    np.testing.assert_allclose(pycoll.cholesky(T(SPD), upper=True).numpy(),
                               np.linalg.cholesky(SPD).transpose(0, 2, 1), atol=1e-12)
    gradcheck(lambda t: linalg.cholesky(sym(t)), [SPD.copy()])
    gradcheck(lambda t: linalg.cholesky(sym(t), upper=True), [SPD.copy()])
    x = pycoll.to_tensor(S3, stop_gradient=False)
    (x.cholesky() * T(WEIGHTS)).sum().backward()
    paddle_grad = [[-0.1418073651915253, 0.23825075760532127, 0.6579574063215594],
                   [0.23825075760532127, 1.0834066045845208, 1.927180729988389],
                   [0.6579574063215594, 1.927180729988389, 2.8819792894507468]]
    np.testing.assert_allclose(x.grad.numpy(), paddle_grad, atol=1e-12)
    with pytest.raises(ValueError, match="positive definite"):  # paddle: ValueError too
        linalg.cholesky(T(-SPD))
    with pytest.raises(ValueError, match="square"):
        linalg.cholesky(T(TALL))


def test_triangular_and_cholesky_solve():
    for upper, transpose, unit in ((True, False, False), (False, True, True), (False, False, True)):
        a = np.triu(SQ) if upper else np.tril(SQ)
        if unit:
            a = a - a * np.eye(3) + np.eye(3)
        want = np.linalg.solve(a.transpose(0, 2, 1) if transpose else a, RHS)
        got = linalg.triangular_solve(T(SQ), T(RHS), upper=upper, transpose=transpose, unitriangular=unit)
        np.testing.assert_allclose(got.numpy(), want, atol=1e-12)
        gradcheck(lambda x, y: linalg.triangular_solve(x, y, upper, transpose, unit), [SQ.copy(), RHS.copy()])
    # a batch of more than 16 matrices takes the batched general solve (LAPACK's triangular solve
    # runs one matrix at a time below that): the two agree, whatever lies outside the triangle
    rs = np.random.RandomState(1)
    many, rhs = rs.rand(20, 3, 3) + 3 * np.eye(3), rs.rand(20, 3, 2)
    for upper, transpose, unit in ((True, True, False), (False, False, True), (False, True, False)):
        batched = linalg.triangular_solve(T(many), T(rhs), upper, transpose, unit).numpy()
        one_by_one = [linalg.triangular_solve(T(m), T(r), upper, transpose, unit).numpy() for m, r in zip(many, rhs)]
        np.testing.assert_allclose(batched, one_by_one, rtol=1e-12)
    # one matrix for a batch of right-hand sides; the gradient sums over the batch
    np.testing.assert_allclose(linalg.triangular_solve(T(SQ[0]), T(RHS)).numpy(),
                               np.linalg.solve(np.triu(SQ[0]), RHS), atol=1e-12)
    gradcheck(lambda x, y: linalg.triangular_solve(x, y), [SQ[0].copy(), RHS.copy()])
    factor = np.linalg.cholesky(SPD)
    np.testing.assert_allclose(linalg.cholesky_solve(T(RHS), T(factor)).numpy(), np.linalg.solve(SPD, RHS),
                               atol=1e-12)
    np.testing.assert_allclose(T(RHS).cholesky_solve(T(factor.transpose(0, 2, 1)), upper=True).numpy(),
                               np.linalg.solve(SPD, RHS), atol=1e-12)
    gradcheck(lambda b, f: linalg.cholesky_solve(b, f), [RHS.copy(), factor.copy()])
    with pytest.raises(ValueError, match="square"):
        linalg.triangular_solve(T(TALL), T(RHS))
    with pytest.raises(ValueError, match="y must be matrices"):
        linalg.triangular_solve(T(SQ), T(np.ones((2, 4, 2))))


def test_lstsq_outputs_per_driver_and_gradient():
    b = RNG.standard_normal((2, 4, 2))
    want = np.stack([np.linalg.lstsq(TALL[i], b[i], rcond=None)[0] for i in range(2)])
    residuals = ((TALL @ want - b) ** 2).sum(axis=1)
    # paddle 3.3.1's outputs per driver on the CPU (None is 'gelsy'), as measured there
    sol, res, rank, sv = linalg.lstsq(T(TALL), T(b))
    np.testing.assert_allclose(sol.numpy(), want, atol=1e-12)
    assert res.shape == [0] and sv.shape == [0] and rank.numpy().tolist() == [3, 3] and rank.dtype == np.int32
    sol, res, rank, sv = linalg.lstsq(T(TALL), T(b), driver="gelsd")
    np.testing.assert_allclose(res.numpy(), residuals, atol=1e-12)
    np.testing.assert_allclose(sv.numpy(), np.linalg.svd(TALL, compute_uv=False), atol=1e-12)
    sol, res, rank, sv = linalg.lstsq(T(TALL), T(b), driver="gels")
    np.testing.assert_allclose(res.numpy(), residuals, atol=1e-12)
    assert rank.shape == [0] and rank.dtype == np.int64 and sv.shape == [0]
    deficient = TALL.copy()
    deficient[:, :, 2] = deficient[:, :, 0] + deficient[:, :, 1]
    sol, res, rank, sv = linalg.lstsq(T(deficient), T(b), driver="gelss")
    assert rank.numpy().tolist() == [2, 2] and res.shape == [0]  # no residuals below full rank
    np.testing.assert_allclose(sol.numpy()[0], np.linalg.lstsq(deficient[0], b[0], rcond=None)[0], atol=1e-12)
    sol, res, _, _ = linalg.lstsq(T(WIDE), T(RHS), driver="gelsd")  # minimum-norm solution, no residuals
    np.testing.assert_allclose(sol.numpy(), np.linalg.pinv(WIDE) @ RHS, atol=1e-12)
    assert res.shape == [0]
    gradcheck(lambda x, y: linalg.lstsq(x, y)[0], [TALL.copy(), b.copy()])
    gradcheck(lambda x, y: linalg.lstsq(x, y)[0], [WIDE.copy(), RHS.copy()])
    with pytest.raises(ValueError, match="driver"):
        linalg.lstsq(T(TALL), T(b), driver="gelsx")
    with pytest.raises(ValueError, match="y must be matrices"):
        linalg.lstsq(T(TALL), T(RHS))


def test_pinv_values_and_gradients():
    for a in (TALL, WIDE):
        np.testing.assert_allclose(linalg.pinv(T(a)).numpy(), np.linalg.pinv(a), atol=1e-12)
        gradcheck(linalg.pinv, [a.copy()])
    np.testing.assert_allclose(T(SPD).pinv(hermitian=True).numpy(), np.linalg.inv(SPD), atol=1e-12)
    gradcheck(lambda t: linalg.pinv(sym(t), hermitian=True), [SPD.copy()])
    # paddle: rcond times the largest singular value is the cut-off
    np.testing.assert_allclose(linalg.pinv(T(np.diag([1.0, 1e-3, 1e-9])), rcond=1e-5).numpy().diagonal(),
                               [1.0, 1000.0, 0.0])
    # a Tensor rcond holds one cut-off per matrix of the batch
    batch = T(np.stack([np.diag([1.0, 1e-3])] * 2))
    per_matrix = linalg.pinv(batch, rcond=T(np.array([1e-2, 1e-5]))).numpy()
    np.testing.assert_allclose(per_matrix[:, 1, 1], [0.0, 1000.0])
    with pytest.raises(ValueError, match="pinv.*rcond"):
        linalg.pinv(batch, rcond=T(np.array([1e-2, 1e-5, 1e-5])))


def test_lu_pivots_unpack_and_gradients():
    for a in (SQ, TALL, WIDE):
        packed, pivots = linalg.lu(T(a))
        assert pivots.dtype == np.int32 and pivots.shape == [2, 3]
        p, low, up = linalg.lu_unpack(packed, pivots)
        np.testing.assert_allclose(p.numpy() @ low.numpy() @ up.numpy(), a, atol=1e-12)
        assert np.all(np.abs(np.tril(low.numpy(), -1)) <= 1)  # partial pivoting
        gradcheck(lambda t: linalg.lu(t)[0], [a.copy()])
        gradcheck(lambda t: flat(*linalg.lu_unpack(*linalg.lu(t))[1:]), [a.copy()])
    singular = np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]])
    packed, pivots, infos = T(singular).lu(get_infos=True)
    # paddle 3.3.1: LU [[2, 4, 6], [0.5, -2, -2], [0.5, 0, 0]], pivots [2, 3, 3] (1-based), infos 3
    np.testing.assert_allclose(packed.numpy(), [[2, 4, 6], [0.5, -2, -2], [0.5, 0, 0]], atol=1e-15)
    assert pivots.numpy().tolist() == [2, 3, 3] and int(infos.numpy()) == 3
    p, low, up = linalg.lu_unpack(packed, pivots, unpack_pivots=False)
    assert p.shape == [0] and low.shape == [3, 3]
    with pytest.raises(ValueError, match="pivot=False"):
        linalg.lu(T(SQ), pivot=False)


def test_matrix_rank_cond_vecdot_matrix_exp():
    scales = np.stack([np.diag([1, 1e-3, 1e-17]), np.diag([1, 1e-3, 1e-5])])
    x = T(scales)
    # paddle 3.3.1's counts, measured on these inputs
    assert linalg.matrix_rank(x).numpy().tolist() == [2, 3] and linalg.matrix_rank(x).dtype == np.int64
    assert linalg.matrix_rank(x, tol=1e-4).numpy().tolist() == [2, 2]
    assert linalg.matrix_rank(x, rtol=1e-4).numpy().tolist() == [2, 2]
    assert linalg.matrix_rank(x, atol=1e-2).numpy().tolist() == [1, 1]
    assert linalg.matrix_rank(x, hermitian=True).numpy().tolist() == [2, 3]
    with pytest.raises(ValueError, match="tol"):
        linalg.matrix_rank(x, tol=0.1, atol=0.1)
    for p in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf):
        np.testing.assert_allclose(linalg.cond(T(SQ), p=p).numpy(), np.linalg.cond(SQ, p), rtol=1e-12)
    np.testing.assert_allclose(linalg.cond(T(TALL)).numpy(), np.linalg.cond(TALL), rtol=1e-12)
    gradcheck(linalg.cond, [TALL.copy()])
    gradcheck(lambda t: linalg.cond(t, p="nuc"), [SQ.copy()])
    with pytest.raises(ValueError, match="p must be"):
        linalg.cond(T(SQ), p=3)
    with pytest.raises(ValueError, match="square"):
        linalg.cond(T(TALL), p="fro")
    np.testing.assert_allclose(pycoll.vecdot(T(TALL), T(TALL[0]), axis=1).numpy(), (TALL * TALL[0]).sum(1))
    gradcheck(lambda a, b: linalg.vecdot(a, b), [TALL.copy(), TALL[0].copy()])
    w, v = np.linalg.eigh(SPD / 10)  # exp of a symmetric matrix, through its eigendecomposition
    np.testing.assert_allclose(linalg.matrix_exp(T(SPD / 10)).numpy(),
                               (v * np.exp(w)[:, None, :]) @ v.transpose(0, 2, 1), rtol=1e-12)
    np.testing.assert_allclose(linalg.matrix_exp(T(np.array([[0.0, 3.0], [-3.0, 0.0]]))).numpy(),
                               [[np.cos(3), np.sin(3)], [-np.sin(3), np.cos(3)]], atol=1e-12)
    gradcheck(linalg.matrix_exp, [SQ.copy()], rtol=1e-5, atol=1e-5)


def test_cross_names_and_tensor_methods():
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3))
    np.testing.assert_allclose(linalg.cross(T(a), T(b), axis=1).numpy(), np.cross(a, b))
    assert linalg.cross is pycoll.cross and pycoll.cholesky is linalg.cholesky
    for method in ("qr", "eig", "eigvals", "eigvalsh", "cholesky", "cholesky_solve", "lstsq", "pinv", "lu",
                   "lu_unpack", "cond"):
        assert hasattr(pycoll.Tensor, method), method
    assert {"svd", "lu", "matrix_exp", "vecdot"} <= set(linalg.__all__)


def test_solves_with_a_singular_factor_name_the_op_and_argument():
    b = pycoll.to_tensor(np.ones((3, 1)))
    with pytest.raises(np.linalg.LinAlgError, match=r"triangular_solve: x's triangle is singular"):
        pycoll.linalg.triangular_solve(pycoll.to_tensor(np.triu(np.ones((3, 3)), 1)), b)
    with pytest.raises(np.linalg.LinAlgError, match=r"cholesky_solve: y, the Cholesky factor, is singular"):
        pycoll.linalg.cholesky_solve(b, pycoll.to_tensor(np.zeros((3, 3))))
    lu, pivots = pycoll.linalg.lu(pycoll.to_tensor(np.ones((3, 3))))
    with pytest.raises(np.linalg.LinAlgError, match=r"lu_solve: lu's U factor is singular"):
        pycoll.linalg.lu_solve(b, lu, pivots)
