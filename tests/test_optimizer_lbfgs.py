"""LBFGS against paddle 3.3.1: the same float64 problems (Rosenbrock in 2 and 10 dimensions, a
least-squares MLP, a linear, a steep and a one-bump function; with and without the strong-Wolfe
line search, a history of 3 that wraps, the tolerance and max_eval stops) give the same iterates;
then a quadratic against NumPy's solve, the line search on scripted functions, the state_dict
round trip and the argument checks."""
import numpy as np
import pytest

import pycoll
from pycoll.optimizer._line_search import cubic_minimum, strong_wolfe


def rosenbrock(x):
    return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()


RNG = np.random.RandomState(0)
X = RNG.randn(20, 3)
Y = np.sin(X.sum(1, keepdims=True))
MLP0 = [RNG.randn(3, 8) * 0.5, RNG.randn(8) * 0.1, RNG.randn(8, 1) * 0.5, np.zeros(1)]
R10 = [-1.2, 1.0, 0.5, -0.3, 1.1, 0.9, -0.8, 0.2, 1.3, -1.0]


def params(values):
    out = []
    for v in values:
        v = np.asarray(v, np.float64)
        p = pycoll.create_parameter(list(v.shape), "float64")
        p.set_value(v)
        out.append(p)
    return out


def rosen_problem(x0):
    (x,) = params([x0])
    return [x], lambda: rosenbrock(x)


def mlp_problem():
    w1, b1, w2, b2 = ps = params(MLP0)
    xt, yt = pycoll.to_tensor(X), pycoll.to_tensor(Y)
    return ps, lambda: ((pycoll.tanh(xt @ w1 + b1) @ w2 + b2 - yt) ** 2).mean()


def linear_problem():
    (x,) = params([[0.5, -1.0, 2.0]])
    c = pycoll.to_tensor(np.array([1.0, -2.0, 0.5]))
    return [x], lambda: (x * c).sum()


def bump_problem():
    (x,) = params([[0.0]])
    return [x], lambda: (-0.1 * x + 5 * pycoll.exp(-((x - 1) ** 2) / 0.08)).sum()


def steep_problem():
    (x,) = params([[1.0, -0.5]])
    return [x], lambda: 1e8 * (x ** 2).sum()


def closure_for(opt, loss_fn):
    def closure():
        opt.clear_grad()
        loss = loss_fn()
        loss.backward()
        return loss
    return closure


def flat(ps):
    return np.concatenate([p.numpy().ravel() for p in ps])


def run(problem, steps, **kwargs):
    """(the loss step returned, func_evals, n_iter, the parameters) after each of `steps` steps."""
    ps, loss_fn = problem
    opt = pycoll.optimizer.LBFGS(parameters=ps, **kwargs)
    closure = closure_for(opt, loss_fn)
    out = []
    for _ in range(steps):
        first = float(opt.step(closure))
        state = opt.state_dict()["state"]
        out.append((first, state["func_evals"], state["n_iter"], flat(ps).tolist()))
    return out


