"""Adam/AdamW lazy_mode on Embedding(sparse=True) weights (only the rows the sparse gradient
touched move), and paddle's learning-rate range (a negative rate ascends the gradient)."""
import math

import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
import pycoll.optimizer as opt


def lazy_reference(w0, steps, lr=0.1, b1=0.9, b2=0.999, eps=1e-8, coeff=0.0):
    """NumPy by hand: each step's touched rows get Adam's update (AdamW's decay first when coeff),
    with the beta powers of the global step t; the other rows and their moments keep their values."""
    w, m, v = w0.astype(np.float64), np.zeros_like(w0, np.float64), np.zeros_like(w0, np.float64)
    for t, (rows, grad) in enumerate(steps, start=1):
        r = np.unique(rows)
        w[r] *= 1 - lr * coeff
        m[r] = b1 * m[r] + (1 - b1) * grad[r]
        v[r] = b2 * v[r] + (1 - b2) * grad[r] ** 2
        c = math.sqrt(1 - b2 ** t)
        w[r] -= lr * c / (1 - b1 ** t) * m[r] / (np.sqrt(v[r]) + eps * c)
    return w


def embedding(n, dim, w0):
    emb = nn.Embedding(n, dim, sparse=True)
    emb.weight.set_value(w0.copy())
    return emb


def test_probe_row_not_looked_up_keeps_its_value():
    # the probe's lazy.py: ids [0] then [1]; row 0 stays at its step-1 value 0.9 in step 2, row 1
    # takes step 2's bias correction (paddle's GPU formula: 1 - 0.1*sqrt(1-b2^2)/(1-b1^2)*0.1/sqrt(0.001))
    emb = embedding(3, 2, np.ones((3, 2), np.float32))
    o = opt.Adam(0.1, parameters=emb.parameters(), lazy_mode=True)
    for ids in ([0], [1]):
        emb(pycoll.to_tensor(ids)).sum().backward()
        o.step()
        o.clear_grad()
    row1 = 1 - 0.1 * math.sqrt(1 - 0.999 ** 2) / (1 - 0.9 ** 2) * 0.1 / (math.sqrt(0.001) + 1e-8 * math.sqrt(1 - 0.999 ** 2))
    np.testing.assert_allclose(emb.weight.numpy(), [[0.9, 0.9], [row1, row1], [1, 1]], rtol=1e-6)


@pytest.mark.parametrize("cls, coeff", [(opt.Adam, 0.0), (opt.AdamW, 0.05)])
def test_lazy_five_steps_match_numpy(cls, coeff):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((6, 3)).astype(np.float32)
    emb = embedding(6, 3, w0)
    kwargs = {"weight_decay": coeff} if cls is opt.AdamW else {}
    o = cls(0.1, parameters=emb.parameters(), lazy_mode=True, **kwargs)
    steps = []
    for ids in ([0, 2, 2], [1], [3, 0], [[5, 5], [2, 1]], [4]):
        x = pycoll.to_tensor(np.array(ids, np.int64))
        scale = rng.standard_normal(np.shape(ids) + (3,)).astype(np.float32)
        (emb(x) * pycoll.to_tensor(scale)).sum().backward()
        steps.append((np.array(ids).ravel(), emb.weight.grad.numpy().astype(np.float64)))
        o.step()
        o.clear_grad()
    np.testing.assert_allclose(emb.weight.numpy(), lazy_reference(w0, steps, coeff=coeff), rtol=2e-5, atol=1e-6)


def test_rows_accumulate_over_backwards_and_zero_gradient_rows_still_step():
    # two backwards before a step touch rows {0} and {1}; row 1's gradient is exactly zero, yet
    # it was looked up, so its moments (non-zero from step 1) move it in step 2 (paddle's sparse rows)
    w0 = np.ones((4, 2), np.float32)
    emb = embedding(4, 2, w0)
    o = opt.Adam(0.1, parameters=emb.parameters(), lazy_mode=True)
    emb(pycoll.to_tensor([1])).sum().backward()
    o.step()
    o.clear_grad()
    after1 = emb.weight.numpy().copy()
    emb(pycoll.to_tensor([0])).sum().backward()
    (emb(pycoll.to_tensor([1])) * 0.0).sum().backward()
    o.step()
    g1, g2 = np.zeros((4, 2)), np.zeros((4, 2))
    g1[1], g2[0] = 1, 1
    steps = [(np.array([1]), g1), (np.array([0, 1]), g2)]
    want = lazy_reference(w0, steps)
    np.testing.assert_allclose(emb.weight.numpy(), want, rtol=1e-6)
    assert not np.allclose(emb.weight.numpy()[1], after1[1])  # row 1 moved in step 2 with a zero gradient
    np.testing.assert_array_equal(emb.weight.numpy()[2:], 1.0)


