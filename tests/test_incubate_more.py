"""pycoll.incubate's fused softmax helpers, identity_loss and LookAhead. Values marked so were
measured on paddle 3.3.1's CPU build with the same calls; its upper-triangle softmax runs on GPUs
only, so that one is checked against NumPy."""
import warnings

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


def _lookahead_run(steps, state=None, name=None):
    """paddle's la2 probe: Linear(3, 2), LookAhead(Adam(0.1), alpha=0.5, k=3), loss mean(out ** 2)."""
    lin = pycoll.nn.Linear(3, 2, weight_attr=pycoll.ParamAttr(name="w"), bias_attr=pycoll.ParamAttr(name="b"))
    lin.weight.set_value(np.arange(6, dtype=np.float32).reshape(3, 2) / 10)
    lin.bias.set_value(np.array([0.1, -0.1], np.float32))
    la = incubate.LookAhead(pycoll.optimizer.Adam(learning_rate=0.1, parameters=lin.parameters()), alpha=0.5, k=3,
                            name=name)
    if state is not None:
        lin.set_state_dict(state[0])
        la.set_state_dict(state[1])
    for i in steps:
        (lin(T(np.random.RandomState(i).randn(4, 3))) ** 2).mean().backward()
        la.step()
        la.clear_grad()
    return lin, la


def test_lookahead_state_dict_holds_the_slow_weights_and_resumes(tmp_path):
    lin, la = _lookahead_run(range(2))
    sd = la.state_dict()
    # paddle 3.3.1's state_dict after these 2 steps: {w_slow_0, b_slow_0} with these values
    np.testing.assert_allclose(sd["w_slow_0"].numpy(), [[-0.1, 0.0], [0.1, 0.2], [0.3, 0.4]], atol=1e-6)
    np.testing.assert_allclose(sd["b_slow_0"].numpy(), [0.0, -0.2], atol=1e-6)
    assert "w_moment1_0" in sd and sd["lookahead_step_0"].numpy().tolist() == [2]  # beside paddle's keys
    pycoll.save(sd, str(tmp_path / "la.pdopt"))
    saved = pycoll.load(str(tmp_path / "la.pdopt"))
    resumed, _ = _lookahead_run(range(2, 6), (lin.state_dict(), saved))
    uninterrupted = [-0.06859, -0.00995, 0.03767, 0.13424, 0.08888, 0.19358]  # paddle 3.3.1, 6 steps in one go
    np.testing.assert_allclose(resumed.weight.numpy().ravel(), uninterrupted, atol=1e-5)
    # paddle's own checkpoint holds the slow weights alone: its resumed run restarts Adam and the k-cycle
    paddle_layout = {"w_slow_0": sd["w_slow_0"], "b_slow_0": sd["b_slow_0"]}
    from_paddle, _ = _lookahead_run(range(2, 6), (lin.state_dict(), paddle_layout))
    paddle_resumed = [0.07441, 0.1008, -0.05315, 0.01868, -0.0116, 0.08479]  # paddle 3.3.1, same resumption
    np.testing.assert_allclose(from_paddle.weight.numpy().ravel(), paddle_resumed, atol=1e-5)


def test_lookahead_state_dict_names_and_refusals():
    lin, la = _lookahead_run(range(1), name="la")
    assert "w_la_slow_0" in la.state_dict()  # paddle's key with a name
    bad = dict(la.state_dict())
    bad["w_la_slow_0"] = pycoll.zeros([2])
    with pytest.raises(ValueError, match="has shape \\[2\\], the parameter's is \\[3, 2\\]"):
        la.set_state_dict(bad)
    with pytest.raises(TypeError, match="state_dict must be a dict"):
        la.set_state_dict([])


def test_fused_softmax_of_a_row_hidden_whole_is_nan_without_warnings():
    mask = np.zeros((1, 1, 2, 3), np.float32)
    mask[0, 0, 0] = -np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = incubate.softmax_mask_fuse(T(np.zeros((1, 1, 2, 3))), T(mask)).numpy()
        big = incubate.identity_loss(T([3e38, 3e38]), "sum").item()
    assert np.isnan(out[0, 0, 0]).all()  # paddle 3.3.1: [nan, nan, nan]
    np.testing.assert_allclose(out[0, 0, 1], [1 / 3] * 3, rtol=1e-6)
    assert big == np.inf
