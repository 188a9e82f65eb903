"""Learning-rate schedulers against paddle 3.3.1's values.

PADDLE_VALUES holds, for each schedule, its value right after construction and after each of 20
``step()`` calls, as paddle 3.3.1 (CPU) printed them: ``s = <the lambda's scheduler>; vals = [s()];
for _ in range(20): s.step(); vals.append(s())`` run with ``paddle.optimizer.lr`` in place of
``pycoll.optimizer.lr``. pycoll computes each formula as paddle does, so they must be equal exactly.
"""

import numpy as np
import pytest

import pycoll
from pycoll.optimizer import lr

PADDLE_VALUES = {
    'StepDecay': (lambda: lr.StepDecay(0.5, step_size=3, gamma=0.5), [
        0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.125, 0.125, 0.125, 0.0625, 0.0625, 0.0625, 0.03125, 0.03125,
        0.03125, 0.015625, 0.015625, 0.015625, 0.0078125, 0.0078125, 0.0078125]),
    'MultiStepDecay': (lambda: lr.MultiStepDecay(0.5, milestones=[2, 5, 9], gamma=0.3), [
        0.5, 0.5, 0.15, 0.15, 0.15, 0.045, 0.045, 0.045, 0.045, 0.013499999999999998, 0.013499999999999998,
        0.013499999999999998, 0.013499999999999998, 0.013499999999999998, 0.013499999999999998,
        0.013499999999999998, 0.013499999999999998, 0.013499999999999998, 0.013499999999999998,
        0.013499999999999998, 0.013499999999999998]),
    'ExponentialDecay': (lambda: lr.ExponentialDecay(0.5, gamma=0.9), [
        0.5, 0.45, 0.405, 0.36450000000000005, 0.32805, 0.29524500000000004, 0.2657205, 0.23914845000000004,
        0.21523360500000005, 0.19371024450000005, 0.17433922005000005, 0.15690529804500003,
        0.14121476824050005, 0.12709329141645004, 0.11438396227480505, 0.10294556604732454,
        0.09265100944259208, 0.08338590849833288, 0.07504731764849959, 0.06754258588364964,
        0.060788327295284675]),
    'NaturalExpDecay': (lambda: lr.NaturalExpDecay(0.5, gamma=0.1), [
        0.5, 0.45241870901797976, 0.4093653765389909, 0.37040911034085894, 0.33516002301781966,
        0.3032653298563167, 0.2744058180470132, 0.24829265189570474, 0.22466448205861078,
        0.20328482987029955, 0.18393972058572117, 0.16643554184903978, 0.150597105956101, 0.1362658965170063,
        0.12329848197080322, 0.11156508007421491, 0.10094825899732769, 0.0913417620263673,
        0.08264944411079327, 0.07478430961131752, 0.06766764161830635]),
    'InverseTimeDecay': (lambda: lr.InverseTimeDecay(0.5, gamma=0.1), [
        0.5, 0.45454545454545453, 0.4166666666666667, 0.3846153846153846, 0.35714285714285715,
        0.3333333333333333, 0.3125, 0.2941176470588235, 0.2777777777777778, 0.2631578947368421, 0.25,
        0.23809523809523808, 0.22727272727272727, 0.2173913043478261, 0.20833333333333331, 0.2,
        0.1923076923076923, 0.18518518518518517, 0.17857142857142858, 0.17241379310344826,
        0.16666666666666666]),
    'PolynomialDecay': (lambda: lr.PolynomialDecay(0.5, decay_steps=7, end_lr=0.01, power=2.0), [
        0.5, 0.37000000000000005, 0.26, 0.16999999999999998, 0.1, 0.049999999999999996, 0.020000000000000004,
        0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01]),
    'PolynomialDecay_cycle': (lambda: lr.PolynomialDecay(0.5, decay_steps=7, end_lr=0.01, power=1.5, cycle=True), [
        0.5, 0.39884444190447166, 0.3058039891549808, 0.22166010488516724, 0.1474772708486752,
        0.08483314773547881, 0.03645751311064592, 0.01, 0.1474772708486752, 0.11458250331675943,
        0.08483314773547881, 0.05860555523805896, 0.03645751311064592, 0.01935414346693485, 0.01,
        0.08483314773547881, 0.06692750425533112, 0.050734006177385244, 0.03645751311064592,
        0.024401645996461913, 0.015091750772173163]),
    'PiecewiseDecay': (lambda: lr.PiecewiseDecay(boundaries=[3, 8], values=[0.1, 0.05, 0.01]), [
        0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05, 0.05, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01, 0.01,
        0.01, 0.01, 0.01, 0.01]),
    'CosineAnnealingDecay': (lambda: lr.CosineAnnealingDecay(0.5, T_max=6, eta_min=0.01), [
        0.5, 0.4671762239271875, 0.3775, 0.255, 0.13250000000000006, 0.04282377607281252, 0.01,
        0.04282377607281252, 0.1325, 0.25500000000000017, 0.37750000000000034, 0.46717622392718783,
        0.5000000000000004, 0.4671762239271879, 0.37750000000000045, 0.2550000000000005, 0.1325000000000003,
        0.04282377607281252, 0.01, 0.04282377607281252, 0.13250000000000048]),
    'LinearWarmup_float': (lambda: lr.LinearWarmup(0.5, warmup_steps=5, start_lr=0.0, end_lr=0.5), [
        0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5,
        0.5]),
    'LinearWarmup_sched': (lambda: lr.LinearWarmup(lr.CosineAnnealingDecay(0.5, T_max=6), warmup_steps=4,
                                                   start_lr=0.01, end_lr=0.5), [
        0.01, 0.1325, 0.255, 0.3775, 0.5, 0.4665063509461097, 0.375, 0.25, 0.12500000000000006,
        0.03349364905389032, 0.0, 0.033493649053890295, 0.12499999999999989, 0.24999999999999994, 0.375,
        0.4665063509461096, 0.5, 0.46650635094610965, 0.3750000000000001, 0.2500000000000003,
        0.1250000000000002]),
    'LambdaDecay': (lambda: lr.LambdaDecay(0.5, lr_lambda=lambda e: 0.95 ** e), [
        0.5, 0.475, 0.45125, 0.42868749999999994, 0.40725312499999994, 0.3868904687499999,
        0.3675459453124999, 0.34916864804687486, 0.3317102156445311, 0.31512470486230454,
        0.29936846961918934, 0.28440004613822983, 0.27018004383131833, 0.2566710416397524,
        0.24383748955776477, 0.23164561507987652, 0.22006333432588268, 0.20906016760958854,
        0.1986071592291091, 0.18867680126765363, 0.17924296120427094]),
    'MultiplicativeDecay': (lambda: lr.MultiplicativeDecay(0.5, lr_lambda=lambda e: 0.9 if e % 2 else 0.99), [
        0.5, 0.45, 0.4455, 0.40095000000000003, 0.39694050000000003, 0.35724645000000005,
        0.35367398550000007, 0.3183065869500001, 0.31512352108050007, 0.2836111689724501,
        0.28077505728272556, 0.252697551554453, 0.25017057603890847, 0.22515351843501763,
        0.22290198325066746, 0.20061178492560072, 0.19860566707634472, 0.17874510036871025,
        0.17695764936502315, 0.15926188442852082, 0.1576692655842356]),
    'NoamDecay': (lambda: lr.NoamDecay(d_model=64, warmup_steps=5, learning_rate=2.0), [
        0.0, 0.022360679774997897, 0.044721359549995794, 0.0670820393249937, 0.08944271909999159,
        0.11180339887498948, 0.10206207261596575, 0.09449111825230681, 0.08838834764831845,
        0.08333333333333333, 0.07905694150420949, 0.07537783614444091, 0.07216878364870322,
        0.06933752452815364, 0.0668153104781061, 0.06454972243679029, 0.0625, 0.06063390625908324,
        0.05892556509887896, 0.05735393346764044, 0.05590169943749474]),
    'OneCycleLR': (lambda: lr.OneCycleLR(max_learning_rate=1.0, total_steps=20, phase_pct=0.3), [
        0.040000000000000036, 0.1316718427000253, 0.3716718427000253, 0.6683281572999747, 0.9083281572999747,
        1.0, 0.9874652096953027, 0.9504893855078144, 0.8909266496598915, 0.8117637264392739,
        0.7169701753718232, 0.6112993409314593, 0.50005, 0.38880065906854067, 0.2831298246281768,
        0.1883362735607262, 0.1091733503401085, 0.04961061449218561, 0.012634790304697281, 0.0001,
        0.012634790304697281]),
    'OneCycleLR_three_linear': (lambda: lr.OneCycleLR(max_learning_rate=0.8, total_steps=20, divide_factor=10.0,
                                                 end_learning_rate=0.001, phase_pct=0.25, anneal_strategy='linear',
                                                 three_phase=True), [
        0.08, 0.26, 0.44000000000000006, 0.62, 0.8, 0.62, 0.44, 0.26, 0.07999999999999996,
        0.07281818181818182, 0.06563636363636363, 0.058454545454545453, 0.051272727272727275,
        0.04409090909090909, 0.03690909090909091, 0.029727272727272727, 0.022545454545454542,
        0.015363636363636357, 0.008181818181818179, 0.0010000000000000009, -0.006181818181818177]),
    'CyclicLR': (lambda: lr.CyclicLR(0.1, 1.0, step_size_up=3, step_size_down=5), [
        0.1, 0.4, 0.7, 1.0, 0.8200000000000001, 0.64, 0.4600000000000001, 0.28, 0.1, 0.4, 0.7, 1.0,
        0.8200000000000001, 0.64, 0.4600000000000001, 0.28, 0.1, 0.4, 0.7, 1.0, 0.8200000000000001]),
    'CyclicLR_tri2': (lambda: lr.CyclicLR(0.1, 1.0, step_size_up=2, mode='triangular2'), [
        0.1, 0.55, 1.0, 0.55, 0.1, 0.325, 0.55, 0.325, 0.1, 0.21250000000000002, 0.325, 0.21250000000000002,
        0.1, 0.15625, 0.21250000000000002, 0.15625, 0.1, 0.12812500000000002, 0.15625, 0.12812500000000002,
        0.1]),
    'CyclicLR_exp': (lambda: lr.CyclicLR(0.1, 1.0, step_size_up=2, mode='exp_range', exp_gamma=0.9), [
        0.1, 0.505, 0.8290000000000001, 0.42805000000000004, 0.1, 0.3657205, 0.5782969000000001,
        0.3152336050000001, 0.1, 0.27433922005000005, 0.41381059609000015, 0.24121476824050003, 0.1,
        0.21438396227480505, 0.30589113209464913, 0.19265100944259209, 0.1, 0.17504731764849962,
        0.23508517176729926, 0.1607883272952847, 0.1]),
}