# the problems, the steps to take and LBFGS's arguments; besides the plain runs: the line search
# extrapolating (short first step), zooming through trials that fail Armijo (long first step),
# moving a trial off the bracket's ends (bump), the parameter-change stop (steep), a pair with
# y.s = 0 left out of the history (linear, fixed step), the 25-trial limit (linear, line search)
CASES = {
    "rosen2_fixed_step": (lambda: rosen_problem([-1.5, 2.0]), 3, dict(learning_rate=0.002, max_iter=10)),
    "rosen2_wolfe": (lambda: rosen_problem([-1.5, 2.0]), 3, dict(max_iter=10, line_search_fn="strong_wolfe")),
    "rosen2_wolfe_history3": (lambda: rosen_problem([-1.5, 2.0]), 3,
                              dict(max_iter=15, history_size=3, line_search_fn="strong_wolfe")),
    "rosen10_wolfe_history3": (lambda: rosen_problem(R10), 2,
                               dict(max_iter=25, history_size=3, line_search_fn="strong_wolfe")),
    "rosen10_fixed_step_history3": (lambda: rosen_problem(R10), 2,
                                    dict(learning_rate=0.001, max_iter=12, history_size=3)),
    "rosen10_tolerance_grad": (lambda: rosen_problem(R10), 3, dict(max_iter=100, history_size=5, tolerance_grad=1e-3,
                                                                   line_search_fn="strong_wolfe")),
    "rosen2_tolerance_change": (lambda: rosen_problem([-1.5, 2.0]), 2,
                                dict(max_iter=100, tolerance_change=1e-4, line_search_fn="strong_wolfe")),
    "rosen2_max_eval": (lambda: rosen_problem([-1.5, 2.0]), 2, dict(max_iter=30, max_eval=7,
                                                                     line_search_fn="strong_wolfe")),
    "mlp_fixed_step_history3": (mlp_problem, 3, dict(learning_rate=0.5, max_iter=8, history_size=3)),
    "mlp_wolfe_history3": (mlp_problem, 3, dict(max_iter=10, history_size=3, line_search_fn="strong_wolfe")),
    "rosen2_wolfe_short_first_step": (lambda: rosen_problem([-1.5, 2.0]), 2,
                                      dict(learning_rate=0.01, max_iter=10, line_search_fn="strong_wolfe")),
    "rosen2_wolfe_long_first_step": (lambda: rosen_problem([-1.5, 2.0]), 2,
                                     dict(learning_rate=50.0, max_iter=10, line_search_fn="strong_wolfe")),
    "bump_wolfe": (bump_problem, 1, dict(learning_rate=13.0, max_iter=5, line_search_fn="strong_wolfe")),
    "steep_small_change": (steep_problem, 2, dict(learning_rate=1e-3, max_iter=10, tolerance_change=1e-2)),
    "linear_fixed_step": (linear_problem, 1, dict(max_iter=3)),
    "linear_wolfe_unbounded": (linear_problem, 1, dict(learning_rate=1e-6, max_iter=1, line_search_fn="strong_wolfe")),
}


