"""Optimizers against hand-computed updates."""
import io
import math
import warnings

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
    assert opt.SGD(learning_rate=-1.0, parameters=[make_param()]).get_lr() == -1.0  # paddle's gradient ascent
    with pytest.raises(TypeError, match="learning_rate"):
        opt.SGD(learning_rate="0.1", parameters=[make_param()])
    with pytest.raises(TypeError, match="set_lr must be float"):
        o.set_lr("0.1")
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
    # paddle keeps beta^(t+1) after t steps (its kernel reads beta^t, then multiplies by beta)
    assert state["w_beta1_pow_acc_0"].item() == pytest.approx(0.9 ** 3)
    assert state["w_beta2_pow_acc_0"].item() == pytest.approx(0.999 ** 3)
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
    with pytest.raises(ValueError, match="startup_program is for paddle's static graph"):
        o.minimize(None, startup_program=object())


def two_params():
    w, b = make_param(name="w"), make_param([4.0], name="b")
    o = opt.Momentum(learning_rate=0.5, momentum=0.0, parameters=[w, b], grad_clip=nn.ClipGradByGlobalNorm(1e6))
    (w * pycoll.to_tensor(np.array([1.0, 2.0, 3.0])) + b * 2.0).sum().backward()
    return w, b, o


@pytest.mark.parametrize("kwargs", [{"parameters": ["w"]}, {"no_grad_set": {"b"}}, {"no_grad_set": ["b", "x"]}])
def test_minimize_updates_the_parameters_it_is_given_and_keeps_every_gradient(kwargs):
    w, b, o = two_params()
    grads = [w.grad.numpy().copy(), b.grad.numpy().copy()]
    _, pairs = o.minimize(None, **kwargs)  # paddle's eager build ignores no_grad_set; its docs do not
    assert [p is w for p, _ in pairs] == [True]
    np.testing.assert_allclose(w.numpy(), P0 - 0.5 * np.array([1.0, 2.0, 3.0]))
    assert b.numpy().tolist() == [4.0], "b is not among those updated"
    assert w.grad.numpy().tolist() == grads[0].tolist() and b.grad.numpy().tolist() == grads[1].tolist()


def test_backward_then_apply_gradients_takes_the_gradients_given():
    w, b, o = two_params()
    pairs = o.backward(None)  # as paddle's eager backward: the gradients loss.backward() left
    assert [(p is q, g is p.grad) for (p, g), q in zip(pairs, [w, b])] == [(True, True), (True, True)]
    assert o.apply_gradients([(w, w.grad * 2), (b, None)]) == []
    np.testing.assert_allclose(w.numpy(), P0 - np.array([1.0, 2.0, 3.0]))
    assert b.numpy().tolist() == [4.0] and w.grad.numpy().tolist() == [1.0, 2.0, 3.0]
    assert [p is b for p, _ in o.backward(None, parameters=[b])] == [True]
    other = make_param(name="other")
    for bad, error, words in [({w: w.grad}, TypeError, "list of \\(param, grad\\) pairs, got dict"),
                              ((w, w.grad), TypeError, "hold \\(param, grad\\) pairs, got a Parameter"),
                              ([(other, w.grad)], ValueError, "'other', which is not a parameter of this"),
                              ([(w, b.grad)], ValueError, "must be a tensor of its shape \\[3\\], got \\[1\\]"),
                              ([w], TypeError, "hold \\(param, grad\\) pairs")]:
        with pytest.raises(error, match=words):
            o.apply_gradients(bad)
    with pytest.raises(ValueError, match="parameters names 'x', which is not a parameter"):
        o.minimize(None, parameters=["w", "x"])
    with pytest.raises(TypeError, match="parameters must be a list or set"):
        o.backward(None, parameters="w")
    with pytest.raises(TypeError, match="callbacks must be a list"):
        o.backward(None, callbacks=print)


def test_zero_grad_and_load_state_dict_are_paddles_other_names():
    w, b, o = two_params()
    o.zero_grad(set_to_none=False)
    assert w.grad.numpy().tolist() == [0.0, 0.0, 0.0]
    o.zero_grad()
    assert w.grad is None and b.grad is None
    adam = opt.Adam(parameters=[w])
    w.grad = np.ones(3)
    adam.step()
    again = opt.Adam(parameters=[w])
    again.load_state_dict(adam.state_dict())
    assert again.state_dict().keys() == adam.state_dict().keys()
    np.testing.assert_allclose(again.state_dict()["w_moment1_0"].numpy(), adam.state_dict()["w_moment1_0"].numpy())


def test_the_wrappers_run_their_own_step_under_every_form():
    from pycoll.incubate import LookAhead
    w, b, o = two_params()
    slow = LookAhead(o, alpha=0.5, k=1)
    slow.apply_gradients([(w, w.grad)])  # LookAhead's step: the inner one, then its slow weights
    np.testing.assert_allclose(w.numpy(), P0 - 0.5 * np.array([1.0, 2.0, 3.0]))
    assert b.numpy().tolist() == [4.0] and slow._global_step == 1 and list(slow._slow) == [id(w)]
    slow.zero_grad()
    assert w.grad is None


