"""pycoll.linalg's inv, det, slogdet, solve, matrix_power, multi_dot, cov and corrcoef: values
against NumPy's linalg (and paddle 3.3.1's, measured on its CPU build, where noted), gradients
against central differences."""
import numpy as np
import pytest
from test_gradcheck import gradcheck

import pycoll
from pycoll import linalg

RNG = np.random.default_rng(0)
A = RNG.random((2, 3, 3)) + 2 * np.eye(3)  # well conditioned
B = RNG.random((2, 3, 2))


def test_inv_det_slogdet_values_and_gradients():
    x = pycoll.to_tensor(A)
    np.testing.assert_allclose(linalg.inv(x).numpy(), np.linalg.inv(A), rtol=1e-12)
    np.testing.assert_allclose(pycoll.inverse(x).numpy(), np.linalg.inv(A), rtol=1e-12)
    np.testing.assert_allclose(linalg.det(x).numpy(), np.linalg.det(A), rtol=1e-12)
    s = linalg.slogdet(x)  # paddle: one tensor [2, *batch] (sign, log|det|)
    assert s.shape == [2, 2]
    np.testing.assert_allclose(s.numpy(), np.stack(np.linalg.slogdet(A)), rtol=1e-12)
    assert linalg.det(pycoll.to_tensor(A.astype("float32"))).dtype == np.float32
    gradcheck(linalg.inv, [A[0].copy()])
    gradcheck(linalg.det, [A.copy()])
    gradcheck(lambda t: linalg.slogdet(t)[1], [A.copy()])
    with pytest.raises(TypeError, match="floating"):
        linalg.inv(pycoll.to_tensor([[1, 2], [3, 4]]))
    with pytest.raises(ValueError, match="square"):
        linalg.det(pycoll.to_tensor(np.ones((2, 3))))
    with pytest.raises(ValueError):  # paddle: "Input is not invertible"
        linalg.inv(pycoll.to_tensor([[1.0, 2.0], [2.0, 4.0]]))


def test_solve_left_right_vector_and_gradients():
    x, y = pycoll.to_tensor(A), pycoll.to_tensor(B)
    np.testing.assert_allclose(linalg.solve(x, y).numpy(), np.linalg.solve(A, B), rtol=1e-12)
    right = RNG.random((2, 2, 3))
    np.testing.assert_allclose(linalg.solve(x, pycoll.to_tensor(right), left=False).numpy(),
                               right @ np.linalg.inv(A), rtol=1e-10)
    v = RNG.random(3)
    np.testing.assert_allclose(x[0].solve(pycoll.to_tensor(v)).numpy(), np.linalg.solve(A[0], v), rtol=1e-12)
    gradcheck(linalg.solve, [A.copy(), B.copy()])
    gradcheck(linalg.solve, [A[0].copy(), B.copy()])  # x broadcast over y's batch
    gradcheck(linalg.solve, [A[0].copy(), v.copy()])
    gradcheck(lambda a, b: linalg.solve(a, b, left=False), [A.copy(), right.copy()])
    with pytest.raises(ValueError, match="rows"):
        linalg.solve(x, pycoll.to_tensor(np.ones((2, 4, 1))))


def test_matrix_power_and_multi_dot():
    x = pycoll.to_tensor(A)
    for n in (0, 1, 3, 4, -2):
        np.testing.assert_allclose(linalg.matrix_power(x, n).numpy(), np.linalg.matrix_power(A, n), rtol=1e-10)
    gradcheck(lambda t: linalg.matrix_power(t, 3), [A[0].copy()])
    gradcheck(lambda t: linalg.matrix_power(t, -1), [A[0].copy()])
    mats = [RNG.random(2), RNG.random((2, 3)), RNG.random((3, 4)), RNG.random(4)]
    out = linalg.multi_dot([pycoll.to_tensor(m) for m in mats])
    assert out.shape == [] and np.isclose(out.item(), np.linalg.multi_dot(mats))  # paddle: shape []
    gradcheck(lambda a, b, c: linalg.multi_dot([a, b, c]), [m.copy() for m in (RNG.random((2, 3)), RNG.random((3, 4)),
                                                                               RNG.random((4, 2)))])
    with pytest.raises(ValueError, match="x\\[1\\]"):
        linalg.multi_dot([pycoll.ones([2, 2]), pycoll.ones([2]), pycoll.ones([2, 2])])
    with pytest.raises(TypeError, match="n must be an int"):
        linalg.matrix_power(x, 1.5)