# What paddle 3.3.1 gave for CASES: (the loss step returned, state_dict()['state']['func_evals'],
# ['n_iter'], the parameters flattened; for the MLP only after the last step), printed by the code
# above with pycoll replaced by paddle (paddle.create_parameter, paddle.tanh, paddle.exp, ...).
PADDLE = {
    "rosen2_fixed_step": [
        (12.5, 10, 10, [-1.4971965558036466, 2.0009360403416703]),
        (12.027785740433512, 20, 20, [-1.495802257714653, 2.0014795357483646]),
        (11.796026531846707, 30, 30, [-1.4944473372161826, 2.002060905994222]),
    ],
    "rosen2_wolfe": [
        (12.5, 12, 10, [-1.0768265614154342, 1.11122748234481]),
        (4.546767747883834, 24, 18, [-0.18808051962352007, 0.019626940366260753]),
        (1.4363331975267744, 37, 27, [0.6392604324105875, 0.3951195851614331]),
    ],
    "rosen2_wolfe_history3": [
        (12.5, 18, 14, [-0.4515929577114776, 0.1583343679073491]),
        (2.3150748189239443, 37, 28, [0.7201758698616754, 0.5230825170765695]),
        (0.08026335478777143, 50, 39, [1.0000006893607882, 1.0000015447871946]),
    ],
    "rosen10_wolfe_history3": [
        (1357.9400000000003, 31, 25, [
            -0.9699139916375126, 0.9368293693342917, 0.920900746050118, 0.8344348977864435, 0.7084370100737686,
            0.47900870945478435, 0.215995657763918, 0.021435540984481152, 0.01289043206638103, 0.005805859002854229,
        ]),
        (7.195879989303016, 58, 50, [
            -0.9937653687142279, 0.9964436245938074, 0.9988989731132486, 0.9966361177392054, 0.9942215125333767,
            0.9855156977473946, 0.9683667751422121, 0.9366168975129224, 0.8752104789811858, 0.7690051615897452,
        ]),
    ],
    "rosen10_fixed_step_history3": [
        (1357.9400000000003, 12, 12, [
            -1.1972781531182637, 0.9976406488994666, 0.49893230168129377, -0.2992441249235554, 1.0952849894611902,
            0.8952467762115212, -0.7967066054903574, 0.20526576203069163, 1.2937506650150616, -0.9915914827018435,
        ]),
        (1335.7734464927235, 24, 24, [
            -1.1638525127002797, 0.9614247937545647, 0.47641020977825915, -0.2684101896600279, 1.0390336442465098,
            0.8403499359774679, -0.8153604996591418, 0.42773955360188415, 1.2880981436985721, -0.8054569730196807,
        ]),
    ],
    "rosen10_tolerance_grad": [
        (1357.9400000000003, 74, 59, [
            -0.9932635096874024, 0.9966056138699043, 0.9982414621567197, 0.9989891985036412, 0.9992261130018467,
            0.9990709529819286, 0.9984498197244416, 0.9970478939184491, 0.9941630782706016, 0.988360145888413,
        ]),
        (3.986579114193512, 75, 59, [
            -0.9932635096874024, 0.9966056138699043, 0.9982414621567197, 0.9989891985036412, 0.9992261130018467,
            0.9990709529819286, 0.9984498197244416, 0.9970478939184491, 0.9941630782706016, 0.988360145888413,
        ]),
        (3.986579114193512, 76, 59, [
            -0.9932635096874024, 0.9966056138699043, 0.9982414621567197, 0.9989891985036412, 0.9992261130018467,
            0.9990709529819286, 0.9984498197244416, 0.9970478939184491, 0.9941630782706016, 0.988360145888413,
        ]),
    ],
    "rosen2_tolerance_change": [
        (12.5, 48, 37, [0.9971109647022589, 0.9939375370286715]),
        (1.691613135563322e-05, 49, 38, [0.9971109647022589, 0.9939375370286715]),
    ],
    "rosen2_max_eval": [
        (12.5, 7, 5, [-1.4142309487677067, 1.9949020404366438]),
        (5.8311603749043, 14, 11, [-0.962909892508046, 0.9154087570839031]),
    ],
    "mlp_fixed_step_history3": [
        (1.3608403209909743, 8, 8, None),
        (0.17915276831514237, 16, 16, None),
        (0.0890308019883673, 24, 24, [
            -2.0374272064598036, 0.2828435409970573, -1.0036371230224495, -0.6850741487510381, -0.031118591157287438,
            0.16692728875815585, -1.1205037591108697, 0.17091859855417763, -1.377299146210534, -0.08406205388682396,
            -0.24620346410984378, 0.2390944719237777, 0.2780142518042018, -0.19590986794356904, -0.4256737936698462,
            0.1802348555458604, -1.7963902410306254, -0.9662254846895459, -0.4933539911711809, -0.07100957939564785,
            -1.0536969163150818, 1.0766532466690995, 0.1979945168596439, -0.9323594089484264, 0.14917989105891585,
            0.448373198735491, 0.11733935389918733, 0.2221140237394778, -0.07781417101514822, -0.18439933194109295,
            -0.3445401803724954, 0.265161124904131, -1.2022690555095705, 0.4743125586320253, 0.8364603932233721,
            0.24006271393864148, 0.1950185688267074, 0.5590084784908342, -0.054416970544594545, 0.08853782836899698,
            -0.09328806521196929,
        ]),
    ],
    "mlp_wolfe_history3": [
        (1.3608403209909743, 11, 10, None),
        (0.08753960129434464, 22, 20, None),
        (0.045555024244735516, 33, 30, [
            -1.9704299819099205, 0.2069752624466762, -0.5851028509494592, -0.5440793905257134, -0.13710594903552104,
            0.4674236024858579, -1.0643368281177654, 0.1833606934868451, -1.581937779255875, 0.09280684224101268,
            -0.3115434257912771, -0.21095334654885248, 0.07978956565590774, 0.004887108319710787,
            -0.6558604499009345, 0.1594872070892241, -1.694991086255033, -1.528128181347693, -0.2615861632506204,
            -0.1129791749147854, -1.1756481352551675, 1.5483256518046011, 0.14773967245340996, -1.1430964913135613,
            0.6466332499360954, 0.33298298619518635, 0.28843743064011534, 0.5988234600402921, -0.00273159973433266,
            -0.14457797863917468, -0.4540646518895971, 0.1300432035974579, -1.233758650643469, 0.31015997541895063,
            1.155199369441627, 0.53025497530093, -0.05085760878815883, 0.4438851134758504, -0.3053987387850972,
            0.2756672496444703, -0.4090797298399066,
        ]),
    ],
    "rosen2_wolfe_short_first_step": [
        (12.5, 14, 5, [-1.4158309308099306, 2.017698764819637]),
        (5.853456567931507, 29, 9, [-0.97967839808801, 0.9314902531389501]),
    ],
    "rosen2_wolfe_long_first_step": [
        (12.5, 12, 3, [-1.195843449676694, 1.382363289847122]),
        (5.049050163106543, 24, 6, [0.6260605378828067, 0.4010065871652783]),
    ],
    "bump_wolfe": [
        (1.8633265860393355e-05, 6, 1, [0.2518739926893398]),
    ],
    "steep_small_change": [
        (125000000.0, 2, 1, [0.9993333333333333, -0.49966666666666665]),
        (124833388.88888888, 4, 2, [0.998334, -0.499167]),
    ],
    "linear_fixed_step": [
        (3.5, 3, 2, [-0.7857142857142857, 1.5714285714285714, 1.3571428571428572]),
    ],
    "linear_wolfe_unbounded": [
        (3.5, 27, 1, [-1.325343346237498e+16, 2.650686692474996e+16, -6626716731187488.0]),
    ],
}
# a 10-d Rosenbrock over 50 line-searched iterations amplifies the last-bit differences of the
# sums (paddle's reduction order is not NumPy's) to 1.2e-9; everything else agrees to 1e-10
TOLERANCE = {"rosen10_wolfe_history3": 1e-8}