def _run(make, steps=20):
    s = make()
    values = [s()]
    for _ in range(steps):
        s.step()
        values.append(s())
    return s, values


@pytest.mark.parametrize("name", sorted(PADDLE_VALUES))
def test_values_equal_paddles(name):
    make, expected = PADDLE_VALUES[name]
    s, got = _run(make)
    assert got == expected
    assert s.last_epoch == 20 and s.last_lr == expected[-1]


def test_reachable_as_paddle_names_them():
    assert pycoll.optimizer.lr.StepDecay is lr.StepDecay
    assert issubclass(lr.ReduceOnPlateau, lr.LRScheduler)
    assert set(lr.__all__) == {"LRScheduler", "NoamDecay", "PiecewiseDecay", "NaturalExpDecay", "InverseTimeDecay",
                               "PolynomialDecay", "LinearWarmup", "ExponentialDecay", "MultiStepDecay", "StepDecay",
                               "LambdaDecay", "ReduceOnPlateau", "CosineAnnealingDecay", "MultiplicativeDecay",
                               "OneCycleLR", "CyclicLR", "LinearLR", "CosineAnnealingWarmRestarts"}


def test_closed_forms():
    s, got = _run(lambda: lr.StepDecay(0.5, step_size=3, gamma=0.5))
    assert got == [0.5 * 0.5 ** (e // 3) for e in range(21)]
    s, got = _run(lambda: lr.InverseTimeDecay(0.5, gamma=0.1))
    assert got == [0.5 / (1 + 0.1 * e) for e in range(21)]
    s, got = _run(lambda: lr.LambdaDecay(2.0, lambda e: 1 / (e + 1)))
    assert got == [2.0 * (1 / (e + 1)) for e in range(21)]
    assert s.base_lr == 2.0


def test_step_to_an_epoch():
    # paddle 3.3.1: StepDecay(0.5, 3, 0.5).step(13) -> 0.03125; CosineAnnealingDecay(0.5, T_max=6,
    # eta_min=0.01).step(13) -> 0.46717622392718744 (its closed form, not the recursion)
    s = lr.StepDecay(0.5, step_size=3, gamma=0.5)
    s.step(13)
    assert (s(), s.last_epoch) == (0.03125, 13)
    s.step(pycoll.to_tensor(13))  # a Tensor epoch, as paddle takes it
    assert (s(), s.last_epoch) == (0.03125, 13)
    c = lr.CosineAnnealingDecay(0.5, T_max=6, eta_min=0.01)
    c.step(13)
    assert (c(), c.last_epoch) == (0.46717622392718744, 13)
    assert c() == pytest.approx(0.01 + 0.49 * (1 + np.cos(np.pi * 13 / 6)) / 2, rel=1e-15)
    # paddle 3.3.1 takes a fraction of an epoch: CosineAnnealingDecay(1.0, 10).step(1.5), then
    # step(2.25) -> 0.880203 (printed to 6 places); StepDecay(1.0, 2) -> 0.1
    c = lr.CosineAnnealingDecay(1.0, T_max=10)
    c.step(1.5)
    c.step(2.25)
    assert round(c(), 6) == 0.880203
    s.step(1.5)
    assert (s(), s.last_epoch) == (0.5, 1.5)
    with pytest.raises(TypeError, match="epoch"):
        s.step("1")


def test_last_epoch_restarts_a_schedule():
    s = lr.ExponentialDecay(0.5, gamma=0.9, last_epoch=4)  # construction steps to 5
    assert s.last_epoch == 5 and s() == PADDLE_VALUES["ExponentialDecay"][1][5]


def test_reduce_on_plateau_matches_paddle():
    # paddle 3.3.1 gave these learning rates after each step(metric)
    p = lr.ReduceOnPlateau(1.0, factor=0.5, patience=2, cooldown=1, threshold=0.1)
    assert p.last_epoch == 0 and p() == 1.0  # construction takes no step
    got = []
    for m in [1.0, 0.95, 0.96, 0.97, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.46, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3]:
        p.step(m)
        got.append(p())
    assert got == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25, 0.25, 0.25, 0.125, 0.125,
                   0.125, 0.125, 0.0625, 0.0625]
    assert p.state_dict() == {'cooldown_counter': 0, 'best': 0.3, 'num_bad_epochs': 0, 'last_epoch': 20,
                              'last_lr': 0.0625}
    q = lr.ReduceOnPlateau(1.0, mode='max', factor=0.5, patience=1, threshold=0.05, threshold_mode='abs', min_lr=0.2)
    got = []
    for m in [1, 2, 2.04, 2.03, 2.1, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0]:
        q.step(m)
        got.append(q())
    assert got == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.2, 0.2, 0.2, 0.2]


