"""pycoll.incubate's fused softmax helpers, identity_loss and LookAhead. Values marked so were
measured on paddle 3.3.1's CPU build with the same calls; its upper-triangle softmax runs on GPUs
only, so that one is checked against NumPy."""
import numpy as np
import pytest

import pycoll
from pycoll import incubate


def T(v, grad=False):
    t = pycoll.to_tensor(np.asarray(v, dtype=np.float32))
    t.stop_gradient = not grad
    return t


X = np.arange(24, dtype=np.float32).reshape(1, 2, 3, 4) / 7.0


def np_softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_softmax_mask_fuse_equals_paddles():
    mask = np.array([[[[0, -1e4, 0, 0], [0, 0, -1e4, 0], [0, 0, 0, 0]]]], np.float32)
    out = incubate.softmax_mask_fuse(T(X), T(mask)).numpy()
    paddle_rows = [[0.25868, 0.0, 0.34423, 0.39709], [0.2711, 0.31274, 0.0, 0.41616],
                   [0.19923, 0.22982, 0.26512, 0.30583]]  # paddle 3.3.1, rounded to 5 places
    np.testing.assert_allclose(out[0, 0], paddle_rows, atol=1e-5)
    np.testing.assert_allclose(out[0, 1], paddle_rows, atol=1e-5)
    with pytest.raises(ValueError, match="4-D"):
        incubate.softmax_mask_fuse(T(X[0]), T(mask[0]))


def test_softmax_mask_fuse_upper_triangle_is_a_causal_softmax_with_its_gradient():
    x = T(X, grad=True)
    out = incubate.softmax_mask_fuse_upper_triangle(x)
    causal = np.where(np.triu(np.ones((3, 4), bool), 1), -np.inf, X)
    want = np_softmax(causal)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-6)
    w = np.arange(24, dtype=np.float32).reshape(X.shape)
    (out * T(w)).sum().backward()
    grad = want * (w - (want * w).sum(-1, keepdims=True))  # softmax's backward by hand
    np.testing.assert_allclose(x.grad.numpy(), grad, rtol=1e-5, atol=1e-7)


def test_identity_loss_reductions_as_paddles():
    y = T([[1., 2.], [3., 4.]])
    for reduction, want in (("sum", 10.), ("mean", 2.5), (0, 10.), (1, 2.5)):
        assert incubate.identity_loss(y, reduction).item() == want  # paddle's
    assert incubate.identity_loss(y).numpy().tolist() == [[1., 2.], [3., 4.]]
    assert incubate.identity_loss(y, 2) is y
    with pytest.raises(TypeError, match="reduction"):  # paddle: TypeError 'Unsupported reduction type.'
        incubate.identity_loss(y, "max")


def test_lookahead_moves_parameters_as_paddles():
    w = pycoll.create_parameter([3], "float32", default_initializer=pycoll.nn.initializer.Assign([1., -2., 3.]))
    la = incubate.LookAhead(pycoll.optimizer.SGD(learning_rate=0.1, parameters=[w]), alpha=0.2, k=3)
    seen = []
    for _ in range(7):
        (w * w * T([1., 2., 3.])).sum().backward()
        la.step()
        la.clear_grad()
        seen.append(w.numpy().tolist())
    paddle_steps = [[0.8, -1.2, 1.2], [0.64, -0.72, 0.48], [0.7424, -1.0464, 0.9984], [0.59392, -0.62784, 0.39936],
                    [0.475136, -0.376704, 0.159744], [0.6699418, -0.8823245, 0.8114995],
                    [0.5359535, -0.5293947, 0.3245998]]  # paddle 3.3.1's LookAhead(SGD(0.1), 0.2, 3)
    np.testing.assert_allclose(seen, paddle_steps, rtol=1e-5)
    with pytest.raises(ValueError, match="alpha"):
        incubate.LookAhead(la.inner_optimizer, alpha=1.5)
    with pytest.raises(ValueError, match="k must"):
        incubate.LookAhead(la.inner_optimizer, k=0)