@pytest.mark.parametrize("case", sorted(CASES))
def test_iterates_equal_paddles(case):
    make, steps, kwargs = CASES[case]
    got = run(make(), steps, **kwargs)
    tol = TOLERANCE.get(case, 1e-10)
    for step, ((first, evals, iters, x), want) in enumerate(zip(got, PADDLE[case])):
        assert (evals, iters) == want[1:3], f"step {step}: (func_evals, n_iter)"
        assert first == pytest.approx(want[0], rel=1e-12), f"step {step}: the returned loss"
        if want[3] is not None:
            np.testing.assert_allclose(x, want[3], rtol=tol, atol=tol, err_msg=f"step {step}")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_quadratic_reaches_numpys_solution(dtype):
    """0.5 x'Ax - b'x over two parameters (a [2, 2] matrix and a [2] vector) is minimised at
    A^-1 b: full-history L-BFGS with unit steps gets there in one step of 50 iterations."""
    rng = np.random.RandomState(1)
    m = rng.randn(6, 6)
    a, b = m @ m.T + 6 * np.eye(6), rng.randn(6)
    w, v = params([np.zeros((2, 2)), np.zeros(2)])
    if dtype == "float32":
        w, v = (pycoll.create_parameter(p.shape, "float32") for p in (w, v))
        w.set_value(np.zeros((2, 2), np.float32))
        v.set_value(np.zeros(2, np.float32))
    ta, tb = pycoll.to_tensor(a.astype(dtype)), pycoll.to_tensor(b.astype(dtype))

    def loss_fn():
        x = pycoll.concat([w.reshape([-1]), v])
        return 0.5 * (x * (ta @ x)).sum() - (tb * x).sum()

    tight = dict(tolerance_grad=1e-12, tolerance_change=1e-15) if dtype == "float64" else {}
    opt = pycoll.optimizer.LBFGS(parameters=[w, v], max_iter=50, **tight)
    opt.step(closure_for(opt, loss_fn))
    assert w.dtype == v.dtype == np.dtype(dtype)
    tol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(flat([w, v]), np.linalg.solve(a, b), rtol=tol, atol=tol)