def test_reduce_on_plateau_metrics():
    p = lr.ReduceOnPlateau(1.0)
    p.step(pycoll.to_tensor([0.1], dtype="float32"))
    assert p.best == 0.10000000149011612  # paddle's state_dict value for a float32 Tensor metric
    p.step(np.array([0.05]))
    assert p.best == 0.05
    with pytest.raises(ValueError, match="one number"):
        p.step(np.array([1.0, 2.0]))
    with pytest.raises(TypeError, match="metrics"):
        p.step("0.1")
    with pytest.raises(ValueError, match="mode"):
        lr.ReduceOnPlateau(1.0, mode="lowest")
    with pytest.raises(ValueError, match="factor"):
        lr.ReduceOnPlateau(1.0, factor=1.0)


def test_state_dict_and_resume():
    make, expected = PADDLE_VALUES["LinearWarmup_sched"]
    s, _ = _run(make)
    # paddle 3.3.1's state_dict after 20 steps
    assert s.state_dict() == {'last_epoch': 20, 'last_lr': 0.1250000000000002,
                              'LinearWarmup_LR': {'last_epoch': 16, 'last_lr': 0.1250000000000002}}
    for name in ("LinearWarmup_sched", "CosineAnnealingDecay", "OneCycleLR", "MultiplicativeDecay"):
        make, expected = PADDLE_VALUES[name]
        first, _ = _run(make, steps=7)
        resumed = make()
        resumed.set_state_dict(first.state_dict())
        got = [resumed()]
        for _ in range(13):
            resumed.step()
            got.append(resumed())
        assert got == expected[7:], name