def test_the_clips_print_as_paddles():
    assert str(nn.ClipGradByGlobalNorm(1.0)) == "Gradient Clip By GlobalNorm, global_norm=1.000000"
    assert str(nn.ClipGradByNorm(0.5)) == "Gradient Clip By Norm, clip_norm=0.500000"
    assert str(nn.ClipGradByValue(2.0)) == "Clip Gradient By Value, min = -2.000000, max=2.000000"


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
    half = pycoll.to_tensor([-3.0, 0.5, 3.0]).astype("bfloat16")
    assert nn.ClipGradByValue(1.0).clip([half._array])[0].dtype == half._array.dtype  # bfloat16 stays bfloat16
    pairs = nn.ClipGradByValue(1.0)([(p, p.grad)])  # paddle's call on (param, grad) pairs
    assert pairs[0][0] is p and pairs[0][1].numpy().tolist() == [0.0, 1.0, 1.0]
    with pytest.raises(TypeError, match="grad_clip must be"):
        opt.Adam(parameters=[p], grad_clip=1.0)


def test_clips_leave_need_clip_false_gradients_alone_and_out_of_the_norms():
    """paddle 3.3.1's numbers for the same calls: the need_clip=False gradient [3, 4] comes back
    as it was (the same Tensor) and is not in the global norm (2, not sqrt(29))."""
    p = pycoll.create_parameter([2], "float32", attr=nn.ParamAttr(need_clip=False))
    q = pycoll.create_parameter([2], "float32")
    for clip, want in ((nn.ClipGradByGlobalNorm(1.0), [0.0, 1.0]), (nn.ClipGradByNorm(1.0), [0.0, 1.0]),
                       (nn.ClipGradByValue(0.5), [0.0, 0.5])):
        g = pycoll.to_tensor([3.0, 4.0])
        out = clip([(p, g), (q, pycoll.to_tensor([0.0, 2.0]))])
        assert out[0][0] is p and out[0][1] is g, type(clip).__name__
        np.testing.assert_allclose(out[1][1].numpy(), want, err_msg=type(clip).__name__)
    # clip_grads asks norm_sums for the clipped parameters alone (a pipeline folds other stages' sums into a row)
    asked = []
    got = nn.ClipGradByGlobalNorm(1.0).clip_grads(
        [p, q], [np.array([3.0, 4.0]), np.array([0.0, 2.0])],
        lambda params: asked.extend(params) or (lambda sums: sums + 12.0))  # another rank's piece: 4^2 total
    assert asked == [q]
    np.testing.assert_allclose(got[0], [3.0, 4.0]) and np.testing.assert_allclose(got[1], [0.0, 0.5])
    with pytest.raises(ValueError, match="params has 1 entries and grads 2"):
        nn.ClipGradByNorm(1.0).clip_grads([p], [np.ones(2), np.ones(2)])


# ---- learning-rate schedulers --------------------------------------------------------------------
def test_a_scheduler_drives_the_learning_rate():
    p = make_param()
    scheduler = opt.lr.StepDecay(0.5, step_size=2, gamma=0.1)
    o = opt.SGD(learning_rate=scheduler, parameters=[p])
    expected, lrs = P0.copy(), []
    for g in GRADS:
        lrs.append(o.get_lr())
        p.grad = np.array(g)
        o.step()
        expected = expected - scheduler() * g
        scheduler.step()
    np.testing.assert_allclose(p.numpy(), expected, rtol=1e-15)
    assert lrs == [0.5, 0.5, 0.05] and isinstance(lrs[0], float)
    with pytest.raises(RuntimeError, match="can't be LRScheduler"):
        o.set_lr(0.1)


def test_set_lr_scheduler():
    o = opt.Adam(learning_rate=0.1, parameters=[make_param()])
    o.set_lr_scheduler(opt.lr.ExponentialDecay(0.2, gamma=0.5))
    assert o.get_lr() == 0.2
    with pytest.raises(TypeError, match="LRScheduler"):
        o.set_lr_scheduler(0.1)


def test_the_scheduler_state_travels_with_the_optimizer(tmp_path):
    p = make_param(name="w")
    scheduler = opt.lr.CosineAnnealingDecay(0.1, T_max=4)
    o = opt.Momentum(learning_rate=scheduler, parameters=[p])
    assert o.state_dict() == {"LR_Scheduler": {"last_epoch": 0, "last_lr": 0.1}}  # paddle's, before a step
    for g in GRADS[:2]:
        p.grad = np.array(g)
        o.step()
        scheduler.step()
    pycoll.save(o.state_dict(), tmp_path / "opt")
    resumed = opt.Momentum(learning_rate=opt.lr.CosineAnnealingDecay(0.1, T_max=4), parameters=[make_param(name="w")])
    resumed.set_state_dict(pycoll.load(tmp_path / "opt"))
    assert resumed._learning_rate.last_epoch == 2 and resumed.get_lr() == o.get_lr()
    np.testing.assert_array_equal(resumed.state_dict()["w_velocity_0"].numpy(), o.state_dict()["w_velocity_0"].numpy())
    state = o.state_dict()
    del state["LR_Scheduler"]
    with pytest.raises(ValueError, match="'LR_Scheduler'"):
        resumed.set_state_dict(state)
    lam = opt.SGD(learning_rate=opt.lr.LambdaDecay(0.1, lambda e: 1.0), parameters=[make_param()])
    lam.set_state_dict({})  # paddle exempts LambdaDecay (its function is not saved)