def test_cubic_minimum():
    # a quadratic is its own cubic: (t - 2)^2 from t = 0 and t = 3 has its minimum at 2
    assert cubic_minimum(0.0, 4.0, -4.0, 3.0, 1.0, 2.0) == pytest.approx(2.0, rel=1e-15)
    assert cubic_minimum(3.0, 1.0, 2.0, 0.0, 4.0, -4.0) == pytest.approx(2.0, rel=1e-15)
    # clamped into the bounds; a line (zero denominator) runs to the far bound, as paddle's does
    assert cubic_minimum(0.0, 4.0, -4.0, 3.0, 1.0, 2.0, bounds=(2.5, 30.0)) == 2.5
    assert cubic_minimum(0.0, 0.0, -1.0, 1.0, -1.0, -1.0, bounds=(1.01, 10.0)) == 10.0
    # no real minimum: the middle of the bounds
    assert cubic_minimum(0.0, 0.0, 1.0, 1.0, 2 / 3, 1.0) == 0.5


def test_line_search_stops_on_a_narrow_bracket():
    """max|d| = 1e-12 makes the bracket [0, 1] narrower than 1e-9 in parameter change: the
    search returns the start after its one evaluation (paddle's _strong_wolfe gives (0.0, [-1.], 0, 1))."""
    g0, d = np.array([-1.0]), np.array([1e-12])
    loss, grad, step, evals = strong_wolfe(lambda t: (1.0, np.array([2.0])), 1.0, d, 0.0, g0, -1e-12)
    assert (loss, grad.tolist(), step, evals) == (0.0, [-1.0], 0.0, 1)


def test_line_search_keeps_extrapolating_past_a_rise_on_its_second_trial():
    """-t with a step of 9.5 up around t = 5: the trial at 10 is higher than the one at 1 but
    passes Armijo, and only from the third trial on does a rise end the bracketing (paddle's
    rule), so the search extrapolates to its 25-trial limit. paddle 3.3.1's _strong_wolfe on the
    same function tried 1, 10, 10.09, 100.9, ... and returned a step of 1.009e24 after 26 calls."""
    def phi(t):
        s = 1 / (1 + np.exp(-(t - 5) * 4))
        return -t + 9.5 * s, np.array([-1 + 9.5 * 4 * s * (1 - s)])

    trials = []

    def evaluate(t):
        trials.append(t)
        return phi(t)

    f0, g0 = phi(0.0)
    loss, grad, step, evals = strong_wolfe(evaluate, 1.0, np.array([1.0]), f0, g0, float(g0[0]))
    assert trials[:4] == pytest.approx([1.0, 10.0, 10.09, 100.9], rel=1e-15)
    assert (step, loss, grad.tolist(), evals) == (pytest.approx(1.009e24, rel=1e-15), -step, [-1.0], 26)


def _rosen_optimizer(x0):
    ps, loss_fn = rosen_problem(x0)
    opt = pycoll.optimizer.LBFGS(parameters=ps, max_iter=6, history_size=3, line_search_fn="strong_wolfe")
    return ps, opt, closure_for(opt, loss_fn)