def test_cov_and_corrcoef_follow_numpy_and_paddle():
    x = pycoll.to_tensor([[1.0, 2, 4], [2, 1, 0]])
    # paddle 3.3.1: [[2.3333335, -1.4999999], [-1.5, 1.0]], rowvar=False [[0.5, -0.5, -2], ...]
    np.testing.assert_allclose(linalg.cov(x).numpy(), [[2.3333333, -1.5], [-1.5, 1.0]], rtol=1e-6)
    np.testing.assert_allclose(x.cov(rowvar=False).numpy(), [[0.5, -0.5, -2.0], [-0.5, 0.5, 2.0], [-2.0, 2.0, 8.0]],
                               rtol=1e-6)
    np.testing.assert_allclose(linalg.cov(x, ddof=False).numpy(), [[1.5555556, -1.0], [-1.0, 0.6666667]], rtol=1e-6)
    fw, aw = pycoll.to_tensor([1, 2, 1]), pycoll.to_tensor([0.5, 1.0, 2.0])
    np.testing.assert_allclose(linalg.cov(x, fweights=fw, aweights=aw).numpy(),
                               [[1.8571433, -1.0714284], [-1.0714287, 0.6428571]], rtol=1e-6)  # paddle's
    np.testing.assert_allclose(linalg.corrcoef(x).numpy(), [[1.0, -0.98198038], [-0.98198044, 1.0]], rtol=1e-6)
    data = RNG.random((3, 5))
    np.testing.assert_allclose(linalg.corrcoef(pycoll.to_tensor(data), rowvar=False).numpy(),
                               np.corrcoef(data, rowvar=False), rtol=1e-10)
    assert linalg.cov(pycoll.to_tensor(data[0])).shape == []
    gradcheck(linalg.cov, [data.copy()])
    gradcheck(lambda t: linalg.cov(t, aweights=pycoll.to_tensor([0.5, 1.0, 2.0, 1.0, 0.2])), [data.copy()])
    gradcheck(lambda t: linalg.corrcoef(t) * pycoll.to_tensor(1 - np.eye(3)), [data.copy()])
    float_weights = linalg.cov(x, fweights=pycoll.to_tensor([1.0, 2.0, 1.0])).numpy()  # paddle takes floats
    np.testing.assert_allclose(float_weights, linalg.cov(x, fweights=pycoll.to_tensor([1, 2, 1])).numpy())
    with pytest.raises(ValueError, match="fweights must not be negative"):  # paddle 3.3.1 refuses them too
        linalg.cov(x, fweights=pycoll.to_tensor([1, -1, 2]))
    with pytest.raises(ValueError, match="aweights must not be negative"):
        linalg.cov(x, aweights=pycoll.to_tensor([0.5, -1.0, 2.0]))
    with pytest.raises(ValueError, match="fweights must be a 1-D real tensor of length 3"):
        linalg.cov(x, fweights=pycoll.to_tensor([1, 2]))


def test_det_of_a_singular_matrix_has_the_adjugate_as_gradient():
    """paddle 3.3.1 gives zeros; the derivative of det is the cofactor matrix, singular or not."""
    x = pycoll.to_tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], dtype="float64", stop_gradient=False)
    pycoll.linalg.det(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [[4, 4, -4], [-2, -2, 2], [0, 0, 0]], atol=1e-12)


def test_errors_name_the_op():
    with pytest.raises(ValueError, match="inv: x holds a singular matrix"):
        linalg.inv(pycoll.zeros([2, 2]))
    with pytest.raises(ValueError, match="solve: x holds a singular matrix"):
        linalg.solve(pycoll.zeros([2, 2]), pycoll.ones([2, 1]))
    with pytest.raises(ValueError, match=r"fftshift: axes must be ints in \[-2, 2\) for x of shape \[2, 2\], got 3"):
        pycoll.fft.fftshift(pycoll.ones([2, 2]), axes=3)
    np.testing.assert_array_equal(pycoll.fft.ifftshift(pycoll.to_tensor([[0.0, 1.0, 2.0]]), axes=(1,)).numpy(),
                                  [[1.0, 2.0, 0.0]])