# ---- parameter groups, against paddle 3.3.1 ------------------------------------------------------
W0 = np.array([[0.5, -0.3], [0.2, 0.8], [-0.6, 0.1]])
B0 = np.array([0.05, -0.1])
X = np.array([[1.0, 2.0, -1.0], [0.5, -0.5, 1.5]])
Y = np.array([[0.3, -0.2], [1.0, 0.4]])

# make(w, b) -> optimizer, and the weight and bias after 3 steps on sum((X @ w + b - Y)^2) (the
# scheduler stepped after each), as paddle 3.3.1 gave them for a float64 paddle.nn.Linear(3, 2) with
# those values and the same optimizer (paddle.optimizer for pycoll.optimizer). The coefficients
# are ones float32 holds exactly: paddle's momentum and weight-decay attributes are float32.
GROUP_CASES = {
    "sgd_groups_sched": (
        lambda w, b: opt.SGD(learning_rate=opt.lr.StepDecay(0.2, 1, 0.5), weight_decay=0.01, parameters=[
            {'params': [w], 'learning_rate': 0.1, 'weight_decay': 0.5}, {'params': [b]}]),
        [[0.4648853035, -0.3374832695], [-0.01022637400000001, 0.610242323], [-0.35790793299999996, 0.2615170785]],
        [0.30000812495, -0.2262573499]),
    "momentum_groups": (
        lambda w, b: opt.Momentum(learning_rate=0.1, momentum=0.75, weight_decay=0.25, parameters=[
            {'params': [w], 'momentum': 0.5, 'learning_rate': 2.0, 'weight_decay': 0.5},
            {'params': [b], 'use_nesterov': True}]),
        [[-0.09351367187500026, -0.6751289062500002], [-1.4311511718750005, -0.9434539062499996],
         [1.036012109375, 1.15605703125]],
        [-0.16373260498046882, -0.4550279541015626]),
    "adam_groups": (
        lambda w, b: opt.Adam(learning_rate=0.01, parameters=[
            {'params': [w], 'beta1': 0.5, 'learning_rate': 0.5},
            {'params': [b], 'weight_decay': 0.1, 'epsilon': 1e-3}]),
        [[0.48500942909910544, -0.31488417647626166], [0.18502586042694788, 0.7850589776031803],
         [-0.585028773279025, 0.11497010533053179]],
        [0.07994744518526087, -0.12983806734428124]),
    "adamw_groups_sched": (
        lambda w, b: opt.AdamW(learning_rate=opt.lr.ExponentialDecay(0.1, 0.9), weight_decay=0.25, parameters=[
            {'params': [w], 'weight_decay': 0.5, 'learning_rate': 0.1}, {'params': [b]}]),
        [[0.4662809391238109, -0.3225150317153605], [0.17031521202662836, 0.7623206269844712],
         [-0.564957985874469, 0.12562187666833702]],
        [0.29885674896809566, -0.3262093780455187]),
    "sgd_clip_per_group": (
        lambda w, b: opt.SGD(learning_rate=0.1, grad_clip=nn.ClipGradByGlobalNorm(1.0), parameters=[
            {'params': [w]}, {'params': [b]}]),
        [[0.47955153033431963, -0.3331292919490767], [0.04315276591636382, 0.6660179711943327],
         [-0.4249511373312857, 0.22342721849242864]],
        [0.25101440420789595, -0.21727054047008534]),
    "adam_sched_plain": (
        lambda w, b: opt.Adam(learning_rate=opt.lr.CosineAnnealingDecay(0.05, T_max=3), parameters=[w, b]),
        [[0.40095021699538275, -0.3985166043530669], [0.10030898980416066, 0.7006052683340435],
         [-0.5002339448264134, 0.19968923641910474]],
        [0.15006962040727442, -0.19328204675661223]),
}


def _train_linear(make, steps=3):
    w, b = make_param(W0, name="w"), make_param(B0, name="b")
    o = make(w, b)
    for _ in range(steps):
        d = pycoll.matmul(pycoll.to_tensor(X), w) + b - pycoll.to_tensor(Y)
        (d * d).sum().backward()
        o.step()
        o.clear_grad()
        if isinstance(o._learning_rate, opt.lr.LRScheduler):
            o._learning_rate.step()
    return w, b, o


@pytest.mark.parametrize("name", sorted(GROUP_CASES))
def test_parameter_groups_match_paddle(name):
    make, w_want, b_want = GROUP_CASES[name]
    w, b, _ = _train_linear(make)
    np.testing.assert_allclose(w.numpy(), w_want, rtol=1e-12)
    np.testing.assert_allclose(b.numpy(), b_want, rtol=1e-12)


def test_a_groups_learning_rate_multiplies_the_optimizers():
    a, b = make_param(name="a"), make_param(name="b")
    o = opt.SGD(learning_rate=0.5, parameters=[{'params': a, 'learning_rate': 0.1}, {'params': [b]}])
    a.grad, b.grad = np.ones(3), np.ones(3)
    o.step()
    np.testing.assert_allclose(a.numpy(), P0 - 0.05)
    np.testing.assert_allclose(b.numpy(), P0 - 0.5)
    assert o.get_lr() == 0.5


