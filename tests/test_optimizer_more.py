"""RMSProp and Adagrad against paddle 3.3.1: the parameters and every state_dict entry after three
steps (values paddle printed for the same run, pasted here; they agree to 3e-6 relative, float32
rounding), against the update rules written out in NumPy, and their arguments' checks."""
import numpy as np
import pytest

import pycoll
import pycoll.optimizer as opt

W0 = np.array([[0.5, -1.0, 2.0], [0.0, 1.5, -0.25]], np.float32)
B0 = np.array([0.1, 0.2, -0.3], np.float32)
X = np.array([[1.0, -2.0], [0.5, 3.0]], np.float32)
_runs = iter(range(10 ** 6))


def paddle_run(make, steps=3):
    """paddle's probe: w [2, 3] and b [3] (named w<k>, b<k>) trained on loss = sum((X @ w + b)^2)
    * (step + 1) for `steps` steps; returns the optimizer, w and b."""
    k = next(_runs)
    w = pycoll.create_parameter([2, 3], "float32", name=f"w{k}")
    b = pycoll.create_parameter([3], "float32", name=f"b{k}")
    w.set_value(W0)
    b.set_value(B0)
    o = make([w, b])
    for step in range(steps):
        loss = ((pycoll.to_tensor(X) @ w + b) ** 2).sum() * (step + 1)
        loss.backward()
        o.step()
        o.clear_grad()
    return o, w, b


def assert_state(o, w, b, want_w, want_b, state):
    np.testing.assert_allclose(w.numpy().ravel(), want_w, rtol=3e-6, atol=1e-7)
    np.testing.assert_allclose(b.numpy(), want_b, rtol=3e-6, atol=1e-7)
    saved = o.state_dict()
    names = {key.replace(w.name, "w").replace(b.name, "b"): value for key, value in saved.items()}
    assert sorted(names) == sorted(state)
    for key, values in state.items():
        np.testing.assert_allclose(names[key].numpy().ravel(), values, rtol=3e-6, atol=1e-7, err_msg=key)


# paddle 3.3.1's numbers for each run (parameters after three steps, then the state_dict)
RMSPROP_RUNS = {
    "defaults": (
        lambda p: opt.RMSProp(0.01, parameters=p),
        [0.3832782506942749, -0.8789913058280945, 1.8804210424423218, 0.025817815214395523, 1.3795520067214966,
         -0.13205981254577637],
        [-0.016370270401239395, 0.08358169347047806, -0.4199584424495697],
        {"b_mean_grad_0": [0.0] * 3,
         "b_mean_square_0": [1.4770138263702393, 0.2502482533454895, 10.754064559936523],
         "b_momentum_0": [0.03250236064195633, 0.03310548514127731, 0.03546348959207535],
         "w_mean_grad_0": [0.0] * 6,
         "w_mean_square_0": [0.944397509098053, 7.7487077713012695, 10.48884105682373, 0.19165849685668945,
                             1012.1669921875, 37.92646789550781],
         "w_momentum_0": [0.033649545162916183, -0.03613702207803726, 0.035216495394706726, -0.02512483298778534,
                          0.03578285872936249, -0.03412610664963722]}),
    "momentum_centered_decay": (
        lambda p: opt.RMSProp(0.01, rho=0.9, epsilon=1e-4, momentum=0.5, centered=True, parameters=p,
                              weight_decay=0.1),
        [0.36871370673179626, -0.8652490973472595, 1.8664017915725708, 0.0021125394850969315, 1.3655104637145996,
         -0.11736860126256943],
        [-0.03176971524953842, 0.06878189742565155, -0.43418726325035095],
        {"b_mean_grad_0": [0.8790059089660645, 0.3629146218299866, 2.251227855682373],
         "b_mean_square_0": [3.0762791633605957, 0.5206705927848816, 21.135040283203125],
         "b_momentum_0": [0.05089966952800751, 0.05069759115576744, 0.05298367142677307],
         "w_mean_grad_0": [0.7044246196746826, -1.9174959659576416, 2.296342372894287, 0.09992929548025131,
                           21.82342529296875, -4.354432582855225],
         "w_mean_square_0": [1.9630308151245117, 15.560396194458008, 21.72112274169922, 0.11663977056741714,
                             2000.9840087890625, 76.5820541381836],
         "w_momentum_0": [0.05084977671504021, -0.053460732102394104, 0.052590250968933105, 0.01623263768851757,
                          0.05322933942079544, -0.051765359938144684]}),
    "groups": (
        lambda p: opt.RMSProp(0.01, parameters=[{"params": [p[0]], "rho": 0.8, "momentum": 0.9},
                                                {"params": [p[1]], "centered": True, "epsilon": 0.1}]),
        [0.3840402662754059, -0.8820064663887024, 1.8826627731323242, 0.005921779200434685, 1.3821876049041748,
         -0.13310444355010986],
        [-0.010064397007226944, 0.11529885232448578, -0.42240628600120544],
        {"b_mean_grad_0": [0.469029039144516, 0.20342454314231873, 1.1686697006225586],
         "b_mean_square_0": [1.6899511814117432, 0.32176095247268677, 10.873367309570312],
         "b_momentum_0": [0.03492036461830139, 0.03165591135621071, 0.03773227706551552],
         "w_mean_grad_0": [0.0] * 6,
         "w_mean_square_0": [3.8567490577697754, 28.89582633972168, 40.44711685180664, 0.12811680138111115,
                             3901.78515625, 161.08053588867188],
         "w_momentum_0": [0.0535452738404274, -0.05510769039392471, 0.054612986743450165, 0.01723095029592514,
                          0.05497042462229729, -0.054205626249313354]}),
}

