"""pycoll.incubate.ModelAverage: the averaged parameters after each of N steps of SGD against
numbers measured on paddle 3.3.1's CPU build (the sliding windows rolling over at several
min/max/rate settings), apply/restore, need_restore=False, the 16384-step split of sum_1,
the state's counters and the argument checks."""
import warnings

import numpy as np
import pytest

import pycoll
from pycoll.incubate import ModelAverage

# Measured on paddle 3.3.1 (CPU), float32, with the training loop of _train below and
# ModelAverage(0.15, min_average_window=2, max_average_window=4): the parameters inside
# `with model_average.apply():` after step s, (w, b). The window rolls over every 2 steps.
PADDLE_AVERAGES = {
    1: ([[-0.00570993, 0.08184814], [0.19776011, 0.2824381], [0.40328947, 0.49917436]],
        [0.45372811, -0.44523931]),
    2: ([[-0.01059982, 0.06646654], [0.19582713, 0.2672258], [0.40609059, 0.49811748]],
        [0.41210327, -0.39602068]),
    3: ([[-0.01570793, 0.05067357], [0.19375671, 0.25097629], [0.40896139, 0.49635115]],
        [0.36496201, -0.3403596]),
    4: ([[-0.02982198, 0.00768784], [0.18774736, 0.20479806], [0.41658172, 0.48943645]],
        [0.2241744, -0.17437708]),
    6: ([[-0.03773482, -0.01461278], [0.18097666, 0.16866709], [0.41717809, 0.47269377]],
        [0.08708164, -0.0144864]),
    12: ([[-0.02520692, -0.00063148], [0.14602503, 0.1258157], [0.36688131, 0.41240701]],
         [0.0337012, 0.03550184]),
}
PADDLE_TRAINED_12 = ([[-0.02371122, 0.00094431], [0.14227486, 0.12186526], [0.36133313, 0.40656236]],
                     [0.03309569, 0.03486413])
# the same loop, ModelAverage(0.5, min 1, max 10) on float64 parameters, after 7 steps (paddle
# rounds the average through float32), and ModelAverage(0.3, min 3, max 3) after 6 steps
PADDLE_F64_7 = ([[-0.03646242, -0.01153503], [0.18069626, 0.17136969], [0.41560271, 0.47253653]],
                [0.09954872, -0.02939781])
PADDLE_MIN3_6 = ([[-0.03639648, -0.01097917], [0.18261071, 0.17615101], [0.41760552, 0.47714731]],
                 [0.11727756, -0.04956316])


def _params(dtype="float32"):
    w = pycoll.create_parameter([3, 2], dtype, default_initializer=pycoll.nn.initializer.Assign(
        np.arange(6.0).reshape(3, 2) / 10))
    b = pycoll.create_parameter([2], dtype, default_initializer=pycoll.nn.initializer.Assign(np.array([0.5, -0.5])))
    return w, b


def _train(average, steps, dtype="float32", check=None):
    """SGD(0.1) on mean((x @ w + b)^2) * step, ModelAverage stepping after it; ``check(step, w, b)``
    runs inside apply() after every step."""
    w, b = _params(dtype)
    sgd = pycoll.optimizer.SGD(0.1, parameters=[w, b])
    rate, low, high = average
    model_average = ModelAverage(rate, [w, b], min_average_window=low, max_average_window=high)
    x = pycoll.to_tensor(np.cos(np.arange(12.0)).reshape(4, 3).astype(dtype))
    for step in range(1, steps + 1):
        (((x @ w + b) ** 2).mean() * step).backward()
        sgd.step()
        model_average.step()
        sgd.clear_grad()
        if check is not None:
            with model_average.apply():
                check(step, w, b)
    return w, b, model_average


