"""LinearLR and CosineAnnealingWarmRestarts against paddle 3.3.1's values.

PADDLE_VALUES holds, for each schedule, its value right after construction and after each of 30
``step()`` calls, as paddle 3.3.1 (CPU) printed them: ``s = <the lambda's scheduler>; vals = [s()];
for _ in range(30): s.step(); vals.append(s())`` with ``paddle.optimizer.lr`` in place of
``pycoll.optimizer.lr``. pycoll computes each formula as paddle does, so they must be equal exactly.
"""
import pytest

import pycoll
from pycoll.optimizer import lr
from test_lr import _run

PADDLE_VALUES = {
    'LinearLR': (lambda: lr.LinearLR(0.5, total_steps=10, start_factor=0.25, end_factor=0.9), [
        0.125, 0.1575, 0.19, 0.2225, 0.255, 0.2875, 0.32, 0.3525, 0.385, 0.41750000000000004,
        0.45000000000000007, 0.45000000000000007, 0.45000000000000007, 0.45000000000000007, 0.45000000000000007,
        0.45000000000000007, 0.45000000000000007, 0.45000000000000007, 0.45000000000000007, 0.45000000000000007,
        0.45000000000000007, 0.45000000000000007, 0.45000000000000007, 0.45000000000000007, 0.45000000000000007,
        0.45000000000000007, 0.45000000000000007, 0.45000000000000007, 0.45000000000000007, 0.45000000000000007,
        0.45000000000000007]),
    'LinearLR_down': (lambda: lr.LinearLR(0.5, total_steps=8, start_factor=1.0, end_factor=0.1), [
        0.5, 0.44375, 0.38749999999999996, 0.33125, 0.275, 0.21875, 0.1625, 0.10624999999999998,
        0.04999999999999999, 0.04999999999999999, 0.04999999999999999, 0.04999999999999999, 0.04999999999999999,
        0.04999999999999999, 0.04999999999999999, 0.04999999999999999, 0.04999999999999999, 0.04999999999999999,
        0.04999999999999999, 0.04999999999999999, 0.04999999999999999, 0.04999999999999999, 0.04999999999999999,
        0.04999999999999999, 0.04999999999999999, 0.04999999999999999, 0.04999999999999999, 0.04999999999999999,
        0.04999999999999999, 0.04999999999999999, 0.04999999999999999]),
    'LinearLR_default': (lambda: lr.LinearLR(0.5, total_steps=5), [
        0.16666666666666666, 0.23333333333333334, 0.30000000000000004, 0.36666666666666675, 0.43333333333333346,
        0.5000000000000001, 0.5000000000000001, 0.5000000000000001, 0.5000000000000001, 0.5000000000000001,
        0.5000000000000001, 0.5000000000000001, 0.5000000000000001, 0.5000000000000001, 0.5000000000000001,
        0.5000000000000001, 0.5000000000000001, 0.5000000000000001, 0.5000000000000001, 0.5000000000000001,
        0.5000000000000001, 0.5000000000000001, 0.5000000000000001, 0.5000000000000001, 0.5000000000000001,
        0.5000000000000001, 0.5000000000000001, 0.5000000000000001, 0.5000000000000001, 0.5000000000000001,
        0.5000000000000001]),
    'WarmRestarts_mult2': (lambda: lr.CosineAnnealingWarmRestarts(0.5, T_0=3, T_mult=2, eta_min=0.01), [
        0.5, 0.3775, 0.13250000000000006, 0.5, 0.4671762239271875, 0.3775, 0.255, 0.13250000000000006,
        0.04282377607281252, 0.5, 0.4916518274408217, 0.4671762239271875, 0.4282411613907041, 0.3775,
        0.3184106660501176, 0.255, 0.19158933394988245, 0.13250000000000006, 0.08175883860929586,
        0.04282377607281252, 0.01834817255917829, 0.5, 0.49790399103658356, 0.4916518274408217,
        0.48135048546526527, 0.4671762239271875, 0.4493715683713526, 0.4282411613907041, 0.40414655010713657,
        0.3775, 0.348757440929447]),
    'WarmRestarts': (lambda: lr.CosineAnnealingWarmRestarts(0.5, T_0=4), [
        0.5, 0.42677669529663687, 0.25, 0.07322330470336313, 0.5, 0.42677669529663687, 0.25,
        0.07322330470336313, 0.5, 0.42677669529663687, 0.25, 0.07322330470336313, 0.5, 0.42677669529663687,
        0.25, 0.07322330470336313, 0.5, 0.42677669529663687, 0.25, 0.07322330470336313, 0.5,
        0.42677669529663687, 0.25, 0.07322330470336313, 0.5, 0.42677669529663687, 0.25, 0.07322330470336313,
        0.5, 0.42677669529663687, 0.25]),
    'WarmRestarts_mult3': (lambda: lr.CosineAnnealingWarmRestarts(0.2, T_0=1, T_mult=3, eta_min=0.05), [
        0.2, 0.2, 0.16250000000000003, 0.08750000000000002, 0.2, 0.19547694655894315, 0.18245333323392338,
        0.16250000000000003, 0.1380236133250198, 0.11197638667498025, 0.08750000000000002, 0.06754666676607667,
        0.05452305344105688, 0.2, 0.19949287683064576, 0.19797836529348684, 0.19547694655894315,
        0.19202244802425594, 0.18766158585597026, 0.18245333323392338, 0.17646812284015506, 0.169786894377709,
        0.16250000000000003, 0.15470598245293676, 0.14651024245333177, 0.1380236133250198, 0.12936086216828568,
        0.12063913783171433, 0.11197638667498025, 0.10348975754666825, 0.09529401754706324]),
}