def test_state_dict_round_trip_resumes_identically(tmp_path):
    ps, opt, closure = _rosen_optimizer(R10)
    for _ in range(2):
        opt.step(closure)
    path = str(tmp_path / "lbfgs.pdopt")
    pycoll.save(opt.state_dict(), path)
    kept = {k: [t.numpy().copy() for t in v] if isinstance(v, list) else v
            for k, v in opt.state_dict()["state"].items()}
    assert len(kept["old_yk"]) == 3  # the history has wrapped
    resumed_ps, resumed, resumed_closure = _rosen_optimizer(flat(ps))
    resumed.set_state_dict(pycoll.load(path))
    for _ in range(2):
        opt.step(closure)
        resumed.step(resumed_closure)
    np.testing.assert_array_equal(flat(resumed_ps), flat(ps))
    a, b = opt.state_dict()["state"], resumed.state_dict()["state"]
    assert sorted(a) == sorted(b)
    assert (a["func_evals"], a["n_iter"], a["alpha"], a["prev_loss"]) == \
        (b["func_evals"], b["n_iter"], b["alpha"], b["prev_loss"])
    for key in ("old_yk", "old_sk", "ro"):
        for x, y in zip(a[key], b[key]):
            np.testing.assert_array_equal(x.numpy(), y.numpy())
    # the state saved before the last steps did not change with them
    saved = pycoll.load(path)["state"]
    assert saved["n_iter"] == kept["n_iter"] < a["n_iter"]
    for x, y in zip(saved["old_yk"], kept["old_yk"]):
        np.testing.assert_array_equal(x.numpy(), y)


def test_state_dict_layout_is_paddles():
    ps, opt, closure = _rosen_optimizer([-1.5, 2.0])
    assert opt.state_dict() == {"state": {"func_evals": 0, "n_iter": 0}}
    opt.step(closure)
    state = opt.state_dict()["state"]
    # paddle's keys, but its scratch list 'al'
    assert sorted(state) == ["H_diag", "alpha", "d", "func_evals", "n_iter", "old_sk", "old_yk", "prev_flat_grad",
                             "prev_loss", "ro"]
    assert isinstance(state["d"], pycoll.Tensor) and state["d"].shape == [2]
    assert isinstance(state["H_diag"], pycoll.Tensor) and state["H_diag"].shape == []
    assert all(isinstance(r, pycoll.Tensor) for r in state["ro"])
    assert isinstance(state["alpha"], float) and isinstance(state["prev_loss"], float)


def test_set_state_dict_takes_paddles_al_and_refuses_what_does_not_fit():
    ps, opt, closure = _rosen_optimizer([-1.5, 2.0])
    opt.step(closure)
    good = opt.state_dict()["state"]
    fresh = _rosen_optimizer([-1.5, 2.0])[1]
    fresh.set_state_dict({"state": {**good, "al": [None] * 3}})  # paddle's scratch list is dropped
    assert fresh.state_dict()["state"]["n_iter"] == good["n_iter"]
    other = _rosen_optimizer(R10)[1]
    with pytest.raises(ValueError, match=r"'d'.*shape \[2\].*need \[10\]"):
        other.set_state_dict({"state": good})
    with pytest.raises(ValueError, match="history_size 3"):
        fresh.set_state_dict({"state": {**good, "old_yk": good["old_yk"] * 4, "old_sk": good["old_sk"] * 4,
                                        "ro": good["ro"] * 4}})
    with pytest.raises(ValueError, match="'momentum'"):
        fresh.set_state_dict({"state": {**good, "momentum": 1.0}})
    with pytest.raises(ValueError, match="no \\['H_diag'\\]"):
        fresh.set_state_dict({"state": {k: v for k, v in good.items() if k != "H_diag"}})
    with pytest.raises(TypeError, match="'state'"):
        fresh.set_state_dict({"x_moment1_0": good["d"]})


def test_parameter_without_gradient_stays_put():
    (x,), loss_fn = rosen_problem([-1.5, 2.0])
    (unused,) = params([[3.0, 4.0, 5.0]])
    opt = pycoll.optimizer.LBFGS(parameters=[unused, x], max_iter=5, line_search_fn="strong_wolfe")
    opt.step(closure_for(opt, loss_fn))
    assert unused.numpy().tolist() == [3.0, 4.0, 5.0]
    (alone,), alone_loss = rosen_problem([-1.5, 2.0])
    lone = pycoll.optimizer.LBFGS(parameters=[alone], max_iter=5, line_search_fn="strong_wolfe")
    lone.step(closure_for(lone, alone_loss))
    np.testing.assert_array_equal(x.numpy(), alone.numpy())