def test_set_state_dict_refuses_an_incomplete_state():
    s = lr.StepDecay(0.5, 2)
    with pytest.raises(ValueError, match="last_lr"):
        s.set_state_dict({"last_epoch": 1})
    with pytest.raises(TypeError, match="dict"):
        s.set_state_dict([1])
    with pytest.raises(ValueError, match="LinearWarmup_LR"):
        lr.LinearWarmup(s, 2, 0.0, 0.5).set_state_dict({"last_epoch": 1, "last_lr": 0.1})
    with pytest.warns(UserWarning, match="unused values"):
        s.set_state_dict({"last_epoch": 3, "last_lr": 0.05, "extra": 1})
    assert (s.last_epoch, s()) == (3, 0.05)


def test_verbose_prints_paddles_line(capsys):
    s = lr.StepDecay(0.5, step_size=1, gamma=0.5, verbose=True)
    s.step()
    p = lr.ReduceOnPlateau(1.0, patience=0, verbose=True)
    p.step(1.0)
    p.step(2.0)
    assert capsys.readouterr().out == ("Epoch 0: StepDecay set learning rate to 0.5.\n"
                                       "Epoch 1: StepDecay set learning rate to 0.25.\n"
                                       "Epoch 2: ReduceOnPlateau set learning rate to 0.1.\n")


