"""pycoll.autograd.jacobian / hessian (paddle.autograd's): values against closed forms, the
shapes and indexing paddle 3.3.1 gives (run on the same cases), rows evaluated lazily."""
import numpy as np
import pytest

import pycoll
from pycoll.autograd import Hessian, Jacobian, hessian, jacobian


def _leaf(a):
    return pycoll.to_tensor(np.asarray(a, dtype=np.float64), stop_gradient=False)


@pytest.fixture
def tanh_layer():
    rng = np.random.RandomState(3)
    x, w = _leaf(rng.randn(4)), _leaf(rng.randn(4, 3))
    y = pycoll.tanh(x @ w)
    expected = (1 - y.numpy() ** 2)[:, None] * w.numpy().T  # [3, 4]
    return x, w, y, expected


def test_jacobian_values_and_indexing(tanh_layer):
    x, w, y, expected = tanh_layer
    J = jacobian(y, x)
    assert isinstance(J, Jacobian) and J.shape == [3, 4]
    np.testing.assert_allclose(J[1].numpy(), expected[1], rtol=1e-13)
    assert len(J._cache) == 1  # one row asked, one row computed
    np.testing.assert_allclose(J[:, 2].numpy(), expected[:, 2], rtol=1e-13)
    np.testing.assert_allclose(J[-1, -2].numpy(), expected[-1, -2], rtol=1e-13)
    np.testing.assert_allclose(J[0:3:2, 1:].numpy(), expected[0:3:2, 1:], rtol=1e-13)
    np.testing.assert_allclose(J[:].numpy(), expected, rtol=1e-13)
    np.testing.assert_allclose((J + 1).numpy(), expected + 1, rtol=1e-13)
    np.testing.assert_allclose(J.numpy(), expected, rtol=1e-13)


def test_jacobian_of_sequences(tanh_layer):
    x, w, y, expected = tanh_layer
    (J,) = jacobian(y, (x,))
    np.testing.assert_allclose(J[:].numpy(), expected, rtol=1e-13)
    J1, J2 = jacobian((y, y * 2), x)
    np.testing.assert_allclose(J2[:].numpy(), 2 * expected, rtol=1e-13)
    ((a, b),) = jacobian((y,), (x, x * 1))  # an input not in y's graph: zeros, as paddle
    np.testing.assert_allclose(b[:].numpy(), np.zeros((3, 4)))


def test_zero_dimensional_ys_and_xs():
    x = _leaf([0.1, 0.5, -1.0, 2.0])
    s = (pycoll.sin(x) * x).sum()
    J = jacobian(s, x)
    xs = x.numpy()
    assert J.shape == [4]
    np.testing.assert_allclose(J[:].numpy(), np.cos(xs) * xs + np.sin(xs), rtol=1e-13)
    np.testing.assert_allclose(J[2].numpy(), np.cos(xs[2]) * xs[2] + np.sin(xs[2]), rtol=1e-13)
    x0 = _leaf(0.7)
    J0 = jacobian(pycoll.stack([x0 * 2, x0 ** 3]), x0)
    np.testing.assert_allclose(J0[:].numpy(), [2.0, 3 * 0.49], rtol=1e-13)
    both = jacobian(x0 ** 3, x0)
    assert both.shape == []
    np.testing.assert_allclose(both.numpy(), 3 * 0.49, rtol=1e-13)
    with pytest.raises(IndexError, match="no axis"):
        both[:]


