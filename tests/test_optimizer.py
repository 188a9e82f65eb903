"""Optimizers against hand-computed updates."""
import math

import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
import pycoll.optimizer as opt

P0 = np.array([1.0, -2.0, 0.5])
GRADS = [np.array([0.1, -0.2, 0.3]), np.array([-0.4, 0.5, 0.6]), np.array([0.7, 0.0, -0.9])]


def make_param(values=P0, name=None):
    return nn.Parameter(np.array(values, dtype=np.float64), name=name)


def run(optimizer_cls, steps=3, **kwargs):
    """Apply GRADS to a fresh parameter; return the parameter values after each step."""
    p = make_param()
    o = optimizer_cls(parameters=[p], **kwargs)
    array = p.array
    history = []
    for g in GRADS[:steps]:
        p.grad = np.array(g)
        o.step()
        assert p.array is array  # updated in place
        history.append(p.numpy().copy())
    return history, o, p


def test_sgd():
    history, _, _ = run(opt.SGD, learning_rate=0.1)
    expected = P0.copy()
    for g, got in zip(GRADS, history):
        expected = expected - 0.1 * g
        np.testing.assert_allclose(got, expected)


def test_sgd_weight_decay_is_l2_on_the_gradient():
    history, _, _ = run(opt.SGD, steps=1, learning_rate=0.1, weight_decay=0.5)
    np.testing.assert_allclose(history[0], P0 - 0.1 * (GRADS[0] + 0.5 * P0))


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum(nesterov):
    history, _, _ = run(opt.Momentum, learning_rate=0.1, momentum=0.9, use_nesterov=nesterov)
    p, v = P0.copy(), np.zeros(3)
    for g, got in zip(GRADS, history):
        v = 0.9 * v + g
        p = p - 0.1 * ((g + 0.9 * v) if nesterov else v)
        np.testing.assert_allclose(got, p)


def _adam_reference(lr, b1, b2, eps, decay=0.0):
    p, m, v = P0.copy(), np.zeros(3), np.zeros(3)
    out = []
    for t, g in enumerate(GRADS, start=1):
        p = p * (1 - lr * decay)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)
        out.append(p)
    return out