ADAGRAD_RUNS = {
    "defaults": (
        lambda p: opt.Adagrad(0.1, parameters=p),
        [0.2663373649120331, -0.7314050197601318, 1.7398655414581299, 0.031486425548791885, 1.2343347072601318,
         -0.0028655827045440674],
        [-0.13222260773181915, -0.032809969037771225, -0.562597930431366],
        {"b_moment_0": [15.161118507385254, 2.3410634994506836, 177.72927856445312],
         "w_moment_0": [8.485953330993652, 152.8794708251953, 162.47784423828125, 21.55558204650879,
                        18260.513671875, 443.1470947265625]}),
    "initial_value_and_decay": (
        lambda p: opt.Adagrad(0.1, epsilon=1e-3, parameters=p, weight_decay=0.05, initial_accumulator_value=0.5),
        [0.2728540301322937, -0.7349027395248413, 1.7418527603149414, 0.05011468753218651, 1.2343446016311646,
         -0.003270670771598816],
        [-0.12126602232456207, -0.00788700208067894, -0.5609622001647949],
        {"b_moment_0": [14.5814208984375, 3.9135608673095703, 178.21939086914062],
         "w_moment_0": [11.045890808105469, 148.70628356933594, 167.76031494140625, 27.32298469543457,
                        18345.15625, 445.22918701171875]}),
    "groups": (
        lambda p: opt.Adagrad(0.1, parameters=[{"params": [p[0]], "initial_accumulator_value": 2.0},
                                               {"params": [p[1]], "epsilon": 0.5, "learning_rate": 0.5}]),
        [0.28380024433135986, -0.7440810203552246, 1.7432578802108765, 0.0644649788737297, 1.2342206239700317,
         -0.0057906657457351685],
        [-0.007926493883132935, 0.10230988264083862, -0.42422357201576233],
        {"b_moment_0": [24.687030792236328, 7.329543113708496, 211.52645874023438],
         "w_moment_0": [18.60370635986328, 132.3900146484375, 188.63726806640625, 5.197293281555176,
                        18456.34765625, 429.25079345703125]}),
}


@pytest.mark.parametrize("name", sorted(RMSPROP_RUNS))
def test_rmsprop_matches_paddle(name):
    make, want_w, want_b, state = RMSPROP_RUNS[name]
    assert_state(*paddle_run(make), want_w, want_b, state)