@pytest.mark.parametrize("name", sorted(PADDLE_VALUES))
def test_values_equal_paddles(name):
    make, expected = PADDLE_VALUES[name]
    s, got = _run(make, 30)
    assert got == expected and s.last_epoch == 30


@pytest.mark.parametrize("name", sorted(PADDLE_VALUES))
def test_a_state_dict_round_trip_resumes_the_schedule(name, tmp_path):
    # saved after 7 steps (through a file) and loaded into a fresh scheduler, the schedule goes on
    # with paddle's uninterrupted values. (paddle's own CosineAnnealingWarmRestarts does not: its
    # state_dict holds last_epoch and last_lr only, and a loaded one restarts its cycle.)
    make, expected = PADDLE_VALUES[name]
    s, _ = _run(make, 7)
    state = s.state_dict()
    assert set(state) == {"last_epoch", "last_lr"}  # paddle's keys
    pycoll.save(state, tmp_path / "sched.pdparams")
    resumed = make()
    resumed.set_state_dict(pycoll.load(tmp_path / "sched.pdparams"))
    assert resumed() == expected[7]
    for i in range(8, 31):
        resumed.step()
        assert resumed() == expected[i], f"step {i}"


def test_warm_restarts_jumps_to_an_epoch_as_paddle():
    # paddle 3.3.1: step(epoch) for these epochs gives (last_epoch, T_cur, T_i, lr)
    s = lr.CosineAnnealingWarmRestarts(0.5, T_0=3, T_mult=2, eta_min=0.01)
    expected = [(0, (0, 0, 3, 0.5)), (2, (2, 2, 3, 0.13250000000000006)), (3, (3, 0.0, 6, 0.5)),
                (5, (5, 2.0, 6, 0.3775)), (9, (9, 0.0, 12, 0.5)), (10, (10, 1.0, 12, 0.4916518274408217)),
                (21, (21, 0.0, 24, 0.5)), (2.5, (2, 2.5, 3, 0.04282377607281252)),
                (4.5, (4, 1.5, 6, 0.4282411613907041)), (8, (8, 5.0, 6, 0.04282377607281252))]
    for epoch, want in expected:
        s.step(epoch)
        assert (s.last_epoch, s.T_cur, s.T_i, s()) == want, epoch
    with pytest.raises(ValueError, match="epoch must be >= 0"):
        s.step(-1)


def test_a_given_last_epoch_starts_where_paddle_starts():
    # paddle 3.3.1: last_epoch=5 (T_0=3) ends up at epoch 6 with T_cur 3, lr 0.0; LinearLR with
    # last_epoch=2 multiplies the base rate: 0.625
    s = lr.CosineAnnealingWarmRestarts(0.5, T_0=3, last_epoch=5)
    assert (s.last_epoch, s.T_cur, s()) == (6, 3, 0.0)
    s = lr.LinearLR(0.5, total_steps=4, last_epoch=2)
    assert (s.last_epoch, s()) == (3, 0.625)


@pytest.mark.parametrize("make, error", [
    (lambda: lr.LinearLR(0.5, total_steps=3, start_factor=0), ValueError),
    (lambda: lr.LinearLR(0.5, total_steps=3, start_factor=1.5), ValueError),
    (lambda: lr.LinearLR(0.5, total_steps=3, end_factor=-0.1), ValueError),
    (lambda: lr.LinearLR(0.5, total_steps=0), ValueError),
    (lambda: lr.CosineAnnealingWarmRestarts(0.5, T_0=0), ValueError),
    (lambda: lr.CosineAnnealingWarmRestarts(0.5, T_0=2.0), TypeError),
    (lambda: lr.CosineAnnealingWarmRestarts(0.5, T_0=3, T_mult=0), ValueError),
    (lambda: lr.CosineAnnealingWarmRestarts(0.5, T_0=3, T_mult=1.5), TypeError),
])
def test_bad_arguments_are_refused(make, error):
    # paddle 3.3.1 refuses each of these (with ValueError, also for the wrong types)
    with pytest.raises(error):
        make()


def test_drives_an_optimizer():
    w = pycoll.create_parameter([2], "float32")
    sched = lr.CosineAnnealingWarmRestarts(0.5, T_0=4)
    opt = pycoll.optimizer.SGD(learning_rate=sched, parameters=[w])
    assert opt.get_lr() == 0.5
    sched.step()
    assert opt.get_lr() == 0.42677669529663687
    assert opt.state_dict()["LR_Scheduler"] == {"last_epoch": 1, "last_lr": 0.42677669529663687}