def test_adam():
    history, _, _ = run(opt.Adam, learning_rate=0.01, beta1=0.8, beta2=0.95, epsilon=1e-6)
    for got, want in zip(history, _adam_reference(0.01, 0.8, 0.95, 1e-6)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_adam_defaults_first_step_moves_by_lr():
    history, _, _ = run(opt.Adam, steps=1, learning_rate=0.001)
    np.testing.assert_allclose(np.abs(history[0] - P0), 0.001, rtol=1e-4)


def test_adamw_decoupled_decay():
    history, _, _ = run(opt.AdamW, learning_rate=0.01, weight_decay=0.1)
    for got, want in zip(history, _adam_reference(0.01, 0.9, 0.999, 1e-8, decay=0.1)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_adamw_apply_decay_param_fun():
    history, _, _ = run(opt.AdamW, learning_rate=0.01, weight_decay=0.1,
                        apply_decay_param_fun=lambda name: False)
    for got, want in zip(history, _adam_reference(0.01, 0.9, 0.999, 1e-8)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_step_skips_params_without_grad_or_frozen():
    a, b = make_param(), make_param()
    b.stop_gradient = True
    b.grad = np.ones(3)
    o = opt.SGD(learning_rate=1.0, parameters=[a, b])
    o.step()
    np.testing.assert_array_equal(a.numpy(), P0)
    np.testing.assert_array_equal(b.numpy(), P0)


def test_step_runs_without_recording_the_graph():
    layer = nn.Linear(2, 2)
    o = opt.Adam(parameters=layer.parameters())
    layer(pycoll.ones([1, 2])).sum().backward()
    o.step()
    assert all(p.is_leaf for p in layer.parameters())


def test_clear_grad():
    p = make_param()
    o = opt.SGD(parameters=[p])
    p.grad = np.ones(3)
    o.clear_grad()
    np.testing.assert_array_equal(p.grad.numpy(), 0)
    o.clear_grad(set_to_zero=False)
    assert p.grad is None


def test_learning_rate_get_set_and_validation():
    o = opt.SGD(learning_rate=0.5, parameters=[make_param()])
    assert o.get_lr() == 0.5
    o.set_lr(0.25)
    assert o.get_lr() == 0.25
    with pytest.raises(ValueError, match="learning_rate"):
        opt.SGD(learning_rate=-1, parameters=[make_param()])
    with pytest.raises(ValueError, match="parameters must be given"):
        opt.Adam()
    with pytest.raises(TypeError, match="Tensors"):
        opt.SGD(parameters=[np.zeros(2)])
    with pytest.raises(ValueError, match="distinct names"):
        opt.SGD(parameters=[make_param(name="w"), make_param(name="w")])
    with pytest.raises(ValueError, match="beta"):
        opt.Adam(beta1=1.0, parameters=[make_param()])


def test_state_dict_keys_and_resume(tmp_path):
    p = make_param(name="w")
    o = opt.Adam(learning_rate=0.01, parameters=[p])
    for g in GRADS[:2]:
        p.grad = np.array(g)
        o.step()
    state = o.state_dict()
    assert set(state) == {"w_moment1_0", "w_moment2_0", "w_beta1_pow_acc_0", "w_beta2_pow_acc_0"}
    assert isinstance(state["w_moment1_0"], pycoll.Tensor)
    assert state["w_beta1_pow_acc_0"].item() == pytest.approx(0.81)
    pycoll.save({"opt": state, "param": p}, tmp_path / "ckpt")

    loaded = pycoll.load(tmp_path / "ckpt")
    q = make_param(loaded["param"].numpy(), name="w")
    o2 = opt.Adam(learning_rate=0.01, parameters=[q])
    o2.set_state_dict(loaded["opt"])
    p.grad = np.array(GRADS[2])
    q.grad = np.array(GRADS[2])
    o.step()
    o2.step()
    np.testing.assert_array_equal(q.numpy(), p.numpy())
    np.testing.assert_allclose(p.numpy(), _adam_reference(0.01, 0.9, 0.999, 1e-8)[2], rtol=1e-12)


def test_set_state_dict_checks_shapes():
    o = opt.Momentum(parameters=[make_param(name="v")])
    with pytest.raises(ValueError, match="shape"):
        o.set_state_dict({"v_velocity_0": np.zeros(4)})
    with pytest.raises(TypeError, match="dict"):
        o.set_state_dict([1])


def test_float32_parameters_stay_float32():
    layer = nn.Linear(3, 2)
    for cls in (opt.SGD, opt.Momentum, opt.Adam, opt.AdamW):
        o = cls(parameters=layer.parameters())
        layer(pycoll.randn([4, 3])).sum().backward()
        o.step()
        o.clear_grad()
        assert all(p.dtype == np.float32 for p in layer.parameters())
        assert all(np.isfinite(p.numpy()).all() for p in layer.parameters())


def test_training_reduces_loss():
    pycoll.seed(0)
    model = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
    o = opt.Adam(learning_rate=0.01, parameters=model.parameters())
    x = pycoll.randn([64, 4])
    y = pycoll.to_tensor(np.sin(x.numpy().sum(1, keepdims=True)))
    losses = []
    for _ in range(200):
        loss = nn.MSELoss()(model(x), y)
        loss.backward()
        o.step()
        o.clear_grad()
        losses.append(float(loss))
    assert losses[-1] < 0.1 * losses[0] and math.isfinite(losses[-1])


def test_minimize_applies_the_gradients_as_paddles_dygraph_does():
    p = make_param()
    o = opt.SGD(learning_rate=0.5, parameters=[p])
    (p * pycoll.to_tensor(np.array([1.0, 2.0, 3.0]))).sum().backward()
    ops, pairs = o.minimize(None)
    np.testing.assert_allclose(p.numpy(), P0 - 0.5 * np.array([1.0, 2.0, 3.0]))
    assert ops == [] and pairs[0][0] is p and pairs[0][1] is p.grad
    with pytest.raises(ValueError, match="no_grad_set is for paddle's static graph"):
        o.minimize(None, no_grad_set={"x"})


def test_gradient_clips_against_hand_computed_values():
    g = [np.array([3.0, 4.0]), np.array([12.0]), None]  # norms 5 and 12; global 13
    by_value = nn.ClipGradByValue(3.5).clip(g)
    np.testing.assert_allclose(by_value[0], [3.0, 3.5]) and np.testing.assert_allclose(by_value[1], [3.5])
    by_norm = nn.ClipGradByNorm(6.0).clip(g)
    np.testing.assert_allclose(by_norm[0], [3.0, 4.0])  # 5 <= 6: unchanged
    np.testing.assert_allclose(by_norm[1], [6.0])
    by_global = nn.ClipGradByGlobalNorm(6.5).clip(g)
    np.testing.assert_allclose(by_global[0], [1.5, 2.0]) and np.testing.assert_allclose(by_global[1], [6.0])
    assert by_value[2] is None and by_norm[2] is None and by_global[2] is None
    # the sums of squares completed elsewhere (sharding: the other ranks' pieces)
    np.testing.assert_allclose(nn.ClipGradByGlobalNorm(6.5).clip([np.array([3.0, 4.0])], lambda s: s + 144.0)[0],
                               [1.5, 2.0])
    with pytest.raises(ValueError, match="clip_norm must be a number > 0"):
        nn.ClipGradByGlobalNorm(0)


def test_an_optimizer_applies_its_grad_clip_and_leaves_grad_alone():
    p = make_param([0.0, 0.0, 0.0])
    o = opt.SGD(learning_rate=1.0, parameters=[p], grad_clip=nn.ClipGradByGlobalNorm(1.0))
    (p * pycoll.to_tensor(np.array([0.0, 3.0, 4.0]))).sum().backward()
    o.step()
    np.testing.assert_allclose(p.numpy(), [0.0, -0.6, -0.8])
    np.testing.assert_allclose(p.grad.numpy(), [0.0, 3.0, 4.0])
    pairs = nn.ClipGradByValue(1.0)([(p, p.grad)])  # paddle's call on (param, grad) pairs
    assert pairs[0][0] is p and pairs[0][1].numpy().tolist() == [0.0, 1.0, 1.0]
    with pytest.raises(TypeError, match="grad_clip must be"):
        opt.Adam(parameters=[p], grad_clip=1.0)