def test_a_groups_own_keys_are_kept_and_change_nothing():
    a, b = make_param(name="a"), make_param(name="b")  # a name to find the group by: paddle's and torch's
    tagged = opt.Adam(parameters=[{'params': [a], 'name': 'backbone', 'momentum': 0.9}, {'params': [b]}])
    plain = opt.Adam(parameters=[{'params': [make_param(name="a")]}, {'params': [make_param(name="b")]}])
    for o in (tagged, plain):
        for p in o._parameter_list:
            p.grad = np.array(GRADS[0])
        o.step()
    assert tagged._groups[0]["name"] == "backbone"
    np.testing.assert_array_equal(a.numpy(), plain._parameter_list[0].numpy())
    with pytest.warns(UserWarning, match=r"parameters\[0\] has \['lr'\].*'learning_rate' \(not 'lr'\)"):
        opt.SGD(parameters=[{'params': [a], 'lr': 0.1}])


def test_groups_set_lazy_mode_and_rescale_grad_as_paddles_do():
    weights = [make_param(name=n) for n in "ab"]
    o = opt.Momentum(learning_rate=0.1, momentum=0.0,
                     parameters=[{'params': weights[:1], 'rescale_grad': 0.5}, {'params': weights[1:]}])
    for p in weights:
        p.grad = np.ones(3)
    o.step()
    np.testing.assert_allclose(weights[0].numpy(), P0 - 0.05)
    np.testing.assert_allclose(weights[1].numpy(), P0 - 0.1)
    lazy, dense = (nn.Embedding(4, 2, sparse=True) for _ in range(2))
    dense.weight.set_value(lazy.weight.numpy())
    o = opt.Adam(parameters=[{'params': lazy.parameters(), 'lazy_mode': True}, {'params': dense.parameters()}])
    for row in (0, 1):  # row 0 has momentum in the second step, and no gradient
        ids = pycoll.to_tensor(np.array([row]))
        (lazy(ids).sum() + dense(ids).sum()).backward()
        before = lazy.weight.numpy().copy()
        o.step()
        o.clear_grad()
    np.testing.assert_array_equal(lazy.weight.numpy()[[0, 2, 3]], before[[0, 2, 3]])  # untouched rows stay
    assert not np.array_equal(dense.weight.numpy()[0], before[0])  # dense Adam moves row 0 on its momentum
    assert not np.array_equal(lazy.weight.numpy()[1], before[1])


def test_adamw_takes_a_tensor_weight_decay_as_its_number():
    results = []
    for decay in (0.5, pycoll.to_tensor(0.5)):
        w = make_param(name="w")
        o = opt.AdamW(learning_rate=0.1, parameters=[w], weight_decay=decay)
        w.grad = np.array(GRADS[0])
        o.step()
        results.append(w.numpy())
    np.testing.assert_array_equal(*results)


def test_parameter_groups_are_checked():
    a, b = make_param(name="a"), make_param(name="b")
    with pytest.raises(ValueError, match=r"parameters\[0\]\['beta1'\]"):
        opt.Adam(parameters=[{'params': [a], 'beta1': 1.5}])
    with pytest.raises(ValueError, match="'params'"):
        opt.SGD(parameters=[{'learning_rate': 0.1}])
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.SGD(parameters=[{'params': [a]}, {'params': [a, b]}])
    with pytest.raises(TypeError, match="set"):
        opt.SGD(parameters=[{'params': {a}}])
    with pytest.raises(TypeError, match="mixture"):
        opt.SGD(parameters=[{'params': [a]}, b])
    with pytest.raises(TypeError, match="list of dicts"):
        opt.SGD(parameters={'params': [a]})
    with pytest.raises(TypeError, match="got a Tensor"):
        opt.SGD(parameters=a)
    with pytest.raises(ValueError, match=r"parameters\[1\]\['beta1'\]"):
        opt.Adam(parameters=[{'params': [a]}, {'params': [b], 'beta1': 1.0}])
    with pytest.raises(ValueError, match=r"parameters\[0\]\['learning_rate'\]"):
        opt.SGD(parameters=[{'params': [a], 'learning_rate': -1}])


def test_a_groups_weight_decay_of_none_falls_back_to_the_optimizers():
    a = make_param(name="a")
    o = opt.SGD(learning_rate=0.1, weight_decay=0.5, parameters=[{'params': [a], 'weight_decay': None}])
    a.grad = np.array(GRADS[0])
    o.step()
    np.testing.assert_allclose(a.numpy(), P0 - 0.1 * (GRADS[0] + 0.5 * P0))