def test_lu_of_a_complex_matrix_pivots_as_lapack():
    # LAPACK (paddle 3.3.1) picks the largest |re| + |im|: 0.8+0.8j (1.6) over 1.2 (|z| would pick 1.2)
    lu, pivots = linalg.lu(pycoll.to_tensor(np.array([[1.2, 1], [0.8 + 0.8j, 2]])))
    assert pivots.numpy().tolist() == [2, 2]
    np.testing.assert_allclose(lu.numpy(), [[0.8 + 0.8j, 2], [0.75 - 0.75j, -0.5 + 1.5j]])


def test_complex_cov_and_corrcoef_conjugate_as_numpys():
    """A probe: complex cov multiplied by x^T, not x^H (a diagonal of -1.33-3j)."""
    a = np.array([[1 + 1j, 2, 3j], [0, 1j, 1]])
    np.testing.assert_allclose(pycoll.linalg.cov(pycoll.to_tensor(a)).numpy(), np.cov(a), atol=1e-12)
    w = np.array([1.0, 2.0, 0.5])
    np.testing.assert_allclose(pycoll.linalg.cov(pycoll.to_tensor(a), aweights=pycoll.to_tensor(w)).numpy(),
                               np.cov(a, aweights=w), atol=1e-12)
    np.testing.assert_allclose(pycoll.linalg.corrcoef(pycoll.to_tensor(a)).numpy(), np.corrcoef(a), atol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_det_and_slogdet_of_a_matrix_holding_nan_are_nan_as_paddles(dtype):
    """LAPACK's pivoting gave det([[nan, 1], [1, 1]]) = 0 and slogdet [0, -inf]."""
    x = pycoll.to_tensor([[[float("nan"), 1.0], [1.0, 1.0]], [[2.0, 0.0], [0.0, 3.0]]], dtype=dtype)
    d = pycoll.linalg.det(x).numpy()
    assert np.isnan(d[0]) and d[1] == pytest.approx(6.0)
    s = pycoll.linalg.slogdet(x).numpy()
    assert s[0, 0] == 0 and np.isnan(s[1, 0]) and s[0, 1] == 1 and s[1, 1] == pytest.approx(np.log(6.0))


def test_fftfreq_of_an_integer_dtype_gives_floats_as_paddles():
    """fftfreq(4, dtype='int64') truncated every frequency to 0."""
    assert pycoll.fft.fftfreq(4, dtype="int64").numpy().tolist() == [0.0, 0.25, -0.5, -0.25]
    assert pycoll.fft.rfftfreq(5, dtype="int32").numpy().dtype == np.float32


def test_solvers_name_the_argument_that_is_wrong():
    with pytest.raises(ValueError, match=r"cholesky_solve: y must be square matrices"):
        pycoll.linalg.cholesky_solve(pycoll.ones([2, 1]), pycoll.ones([2, 3]))
    with pytest.raises(ValueError, match=r"cholesky_solve: x must be matrices \[\.\.\., 2, K\] \(2: y's rows\)"):
        pycoll.linalg.cholesky_solve(pycoll.ones([3, 1]), pycoll.eye(2))
    with pytest.raises(TypeError, match="cholesky_solve: x must have y's dtype float32"):
        pycoll.linalg.cholesky_solve(pycoll.ones([2, 1], "float64"), pycoll.eye(2))
    pivots = pycoll.to_tensor([1, 2], "int32")
    with pytest.raises(ValueError, match="lu_solve: lu must be square matrices"):
        pycoll.linalg.lu_solve(pycoll.ones([2, 1]), pycoll.ones([2, 3]), pivots)
    with pytest.raises(ValueError, match=r"lu_solve: b must be matrices \[\.\.\., 2, K\] \(2: lu's rows\)"):
        pycoll.linalg.lu_solve(pycoll.ones([3, 1]), pycoll.eye(2), pivots)
    with pytest.raises(ValueError, match=r"lu_unpack: y, lu's pivots, must be row numbers in \[1, 3\]"):
        pycoll.linalg.lu_unpack(pycoll.eye(3), pycoll.to_tensor([4, 1, 2], "int32"))


def test_multi_dot_and_matrix_norm_messages_say_what_is_wrong():
    with pytest.raises(ValueError, match=r"multi_dot: x must be a list of at least 2 tensors, got a list of 1$"):
        pycoll.linalg.multi_dot([pycoll.ones([3, 4])])  # (its message printed the whole tensor)
    with pytest.raises(ValueError, match=r"matrix_norm: x must have at least 2 dimensions \(matrices\), got shape \[3\]"):
        pycoll.linalg.matrix_norm(pycoll.ones([3]))