def test_a_subclass_in_paddles_protocol():
    class Halving(lr.LRScheduler):
        def get_lr(self):
            return self.base_lr * 0.5 ** self.last_epoch

    s = Halving(1.0)
    s.step()
    s.step()
    assert s() == 0.25 and s.state_dict() == {"last_epoch": 2, "last_lr": 0.25}
    with pytest.raises(NotImplementedError, match="get_lr"):
        lr.LRScheduler(0.1)


@pytest.mark.parametrize("make, error, match", [
    (lambda: lr.StepDecay(0.5, 2.0), TypeError, "step_size"),
    (lambda: lr.StepDecay(0.5, 0), ValueError, "step_size"),
    (lambda: lr.StepDecay(0.5, 2, gamma=1.0), ValueError, "gamma"),
    (lambda: lr.StepDecay(-0.5, 2), ValueError, "learning_rate"),
    (lambda: lr.StepDecay("0.5", 2), TypeError, "learning_rate"),
    (lambda: lr.MultiStepDecay(0.5, milestones=3), TypeError, "milestones"),
    (lambda: lr.MultiStepDecay(0.5, milestones=[3, 2]), ValueError, "milestones"),
    (lambda: lr.ExponentialDecay(0.5, gamma=1.5), ValueError, "gamma"),
    (lambda: lr.NaturalExpDecay(0.5, gamma=0.0), ValueError, "gamma"),
    (lambda: lr.PolynomialDecay(0.5, decay_steps=0), ValueError, "decay_steps"),
    (lambda: lr.PolynomialDecay(0.5, decay_steps=3, power=0), ValueError, "power"),
    (lambda: lr.PiecewiseDecay([], [0.1]), ValueError, "boundaries"),
    (lambda: lr.PiecewiseDecay([2], [0.1]), ValueError, "values"),
    (lambda: lr.CosineAnnealingDecay(0.5, T_max=2.5), TypeError, "T_max"),
    (lambda: lr.LinearWarmup("a", 2, 0.0, 0.5), TypeError, "learning_rate"),
    (lambda: lr.LinearWarmup(0.5, 2, 0.5, 0.1), ValueError, "end_lr"),
    (lambda: lr.LambdaDecay(0.5, lr_lambda=0.9), TypeError, "lr_lambda"),
    (lambda: lr.MultiplicativeDecay(0.5, lr_lambda=None), TypeError, "lr_lambda"),
    (lambda: lr.NoamDecay(d_model=0, warmup_steps=5), ValueError, "d_model"),
    (lambda: lr.OneCycleLR(1.0, total_steps=10, phase_pct=1), TypeError, "phase_pct"),
    (lambda: lr.OneCycleLR(1.0, total_steps=10, anneal_strategy="exp"), ValueError, "anneal_strategy"),
    (lambda: lr.OneCycleLR(1.0, total_steps=10, phase_pct=0.5, three_phase=True), ValueError, "phase_pct"),
    (lambda: lr.CyclicLR(0.1, 1.0, step_size_up=0), ValueError, "step_size_up"),
    (lambda: lr.CyclicLR(0.1, 1.0, step_size_up=2, mode="sine"), ValueError, "mode"),
    (lambda: lr.CyclicLR(0.1, 1.0, step_size_up=2, exp_gamma=1), TypeError, "exp_gamma"),
])
def test_bad_arguments_are_refused_by_name(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_one_cycle_refuses_to_step_past_its_end():
    s = lr.OneCycleLR(1.0, total_steps=3)
    for _ in range(3):
        s.step()
    with pytest.raises(ValueError, match="total_steps is 3"):
        s.step()


def test_cyclic_custom_scale_fn():
    s, got = _run(lambda: lr.CyclicLR(0.0, 1.0, step_size_up=1, scale_fn=lambda x: 0.5 ** x, scale_mode="iterations"),
                  steps=4)
    assert got == [0.0, 0.5, 0.0, 0.125, 0.0]  # paddle 3.3.1's values


def test_the_older_function_forms_make_the_schedulers_paddle_makes():
    # paddle 3.3.1 in dynamic mode (measured): the scheduler class and its first value
    L = pycoll.optimizer.lr
    for made, cls, first in [(L.cosine_decay(0.1, 10000, 120), L.CosineAnnealingDecay, 0.1),
                             (L.polynomial_decay(0.1, 100, 0.001), L.PolynomialDecay, 0.1),
                             (L.noam_decay(1 / (4000 * 0.1 ** 2), 4000, 0.1), L.NoamDecay, 0.0),
                             (L.piecewise_decay([10, 20], [1.0, 0.5, 0.1]), L.PiecewiseDecay, 1.0),
                             (L.exponential_decay(0.1, 100, 0.5), L.ExponentialDecay, 0.1),
                             (L.natural_exp_decay(0.1, 100, 0.5), L.NaturalExpDecay, 0.1),
                             (L.inverse_time_decay(0.1, 100, 0.5), L.InverseTimeDecay, 0.1),
                             (L.linear_lr_warmup(0.1, 10, 0.0, 0.1), L.LinearWarmup, 0.0)]:
        assert type(made) is cls and made() == pytest.approx(first), cls
    assert "cosine_decay" not in L.__all__  # outside paddle's __all__ too