def test_clear_grad_resets_the_rows():
    # after a step and clear_grad, rows looked up earlier are not updated again
    emb = embedding(3, 2, np.ones((3, 2), np.float32))
    o = opt.Adam(0.1, parameters=emb.parameters(), lazy_mode=True)
    emb(pycoll.to_tensor([0])).sum().backward()
    o.step()
    o.clear_grad()
    emb(pycoll.to_tensor([2])).sum().backward()
    o.step()
    np.testing.assert_allclose(emb.weight.numpy()[0], 0.9, rtol=1e-6)
    np.testing.assert_array_equal(emb.weight.numpy()[1], 1.0)


def test_dense_gradients_ignore_lazy_mode():
    # a dense embedding (and a Linear) under lazy_mode steps every row, as Adam without it does
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal((4, 2)).astype(np.float32)
    results = []
    for lazy in (False, True):
        emb = nn.Embedding(4, 2)
        emb.weight.set_value(w0.copy())
        o = opt.Adam(0.1, parameters=emb.parameters(), lazy_mode=lazy)
        for ids in ([0], [1]):
            emb(pycoll.to_tensor(ids)).sum().backward()
            o.step()
            o.clear_grad()
        results.append(emb.weight.numpy().copy())
    np.testing.assert_array_equal(results[0], results[1])
    assert not np.allclose(results[1][0], w0[0] - 0.1)  # row 0 kept moving in step 2 (dense Adam)


def test_a_regularizer_decays_every_row_as_a_dense_gradient_does():
    # paddle 3.3.1: Embedding(10, 2, sparse=True, weight_attr=ParamAttr(regularizer=L2Decay(0.5))),
    # Adam(0.1, lazy_mode=True), ids [[0, 1], [2, 3]] three times: row 0 ends at 0.7004 and row 9,
    # never looked up, at 0.7016 (the decayed gradient is dense, so lazy_mode changes nothing)
    ends = []
    for sparse in (True, False):
        attr = pycoll.ParamAttr(regularizer=pycoll.regularizer.L2Decay(0.5))
        emb = nn.Embedding(10, 2, sparse=sparse, weight_attr=attr)
        emb.weight.set_value(np.ones((10, 2), np.float32))
        o = opt.Adam(0.1, parameters=emb.parameters(), lazy_mode=True)
        for _ in range(3):
            emb(pycoll.to_tensor([[0, 1], [2, 3]])).sum().backward()
            o.step()
            o.clear_grad()
        ends.append(emb.weight.numpy().copy())
    np.testing.assert_allclose(ends[0][[0, 9]], [[0.7004, 0.7004], [0.7016, 0.7016]], atol=1e-4)
    np.testing.assert_allclose(ends[0], ends[1], rtol=1e-6)


@pytest.mark.parametrize("cls", [opt.SGD, opt.Momentum, opt.Adam, opt.AdamW, opt.Adagrad, opt.RMSProp])
def test_negative_learning_rate_is_gradient_ascent(cls):
    # paddle 3.3.1 accepts learning_rate=-1.0 (and nan, inf) for these; SGD's step then adds the gradient
    p = pycoll.create_parameter([2], "float32")
    o = cls(learning_rate=-1.0, parameters=[p])
    assert o.get_lr() == -1.0
    o.set_lr(float("nan"))
    assert math.isnan(o.get_lr())
    if cls is opt.SGD:
        o.set_lr(-1.0)
        before = p.numpy().copy()
        p.grad = np.array([1.0, -2.0], np.float32)
        o.step()
        np.testing.assert_allclose(p.numpy(), before + [1.0, -2.0])


@pytest.mark.parametrize("cls", [opt.NAdam, opt.RAdam])
@pytest.mark.parametrize("lr", [-1.0, float("nan")])
def test_nadam_radam_refuse_negative_and_nan_rates(cls, lr):
    # paddle 3.3.1: "Invalid learning rate: -1.0, expect learning_rate >= 0." (nan too); inf passes
    p = pycoll.create_parameter([2], "float32")
    with pytest.raises(ValueError, match="learning_rate"):
        cls(learning_rate=lr, parameters=[p])
    assert cls(learning_rate=float("inf"), parameters=[p]).get_lr() == float("inf")


def test_learning_rate_of_another_type_is_refused():
    p = pycoll.create_parameter([2], "float32")
    with pytest.raises(TypeError, match="learning_rate"):
        opt.SGD(learning_rate="0.1", parameters=[p])