def test_averages_after_each_step_equal_paddle():
    seen = []

    def check(step, w, b):
        if step in PADDLE_AVERAGES:
            np.testing.assert_allclose(w.numpy(), PADDLE_AVERAGES[step][0], atol=2e-7)
            np.testing.assert_allclose(b.numpy(), PADDLE_AVERAGES[step][1], atol=2e-7)
            seen.append(step)

    w, b, model_average = _train((0.15, 2, 4), 12, check=check)
    assert seen == sorted(PADDLE_AVERAGES)
    # restored on leaving apply()
    np.testing.assert_allclose(w.numpy(), PADDLE_TRAINED_12[0], atol=2e-7)
    np.testing.assert_allclose(b.numpy(), PADDLE_TRAINED_12[1], atol=2e-7)
    state = model_average.state_dict()
    counters = {name: int(state[f"{w.name}_{name}_0"].numpy()[0])
                for name in ("num_accumulates", "old_num_accumulates", "num_updates")}
    assert counters == {"num_accumulates": 0, "old_num_accumulates": 2, "num_updates": 12}  # paddle's
    assert state[f"{w.name}_num_updates_0"].dtype == pycoll.int64

    with model_average.apply(need_restore=False):
        pass
    np.testing.assert_allclose(w.numpy(), PADDLE_AVERAGES[12][0], atol=2e-7)  # kept until restore()
    model_average.restore()
    np.testing.assert_allclose(w.numpy(), PADDLE_TRAINED_12[0], atol=2e-7)


@pytest.mark.parametrize("average, steps, dtype, want", [((0.5, 1, 10), 7, "float64", PADDLE_F64_7),
                                                         ((0.3, 3, 3), 6, "float32", PADDLE_MIN3_6)])
def test_other_windows_equal_paddle(average, steps, dtype, want):
    w, b, model_average = _train(average, steps, dtype)
    with model_average.apply():
        assert w.dtype == getattr(pycoll, dtype)
        np.testing.assert_allclose(w.numpy(), want[0], atol=2e-7)
        np.testing.assert_allclose(b.numpy(), want[1], atol=2e-7)


def test_sum_1_moves_into_sum_2_every_16384_updates():
    p = pycoll.create_parameter([1], "float64")
    p.grad = np.ones(1)
    model_average = ModelAverage(1.0, parameters=[p], min_average_window=20000, max_average_window=20000)
    for value in range(1, 16391):
        p.array[...] = value
        model_average.step()
    state = model_average.state_dict()
    assert state[f"{p.name}_sum_2_0"].numpy()[0] == 16384 * 16385 / 2
    assert state[f"{p.name}_sum_1_0"].numpy()[0] == sum(range(16385, 16391))
    with model_average.apply():
        assert p.numpy()[0] == 16390 * 16391 / 2 / 16390


def test_minimize_steps_and_parameters_without_gradients_stay():
    w, b = _params()
    model_average = ModelAverage(0.15, parameters=[w, b], min_average_window=2, max_average_window=4)
    with pytest.raises(RuntimeError, match="nothing accumulated yet"):
        with model_average.apply():
            pass
    (w.sum() * 2).backward()  # b gets no gradient
    assert model_average.minimize(w.sum()) is None
    w.array[...] = 7.0
    with model_average.apply():
        np.testing.assert_allclose(w.numpy(), np.arange(6.0).reshape(3, 2) / 10, rtol=1e-6)
        np.testing.assert_array_equal(b.numpy(), [0.5, -0.5])
    np.testing.assert_array_equal(w.numpy(), 7.0)


def test_argument_errors():
    w, _ = _params()
    with pytest.raises(ValueError, match="min_average_window .* must not exceed max_average_window"):
        ModelAverage(0.1, [w], min_average_window=5, max_average_window=4)
    with pytest.raises(ValueError, match="average_window_rate must be a non-negative number"):
        ModelAverage("0.1", [w])
    with pytest.raises(ValueError, match="max_average_window must be a non-negative int"):
        ModelAverage(0.1, [w], max_average_window=2.5)
    with pytest.raises(ValueError, match="parameters must be given"):
        ModelAverage(0.1)


def test_a_float16_sum_past_its_range_is_inf_without_warnings():
    w = pycoll.create_parameter([2], "float16", default_initializer=pycoll.nn.initializer.Assign([60000., 1.]))
    model_average = ModelAverage(0.5, [w], min_average_window=10, max_average_window=10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):  # 60000 + 60000 overflows float16's 65504
            w.astype("float32").sum().backward()
            model_average.step()
            w.clear_gradient()
        with model_average.apply():
            averaged = w.numpy().tolist()
    assert averaged == [np.inf, 1.0]  # the average in the parameter's dtype (see ModelAverage's docstring)
    np.testing.assert_array_equal(w.numpy(), [60000., 1.])