@pytest.mark.parametrize("name", sorted(ADAGRAD_RUNS))
def test_adagrad_matches_paddle(name):
    make, want_w, want_b, state = ADAGRAD_RUNS[name]
    assert_state(*paddle_run(make), want_w, want_b, state)


def test_a_named_optimizer_keys_its_state_as_paddle():
    # paddle 3.3.1, one step of Adagrad(0.1, name="ada"): '<param>_ada_moment_0'
    o, w, b = paddle_run(lambda p: opt.Adagrad(0.1, parameters=p, name="ada"), steps=1)
    assert sorted(o.state_dict()) == [f"{b.name}_ada_moment_0", f"{w.name}_ada_moment_0"]
    np.testing.assert_allclose(w.numpy().ravel(), [0.40000006556510925, -0.9000000357627869, 1.899999976158142,
                                                   0.09999966621398926, 1.399999976158142, -0.15000000596046448],
                               rtol=3e-6, atol=1e-6)
    np.testing.assert_allclose(o.state_dict()[f"{w.name}_ada_moment_0"].numpy().ravel(),
                               [2.4025001525878906, 11.5600004196167, 18.92249870300293, 0.09000011533498764,
                                1632.1597900390625, 82.81000518798828], rtol=3e-6)


GRADS = [np.array([0.1, -0.2, 0.3]), np.array([-0.4, 0.5, 0.6]), np.array([0.7, 0.0, -0.9])]


def steps_of(o, p):
    for g in GRADS:
        p.grad = np.array(g)
        o.step()
    return p.numpy()


def test_the_update_rules_written_out():
    p = pycoll.nn.Parameter(np.array([1.0, -2.0, 0.5]))
    got = steps_of(opt.RMSProp(0.1, rho=0.8, epsilon=1e-3, momentum=0.7, centered=True, parameters=[p]), p)
    want, ms, mg, mom = np.array([1.0, -2.0, 0.5]), 0.0, 0.0, 0.0
    for g in GRADS:
        ms = 0.8 * ms + 0.2 * g * g
        mg = 0.8 * mg + 0.2 * g
        mom = 0.7 * mom + 0.1 * g / np.sqrt(ms - mg * mg + 1e-3)
        want = want - mom
    np.testing.assert_allclose(got, want, rtol=1e-12)
    p = pycoll.nn.Parameter(np.array([1.0, -2.0, 0.5]))
    got = steps_of(opt.Adagrad(0.2, epsilon=1e-2, parameters=[p], initial_accumulator_value=0.3), p)
    want, moment = np.array([1.0, -2.0, 0.5]), 0.3
    for g in GRADS:
        moment = moment + g * g
        want = want - 0.2 * g / (np.sqrt(moment) + 1e-2)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_state_round_trips_and_arguments_are_checked():
    o, w, b = paddle_run(lambda p: opt.RMSProp(0.01, momentum=0.5, parameters=p), steps=2)
    again = opt.RMSProp(0.01, momentum=0.5, parameters=[w, b])
    again.set_state_dict(o.state_dict())
    for key, value in o.state_dict().items():
        np.testing.assert_array_equal(again.state_dict()[key].numpy(), value.numpy())
    assert opt.RMSProp(0.1, parameters=[w])._rho == 0.95 and opt.Adagrad(0.1, parameters=[w])._epsilon == 1e-6
    for bad in (dict(rho=-0.1), dict(epsilon=-1.0), dict(momentum=-0.5)):
        with pytest.raises(ValueError, match=list(bad)[0]):
            opt.RMSProp(0.1, parameters=[w], **bad)
    with pytest.raises(ValueError, match="epsilon"):
        opt.Adagrad(0.1, epsilon=-1.0, parameters=[w])
    with pytest.raises(TypeError, match="initial_accumulator_value"):
        opt.Adagrad(0.1, parameters=[w], initial_accumulator_value="0")