@pytest.mark.parametrize("attr, group, want", [
    # paddle 3.3.1 (SGD, lr 0.1, w = [1, -2], gradient [1, 1]): a group replaces the ParamAttr's
    # learning rate and regularizer with its own (1.0 and the optimizer's decay by default)
    ({"learning_rate": 0.5}, {}, [0.9, -2.1]),
    ({"learning_rate": 0.5}, {"learning_rate": 2.0}, [0.8, -2.2]),
    ({"regularizer": pycoll.regularizer.L2Decay(1.0)}, {}, [0.9, -2.1]),
    ({"regularizer": pycoll.regularizer.L2Decay(1.0)}, {"weight_decay": 0.5}, [0.85, -2.0]),
])
def test_a_group_replaces_the_param_attrs_rate_and_regularizer(attr, group, want):
    lin = nn.Linear(2, 1, weight_attr=pycoll.ParamAttr(**attr), bias_attr=False)
    lin.weight.set_value(np.array([[1.0], [-2.0]], "float32"))
    sgd = opt.SGD(learning_rate=0.1, parameters=[dict(params=[lin.weight], **group)])
    lin(pycoll.ones([1, 2])).sum().backward()
    sgd.step()
    np.testing.assert_allclose(lin.weight.numpy().ravel(), want, rtol=1e-6)


def test_without_groups_the_param_attrs_rate_and_regularizer_act():
    lin = nn.Linear(2, 1, weight_attr=pycoll.ParamAttr(learning_rate=0.5, regularizer=pycoll.regularizer.L2Decay(1.0)),
                    bias_attr=False)
    lin.weight.set_value(np.array([[1.0], [-2.0]], "float32"))
    sgd = opt.SGD(learning_rate=0.1, parameters=lin.parameters())
    lin(pycoll.ones([1, 2])).sum().backward()
    sgd.step()  # w - 0.05 * (1 + w)
    np.testing.assert_allclose(lin.weight.numpy().ravel(), [0.9, -1.95], rtol=1e-6)


def test_over_keeps_each_pieces_group():
    a, b = make_param(name="a"), make_param(name="b")
    o = opt.SGD(learning_rate=1.0, parameters=[{'params': [a], 'learning_rate': 0.5}, {'params': [b]}])
    piece_a, piece_b, other = make_param([0.0], name="a"), make_param([0.0], name="b"), make_param([0.0], name="c")
    part = o.over([piece_a, piece_b, other])
    for t in (piece_a, piece_b, other):
        t.grad = np.ones(1)
    part.step()
    assert [piece_a.item(), piece_b.item(), other.item()] == [-0.5, -1.0, -1.0]


# ---- paddle's beta pows, and checkpoints that do not fit -----------------------------------------
def test_adam_resumes_from_a_paddle_style_state():
    """A state laid out as paddle saves it after two steps (moments, and beta^3 in the pows)."""
    lr_, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    p, m, v = P0.copy(), np.zeros(3), np.zeros(3)
    for t, g in enumerate(GRADS[:2], start=1):
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        p = p - lr_ * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)
    q = make_param(p, name="w")
    o = opt.Adam(learning_rate=lr_, parameters=[q])
    o.set_state_dict({"w_moment1_0": m, "w_moment2_0": v, "w_beta1_pow_acc_0": np.array([b1 ** 3]),
                      "w_beta2_pow_acc_0": np.array([b2 ** 3])})
    q.grad = np.array(GRADS[2])
    o.step()
    np.testing.assert_allclose(q.numpy(), _adam_reference(lr_, b1, b2, eps)[2], rtol=1e-12)
    assert o.state_dict()["w_beta1_pow_acc_0"].item() == pytest.approx(b1 ** 4, rel=1e-15)


def _stepped_adam(*names):
    params = [make_param(name=n) for n in names]
    o = opt.Adam(parameters=params)
    for p in params:
        p.grad = np.array(GRADS[0])
    o.step()
    return o, params


def test_a_checkpoint_of_other_parameter_names_is_refused():
    saved, _ = _stepped_adam("linear_0.w_0", "linear_0.b_0")
    o, params = _stepped_adam("linear_1.w_0", "linear_1.b_0")
    before = {k: v.numpy().copy() for k, v in o.state_dict().items()}
    with pytest.raises(ValueError) as info:
        o.set_state_dict(saved.state_dict())
    message = str(info.value)
    assert "'linear_1.w_0_moment1_0'" in message and "(missing)" in message
    assert "'linear_0.w_0_moment1_0'" in message and "(unexpected)" in message
    after = o.state_dict()  # a refused state leaves the optimizer's own alone
    assert set(after) == set(before) and all(np.array_equal(after[k].numpy(), before[k]) for k in before)


def test_an_empty_state_loads_as_a_fresh_start():
    o, params = _stepped_adam("w")
    o.set_state_dict({})
    assert o.state_dict() == {}
    params[0].grad = np.array(GRADS[0])
    o.step()  # from scratch, as a freshly built optimizer
    assert o.state_dict()["w_beta1_pow_acc_0"].item() == pytest.approx(0.81)