def test_weight_decay_and_grad_clip_change_nothing_as_in_paddle(caplog):
    """paddle 3.3.1's LBFGS reads the raw gradients: the same iterates with or without them."""
    plain = run(rosen_problem([-1.5, 2.0]), 1, max_iter=5)
    with caplog.at_level("WARNING", logger="pycoll"):
        decayed = run(rosen_problem([-1.5, 2.0]), 1, max_iter=5, weight_decay=0.5,
                      grad_clip=pycoll.nn.ClipGradByGlobalNorm(0.01))
    assert decayed == plain
    assert "ignores weight_decay and grad_clip" in caplog.text


def test_step_returns_the_closures_first_loss():
    ps, opt, closure = _rosen_optimizer([-1.5, 2.0])
    losses = []

    def recording():
        losses.append(closure())
        return losses[-1]

    assert opt.step(recording) is losses[0]
    assert len(losses) == opt.state_dict()["state"]["func_evals"] > 1


def test_one_group_without_options():
    (x,), loss_fn = rosen_problem([-1.5, 2.0])
    opt = pycoll.optimizer.LBFGS(parameters=[{"params": [x]}], max_iter=5)
    opt.step(closure_for(opt, loss_fn))
    assert flat([x]).tolist() == run(rosen_problem([-1.5, 2.0]), 1, max_iter=5)[0][3]
    (y,) = params([[1.0]])
    with pytest.raises(ValueError, match="one parameter group, got 2"):
        pycoll.optimizer.LBFGS(parameters=[{"params": [x]}, {"params": [y]}])
    # a group's options are ignored, as paddle's LBFGS ignores them
    (z,), z_loss = rosen_problem([-1.5, 2.0])
    opt = pycoll.optimizer.LBFGS(parameters=[{"params": [z], "learning_rate": 0.1}], max_iter=5)
    opt.step(closure_for(opt, z_loss))
    assert flat([z]).tolist() == flat([x]).tolist()


def test_learning_rate_and_state_attributes_as_paddle():
    """paddle's LBFGS reads ``self.learning_rate`` in step and keeps ``self.state``."""
    runs = []
    for lr in (1.0, 0.5):
        (x,), loss_fn = rosen_problem([-1.5, 2.0])
        opt = pycoll.optimizer.LBFGS(parameters=[x], max_iter=5)
        opt.learning_rate = lr
        opt.step(closure_for(opt, loss_fn))
        runs.append(flat([x]).tolist())
        assert opt.learning_rate == lr and opt.get_lr() == lr and opt.state["n_iter"] == 5
    assert runs[0] != runs[1]


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(history_size=0), ValueError, "history_size"),
    (dict(history_size=2.5), TypeError, "history_size"),
    (dict(line_search_fn="foo"), ValueError, "line_search_fn.*'foo'"),
    (dict(max_iter=0), ValueError, "max_iter"),
    (dict(max_eval=0), ValueError, "max_eval"),
    (dict(learning_rate=0.0), ValueError, "learning_rate"),
    (dict(learning_rate="1"), TypeError, "learning_rate"),
    (dict(tolerance_grad=-1.0), ValueError, "tolerance_grad"),
    (dict(tolerance_change=-1.0), ValueError, "tolerance_change"),
    (dict(parameters=None), ValueError, "parameters"),
    (dict(parameters=[]), ValueError, "parameters"),
])
def test_bad_arguments_are_refused_by_name(kwargs, error, match):
    kwargs.setdefault("parameters", params([[1.0, 2.0]]))
    with pytest.raises(error, match=match):
        pycoll.optimizer.LBFGS(**kwargs)


def test_closure_checks_and_minimize():
    ps, opt, closure = _rosen_optimizer([-1.5, 2.0])
    with pytest.raises(TypeError, match="closure"):
        opt.step()
    with pytest.raises(TypeError, match="closure must be a callable"):
        opt.step(ps[0])
    with pytest.raises(TypeError, match="closure must return the loss"):
        opt.step(lambda: None)
    with pytest.raises(NotImplementedError, match="does not use this way"):
        opt.minimize(closure())