def test_batched_jacobian():
    rng = np.random.RandomState(3)
    w = _leaf(rng.randn(4, 3))
    xb = _leaf(rng.randn(5, 4))
    yb = pycoll.tanh(xb @ w)
    expected = (1 - yb.numpy() ** 2)[:, :, None] * w.numpy().T[None]  # [5, 3, 4]
    J = jacobian(yb, xb, batch_axis=0)
    assert J.shape == [5, 3, 4]
    np.testing.assert_allclose(J[:].numpy(), expected, rtol=1e-13)
    np.testing.assert_allclose(J[:, 1, :].numpy(), expected[:, 1, :], rtol=1e-13)
    np.testing.assert_allclose(J[1:3, :, 2].numpy(), expected[1:3, :, 2], rtol=1e-13)
    np.testing.assert_allclose(J[2].numpy(), expected[2], rtol=1e-13)
    # a 1-D batched ys is one output per entry: shape [5, 4]; J[:] keeps the axis ([5, 1, 4]), as paddle's
    J1 = jacobian((xb ** 2).sum(axis=1), xb, batch_axis=0)
    assert J1.shape == [5, 4]
    assert J1[:].shape == [5, 1, 4]
    np.testing.assert_allclose(J1[:, 1].numpy(), 2 * xb.numpy()[:, 1], rtol=1e-13)


def test_hessian_values():
    rng = np.random.RandomState(3)
    x, w = _leaf(rng.randn(4)), _leaf(rng.randn(4, 3))
    H = hessian((pycoll.sin(x) * x).sum() + (x @ w).sum() ** 2, x)
    xs, c = x.numpy(), w.numpy().sum(axis=1)
    expected = np.diag(2 * np.cos(xs) - xs * np.sin(xs)) + 2 * np.outer(c, c)
    assert isinstance(H, Hessian) and H.shape == [4, 4]
    np.testing.assert_allclose(H[:].numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(H[2].numpy(), expected[2], rtol=1e-12)
    xb = _leaf(rng.randn(5, 4))
    Hb = hessian((xb ** 3).sum(axis=1), xb, batch_axis=0)
    np.testing.assert_allclose(Hb[:].numpy(), np.stack([np.diag(6 * r) for r in xb.numpy()]), rtol=1e-13)


def test_hessian_blocks():
    x1, x2 = _leaf([1.0, 2.0, 3.0]), _leaf([0.5, -1.0, 2.0, 4.0])
    H = hessian((x1 ** 3).sum() + (x2 * x2).sum() + (x1[:1] * x2[:1]).sum(), (x1, x2))
    np.testing.assert_allclose(H[0][0][:].numpy(), np.diag([6.0, 12.0, 18.0]))
    off = np.zeros((3, 4))
    off[0, 0] = 1.0
    np.testing.assert_allclose(H[0][1][:].numpy(), off)
    np.testing.assert_allclose(H[1][0][:].numpy(), off.T)
    np.testing.assert_allclose(H[1][1][:].numpy(), 2 * np.eye(4))


def test_argument_errors(tanh_layer):
    x, w, y, _ = tanh_layer
    with pytest.raises(ValueError, match="batch_axis should be None or 0"):
        jacobian(y, x, batch_axis=1)
    with pytest.raises(ValueError, match="xs.ndim should be 0 or 1"):
        jacobian(y, w)
    with pytest.raises(ValueError, match="one element"):
        hessian(y, x)
    J = jacobian(y, x)
    with pytest.raises(IndexError, match="Ellipsis"):
        J[..., 1]
    with pytest.raises(IndexError, match="out of range"):
        J[3]
    with pytest.raises(TypeError, match="ints or slices"):
        J[[0, 1]]


def test_entries_that_are_zero_by_structure_still_take_part_in_a_loss():
    """The Hessian of a linear function, a Jacobian of a constant: zeros that (as paddle's) have
    stop_gradient False, so a loss made of them backpropagates, to nothing."""
    x = _leaf([1.0, 2.0])
    H = hessian((x * 3).sum(), x)
    assert H[:].numpy().tolist() == [[0.0, 0.0], [0.0, 0.0]] and not H[:].stop_gradient
    (H[:] ** 2).sum().backward()
    J = jacobian(x * 0 + pycoll.to_tensor([1.0, 1.0], dtype="float64"), x)
    assert J[:].numpy().tolist() == [[0.0, 0.0], [0.0, 0.0]]