def test_a_parameter_without_saved_state_starts_it_from_scratch_with_a_warning():
    saved, _ = _stepped_adam("w")  # "u" had no gradient before the save
    u, w = make_param(name="u"), make_param(name="w")
    frozen = make_param(name="f")
    frozen.stop_gradient = True
    o = opt.Adam(parameters=[u, w, frozen])
    o.set_state_dict(saved.state_dict())
    w.grad = np.array(GRADS[1])
    o.step()  # u still has no gradient: fine
    u.grad = np.array(GRADS[1])
    with pytest.warns(UserWarning, match=r"no \['u_moment1_0', .*parameter 'u'.*starts from scratch"):
        o.step()
    fresh = opt.Adam(parameters=[make_param(name="u")])
    fresh._parameter_list[0].grad = np.array(GRADS[1])
    fresh.step()
    np.testing.assert_array_equal(u.numpy(), fresh._parameter_list[0].numpy())  # u's first step from scratch
    u.grad = np.array(GRADS[1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        o.step()  # said once


def test_unknown_extra_entries_alone_are_ignored():
    saved, _ = _stepped_adam("w", "extra")
    o, _ = _stepped_adam("w")
    o.set_state_dict(saved.state_dict())  # an optimizer over some of the saved parameters
    assert set(o.state_dict()) == {"w_moment1_0", "w_moment2_0", "w_beta1_pow_acc_0", "w_beta2_pow_acc_0"}


def test_a_refused_state_leaves_the_scheduler_alone():
    a, b = make_param(name="a"), make_param(name="b")
    saved = opt.Adam(learning_rate=opt.lr.StepDecay(0.1, 1), parameters=[a])
    a.grad = np.array(GRADS[0])
    saved.step()
    saved._learning_rate.step()
    o = opt.Adam(learning_rate=opt.lr.StepDecay(0.1, 1), parameters=[b])
    with pytest.raises(ValueError, match="unexpected"):
        o.set_state_dict(saved.state_dict())
    assert o._learning_rate.last_epoch == 0 and o.get_lr() == 0.1


def test_a_param_attr_s_learning_rate_and_need_clip_act_as_paddle_s():
    """ParamAttr(learning_rate=3.0, need_clip=False): that weight steps at 3x the rate, unclipped;
    the other is clipped alone. The numbers are paddle 3.3.1's for the same program."""
    w0 = np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)
    a = nn.Linear(2, 2, weight_attr=nn.ParamAttr(learning_rate=3.0, need_clip=False), bias_attr=False)
    b = nn.Linear(2, 2, bias_attr=False)
    a.weight.set_value(w0)
    b.weight.set_value(w0 * 0.5)
    opt = pycoll.optimizer.SGD(learning_rate=0.1, parameters=a.parameters() + b.parameters(),
                               grad_clip=nn.ClipGradByGlobalNorm(0.5))
    x = pycoll.to_tensor([[1.0, 2.0]])
    (a(x).sum() + b(x).sum() * 2).backward()
    opt.step()
    np.testing.assert_allclose(a.weight.numpy(), [[0.7, 1.7], [2.4, -1.6]], rtol=1e-6)
    np.testing.assert_allclose(b.weight.numpy(), [[0.48418862, 0.98418862], [1.46837723, -0.53162277]], rtol=1e-6)


class _Tenth(pycoll.regularizer.WeightDecayRegularizer):
    """A regularizer of one's own (paddle's base class): 0.1 * param, L2Decay(0.1)'s term."""

    def __call__(self, param, grad, block):
        assert block is None and grad.shape == param.shape
        return 0.1 * param


def test_regularizers_as_weight_decay_and_param_attr_act_as_paddle_s():
    """pycoll.regularizer's L1Decay / L2Decay (and one's own) as an optimizer's weight_decay, and a
    ParamAttr's regularizer winning over it; the numbers are paddle 3.3.1's for the same programs."""
    w0 = np.array([[1.0, -2.0], [3.0, -1.0]], np.float32)
    x = pycoll.to_tensor([[1.0, 2.0]])
    for reg, want in ((pycoll.regularizer.L1Decay(0.1), [[0.681, -2.261], [2.391, -1.551]]),
                      (pycoll.regularizer.L2Decay(0.1), [[0.6821, -2.2312], [2.3353, -1.5491]]),
                      (_Tenth(), [[0.6821, -2.2312], [2.3353, -1.5491]])):
        layer = nn.Linear(2, 2, bias_attr=False)
        layer.weight.set_value(w0)
        momentum = pycoll.optimizer.Momentum(learning_rate=0.1, momentum=0.9, parameters=layer.parameters(),
                                             weight_decay=reg)
        for _ in range(2):
            layer(x).sum().backward()
            momentum.step()
            momentum.clear_grad()
        np.testing.assert_allclose(layer.weight.numpy(), want, rtol=1e-5)
    layer = nn.Linear(2, 2, weight_attr=nn.ParamAttr(regularizer=pycoll.regularizer.L1Decay(0.5)), bias_attr=False)
    layer.weight.set_value(w0)
    sgd = pycoll.optimizer.SGD(learning_rate=0.1, parameters=layer.parameters(), weight_decay=0.1)
    layer(x).sum().backward()
    sgd.step()
    np.testing.assert_allclose(layer.weight.numpy(), [[0.85, -2.05], [2.75, -1.15]], rtol=1e-6)
    with pytest.raises(ValueError, match="coeff"):
        pycoll.regularizer.L2Decay(-1)


def test_regularization_and_param_groups_read_as_paddles():
    """paddle 3.3.1: ``regularization`` is an L2Decay for a float weight decay (None for AdamW);
    ``_param_groups`` the parameters, or the group dicts with the optimizer's defaults filled in."""
    layer = nn.Linear(2, 2)
    adam = pycoll.optimizer.Adam(parameters=layer.parameters(), weight_decay=0.1)
    assert isinstance(adam.regularization, pycoll.regularizer.L2Decay) and adam.regularization.coeff == 0.1
    assert [id(p) for p in adam._param_groups] == [id(layer.weight), id(layer.bias)]
    assert pycoll.optimizer.AdamW(parameters=layer.parameters()).regularization is None
    clip = nn.ClipGradByNorm(1.0)
    grouped = pycoll.optimizer.SGD(parameters=[{"params": [layer.weight], "learning_rate": 0.5},
                                               {"params": [layer.bias], "grad_clip": None}],
                                   weight_decay=pycoll.regularizer.L1Decay(0.2), grad_clip=clip)
    first, second = grouped._param_groups
    assert first["params"][0] is layer.weight and first["learning_rate"] == 0.5 and first["grad_clip"] is clip
    assert isinstance(first["weight_decay"], pycoll.regularizer.L1Decay) and second["grad_clip"] is None


def test_a_regularizer_of_ones_own_and_paddles_call_form():
    """paddle's WeightDecayRegularizer: a subclass's ``__call__(param, grad, block)`` gives the
    term (see the test above: one of coeff * param updates as L2Decay(coeff)); the base class
    alone says what to define; paddle's own regularizers are callable so too."""
    term = pycoll.regularizer.L1Decay(0.5)(pycoll.to_tensor([2.0, -3.0]), pycoll.to_tensor([1.0, 1.0]), None)
    assert term.numpy().tolist() == [0.5, -0.5]  # paddle's call form of its own regularizers
    with pytest.raises(NotImplementedError, match="defines __call__"):
        pycoll.regularizer.WeightDecayRegularizer()(term, term, None)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_beta_powers_are_saved_in_paddles_dtype_and_resume_bit_for_bit(dtype):
    """paddle saves Adam's beta powers as one-element tensors in the parameter's dtype (float32 for
    16-bit ones) and its set_state_dict refuses another dtype; pycoll computes them in double (its
    results are then paddle's to 1e-7, closer than with float32 powers) and, loading a float32
    power, finds the double it was rounded from, so a resumed run equals the unbroken one."""
    def run(steps, state=None):
        pycoll.seed(3)
        layer = pycoll.nn.Linear(2, 2, weight_attr=pycoll.ParamAttr(name="w"), bias_attr=pycoll.ParamAttr(name="b"))
        layer.to(dtype=dtype)
        adam = opt.Adam(learning_rate=0.1, parameters=layer.parameters())
        if state is not None:
            layer.set_state_dict(state[0])
            adam.set_state_dict(state[1])
        for _ in range(steps):
            layer(pycoll.ones([1, 2], dtype=dtype) * 0.5).sum().backward()
            adam.step()
            adam.clear_grad()
        return layer, adam

    layer, adam = run(3)
    state = adam.state_dict()
    b1 = state[f"{layer.weight.name}_beta1_pow_acc_0"]
    assert b1.dtype == np.dtype(dtype) and b1.shape == [1]
    assert b1.numpy()[0] == np.dtype(dtype).type(0.9 * 0.9 * 0.9 * 0.9)
    saved = io.BytesIO()
    pycoll.save((layer.state_dict(), state), saved)
    saved.seek(0)
    resumed, _ = run(4, pycoll.load(saved))
    unbroken, _ = run(7)
    np.testing.assert_array_equal(resumed.weight.numpy(), unbroken.weight.numpy())


def test_a_state_entry_belongs_to_the_longest_parameter_name_that_prefixes_it():
    """Parameter names may prefix one another ('w' and 'w_1'): sharding and auto-parallel map each
    saved entry to its parameter through this one rule."""
    from pycoll.optimizer.optimizer import state_owner
    names = ["w", "w_1", "linear_0.b_0"]
    assert state_owner("w_moment1_0", names) == "w"
    assert state_owner("w_1_moment1_0", names) == "w_1"
    assert state_owner("linear_0.b_0_beta1_pow_acc_0", names) == "linear_0.b_0"
    assert state_owner("LR_Scheduler", names) is None


def test_a_one_value_accumulator_of_another_shape_is_refused_on_load():
    p = make_param(name="w")
    o = opt.Adam(parameters=[p])
    p.grad = np.array(GRADS[0])
    o.step()
    state = o.state_dict()
    state["w_beta1_pow_acc_0"] = pycoll.to_tensor([0.5, 0.5])
    with pytest.raises(ValueError, match=r"state_dict\['w_beta1_pow_acc_0'\] has shape \[2\]; this accumulator holds one value"):
        opt.Adam(parameters=[make_param(name="w")]).set_state_dict(state)


@pytest.mark.parametrize("cls", [opt.Adam, opt.AdamW, opt.Adamax, opt.Lamb])
def test_a_state_written_into_the_state_dicts_tensors_is_the_optimizers(cls):
    """``dist.load_state_dict(opt.state_dict(), path)`` loads in place: the beta powers, kept as
    numbers, must be taken from their tensors as the moments' arrays are the optimizer's own."""
    p = make_param(name="w")
    o = cls(parameters=[p], learning_rate=0.1)
    p.grad = np.array(GRADS[0])
    o.step()
    saved = {k: v.numpy().copy() for k, v in o.state_dict().items()}
    for g in GRADS[1:]:
        p.grad = np.array(g)
        o.step()
    early = o.state_dict()  # taken before the last step, and again: paddle's tensors are live
    assert all(early[k] is v for k, v in o.state_dict().items() if k.endswith("pow_acc_0"))
    p.grad = np.array(GRADS[2])
    o.step()
    assert {k: v.numpy().tolist() for k, v in early.items()} == {k: v.numpy().tolist() for k, v in o.state_dict().items()}
    for key, tensor in early.items():  # an in-place load of the first step's state, into the early dict
        tensor.array[...] = saved[key]
    assert {k: v.numpy().tolist() for k, v in o.state_dict().items()} == {k: v.tolist() for k, v in saved.items()}
    p.set_value(np.array([0.5, 0.25, -1.0]))
    p.grad = np.array(GRADS[2])
    o.step()
    q = make_param([0.5, 0.25, -1.0], name="w")
    fresh = cls(parameters=[q], learning_rate=0.1)
    fresh.set_state_dict({k: pycoll.to_tensor(v) for k, v in saved.items()})
    q.grad = np.array(GRADS[2])
    fresh.step()
    np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_master_weights_flattened_by_a_checkpoint_load_as_nested_ones():
    """dist.load_merged_state_dict gives 'master_weights.w' for the nested {'master_weights': {'w': ...}}."""
    p = nn.Parameter(np.array([1.0, -2.0, 0.5], dtype=np.float16), name="w")
    o = opt.Adam(parameters=[p], learning_rate=0.1, multi_precision=True)
    p.grad = np.array(GRADS[0], dtype=np.float16)
    o.step()
    state = o.state_dict()
    flat = {k: v for k, v in state.items() if k != "master_weights"}
    flat["master_weights.w"] = state["master_weights"]["w"]
    fresh = opt.Adam(parameters=[nn.Parameter(p.numpy(), name="w")], learning_rate=0.1, multi_precision=True)
    fresh.set_state_dict(flat)
    np.testing.assert_array_equal(fresh.state_dict()["master_weights"]["w"].numpy(), state["master_weights"]["w"].numpy())
    assert fresh.state_dict()["master_weights"]["w"].numpy().dtype == np.float32


@pytest.mark.parametrize("cls", [opt.SGD, opt.Momentum, opt.Adam, opt.AdamW])
def test_a_half_precision_parameter_without_master_weights_is_warned_about_once(cls):
    """paddle 3.3.1 warns "Accumulating with FP16/BF16 in optimizer can lead to poor accuracy ...
    Consider using multi_precision=True"; with multi_precision=True nothing is said."""
    p = nn.Parameter(np.array([1.0, -2.0, 0.5], dtype=np.float16), name="w")
    o = cls(parameters=[p], learning_rate=0.1)
    with pytest.warns(UserWarning, match=f"multi_precision=True option of the {cls.__name__} optimizer") as said:
        for _ in range(2):
            p.grad = np.array(GRADS[0], dtype=np.float16)
            o.step()
    assert len([w for w in said if "Accumulating with FP16/BF16" in str(w.message)]) == 1
    q = nn.Parameter(np.array([1.0, -2.0, 0.5], dtype=np.float16), name="w")
    quiet = cls(parameters=[q], learning_rate=0.1, multi_precision=True)
    q.grad = np.array(GRADS[0], dtype=np.float16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet.step()


def test_append_regularization_ops_adds_each_parameters_decay_term():
    """paddle 3.3.1 printed these: the ParamAttr's L1Decay wins over the argument's L2Decay, a
    parameter without one takes the argument's, and a None gradient stays None."""
    values = np.array([1.0, -2.0, 0.5], dtype=np.float32)
    w = pycoll.create_parameter([3], "float32", attr=pycoll.ParamAttr(regularizer=pycoll.regularizer.L1Decay(0.1)),
                                default_initializer=nn.initializer.Assign(values))
    v = pycoll.create_parameter([3], "float32", default_initializer=nn.initializer.Assign(values))
    u = pycoll.create_parameter([3], "float32")
    (w * v * 2).sum().backward()
    o = opt.SGD(0.1, parameters=[w, v, u])
    for regularization, v_grad in ((pycoll.regularizer.L2Decay(0.5), [2.5, -5.0, 1.25]), (None, [2.0, -4.0, 1.0])):
        out = o.append_regularization_ops([(w, w.grad), (v, v.grad), (u, None)], regularization)
        assert [p is q for (p, _), q in zip(out, (w, v, u))] == [True] * 3
        np.testing.assert_allclose(out[0][1].numpy(), [2.1, -4.1, 1.1], rtol=1e-6)
        np.testing.assert_allclose(out[1][1].numpy(), v_grad, rtol=1e-6)
        assert out[2][1] is None
    with pytest.raises(TypeError, match="regularization must be a number"):
        o.append_regularization_ops([(v, v.grad)], "l2")


def test_the_optimizer_base_class_names_itself_when_stepped():
    p = make_param([1.0, 2.0, 3.0], name="w")
    o = opt.Optimizer(0.1, parameters=[p])
    p.grad = np.array(GRADS[0])
    with pytest.raises(NotImplementedError, match='class "Optimizer" cannot be used directly'):
        o.step()
