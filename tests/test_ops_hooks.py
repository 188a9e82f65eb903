"""Tensor.register_hook, Tensor.retain_grads and pycoll.grad (pycoll.grad_ops); expected values
were read off paddle 3.3.1 running the same code."""
import copy

import numpy as np
import pytest

import pycoll
from test_gradcheck import _rand


def _leaf(values):
    return pycoll.to_tensor(values, stop_gradient=False)


# ---- register_hook ------------------------------------------------------------------------

def test_a_hook_on_an_op_output_changes_what_flows_on():
    x = _leaf([1.0, 2.0, 3.0])
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(g.numpy().tolist()) or g * 10)
    (y * y).sum().backward()
    assert seen == [[4.0, 8.0, 12.0]]
    assert x.grad.numpy().tolist() == [80.0, 160.0, 240.0]  # paddle 3.3.1
    assert y.grad is None


def test_a_hook_on_a_leaf_replaces_what_grad_accumulates():
    x = _leaf([1.0, 2.0, 3.0])
    seen = []
    h = x.register_hook(lambda g: seen.append(g.numpy().tolist()))  # None: keep the gradient
    (x * 3).sum().backward()
    assert seen == [[3.0, 3.0, 3.0]] and x.grad.numpy().tolist() == [3.0, 3.0, 3.0]
    assert h.remove() is True and h.remove() is False
    x.clear_grad()
    h = x.register_hook(lambda g: g * 0 + 1)
    (x * 3).sum().backward()
    (x * 3).sum().backward()  # hooked each time, then accumulated
    assert x.grad.numpy().tolist() == [2.0, 2.0, 2.0]
    h.remove()
    x.clear_grad()
    (x * 3).sum().backward()
    assert x.grad.numpy().tolist() == [3.0, 3.0, 3.0]


def test_hooks_chain_in_order_and_see_the_root():
    x = _leaf([1.0, 2.0])
    y = x * 1.0
    y.register_hook(lambda g: g + 1)
    y.register_hook(lambda g: g * 3)
    y.backward(pycoll.to_tensor([1.0, 1.0]))  # the root's own seed goes through its hooks
    assert x.grad.numpy().tolist() == [6.0, 6.0]


def test_hooks_on_several_outputs_of_one_op():
    x = _leaf(np.arange(4.0))
    a, b = pycoll.split(x, 2)
    b.register_hook(lambda g: g * 5)
    (a.sum() + b.sum()).backward()
    assert x.grad.numpy().tolist() == [1.0, 1.0, 5.0, 5.0]


def test_hook_argument_errors():
    with pytest.raises(RuntimeError, match="stop_gradient"):
        pycoll.to_tensor([1.0]).register_hook(lambda g: g)
    x = _leaf([1.0, 2.0])
    with pytest.raises(TypeError, match="hook"):
        x.register_hook(3)
    x.register_hook(lambda g: pycoll.ones([3]))
    with pytest.raises(ValueError, match="shape"):
        (x * 2).sum().backward()


def test_a_deep_copied_leaf_keeps_its_hooks():
    x = _leaf([1.0, 2.0])
    x.register_hook(lambda g: g * 2)
    y = copy.deepcopy(x)
    (y * 1.0).sum().backward()
    assert y.grad.numpy().tolist() == [2.0, 2.0] and x.grad is None


# ---- retain_grads -------------------------------------------------------------------------

def test_retain_grads_keeps_an_op_output_s_gradient():
    x = _leaf([1.0, 2.0, 3.0])
    y = x * 2
    y.retain_grads()
    y.retain_grads()  # once is enough
    (y * y).sum().backward(retain_graph=True)
    assert y.grad.numpy().tolist() == [4.0, 8.0, 12.0]  # paddle 3.3.1
    (y * y).sum().backward()
    assert y.grad.numpy().tolist() == [4.0, 8.0, 12.0]  # replaced, not accumulated (paddle 3.3.1)
    z = x * 2
    z.retain_grads()
    z.register_hook(lambda g: g * 10)
    (z * z).sum().backward()
    assert z.grad.numpy().tolist() == [4.0, 8.0, 12.0]  # retained before the hook registered after it
    w = x * 2
    w.register_hook(lambda g: g * 10)
    w.retain_grads()
    (w * w).sum().backward()
    assert w.grad.numpy().tolist() == [40.0, 80.0, 120.0]  # after the hook registered before it (paddle 3.3.1)
    x.retain_grads()  # a leaf keeps its gradient anyway
    pycoll.to_tensor([1.0]).retain_grads()


# ---- pycoll.grad --------------------------------------------------------------------------

def test_grad_returns_gradients_without_touching_dot_grad():
    x, w = _leaf([1.0, 2.0]), _leaf([3.0, 4.0])
    w.grad = pycoll.to_tensor([7.0, 7.0])
    y = (x * w).sum()
    gx, gw = pycoll.grad(y, [x, w], retain_graph=True)
    assert gx.numpy().tolist() == [3.0, 4.0] and gw.numpy().tolist() == [1.0, 2.0]
    assert gx.stop_gradient and x.grad is None and w.grad.numpy().tolist() == [7.0, 7.0]
    (g,) = pycoll.grad([y], x)  # a list, also for one input (paddle's)
    assert g.numpy().tolist() == [3.0, 4.0]
    (g,) = pycoll.grad(y, x, retain_graph=False)  # grad keeps the graph, whatever retain_graph says,
    assert g.numpy().tolist() == [3.0, 4.0]  # as paddle 3.3.1 does
    y.backward()
    assert x.grad.numpy().tolist() == [3.0, 4.0]
    with pytest.raises(RuntimeError, match="freed"):  # backward frees it
        y.backward()
    (g,) = pycoll.grad((x * x).sum(), x, grad_outputs=pycoll.to_tensor([3.0]))  # a [1] seed for a 0-D output
    assert g.numpy().tolist() == [6.0, 12.0]


def test_grad_of_outputs_that_take_no_gradient():
    """An output without a graph (detached) reaches nothing: None with allow_unused, as paddle."""
    x = _leaf([1.0, 2.0])
    y = (x * x).detach()
    assert pycoll.grad(y, x, allow_unused=True) == [None]
    assert pycoll.grad([y, (x * 3).sum()], x)[0].numpy().tolist() == [3.0, 3.0]
    with pytest.raises(ValueError, match="input 0 does not appear"):
        pycoll.grad(y, x)


def test_grad_of_an_op_output_and_with_seeds():
    x = _leaf([1.0, 2.0])
    m = x * 2
    (gm,) = pycoll.grad((m * m).sum(), m)
    assert gm.numpy().tolist() == [4.0, 8.0] and x.grad is None  # paddle 3.3.1
    (g,) = pycoll.grad(x * 3, x, grad_outputs=pycoll.to_tensor([1.0, 10.0]))
    assert g.numpy().tolist() == [3.0, 30.0]


def test_grad_skips_leaf_hooks_and_ready_hooks():
    x = _leaf([1.0, 2.0])
    x.register_hook(lambda g: g * 100)
    fired = []
    x.register_grad_ready_hook(lambda t: fired.append(t))
    (g,) = pycoll.grad((x * 3).sum(), x)
    assert g.numpy().tolist() == [3.0, 3.0] and not fired  # paddle 3.3.1: the raw gradient
    (x * 3).sum().backward()  # the hooks are back
    assert x.grad.numpy().tolist() == [300.0, 300.0] and fired == [x]


def test_grad_matches_backward_on_a_composite_graph():
    a, b = _rand(3, 4), _rand(4, 2)

    def loss(x, w):
        h = pycoll.tanh(x @ w)
        return (h * h).sum() + pycoll.exp(w).mean()

    x, w = _leaf(a), _leaf(b)
    gx, gw = pycoll.grad(loss(x, w), [x, w])
    x2, w2 = _leaf(a), _leaf(b)
    loss(x2, w2).backward()
    np.testing.assert_allclose(gx.numpy(), x2.grad.numpy())
    np.testing.assert_allclose(gw.numpy(), w2.grad.numpy())


def test_grad_unused_inputs():
    x, z = _leaf([1.0, 2.0]), _leaf([1.0, 2.0])
    y = (x * 2).sum()
    with pytest.raises(ValueError, match="input 1 does not appear"):
        pycoll.grad(y, [x, z], retain_graph=True)
    gx, gz = pycoll.grad(y, [x, z], allow_unused=True, retain_graph=True)
    assert gx.numpy().tolist() == [2.0, 2.0] and gz is None
    with pytest.raises(ValueError, match="input 0"):
        pycoll.grad(y, pycoll.to_tensor([1.0]))


def test_grad_argument_errors():
    x = _leaf([1.0])
    y = x * 2
    with pytest.raises(TypeError, match="inputs"):
        pycoll.grad(y, [])
    with pytest.raises(ValueError, match="grad_outputs"):
        pycoll.grad(y, x, grad_outputs=[None, None])


def test_grad_no_grad_vars():
    """paddle's two documented uses (a leaf listed changes nothing), and an op output listed: the
    paths through it carry nothing, in both walks."""
    x, y = _leaf([0.5, -1.0, 2.0]), _leaf([1.0, 2.0, 3.0])
    assert pycoll.grad((x * y).sum(), [x], no_grad_vars=[y])[0].numpy().tolist() == [1.0, 2.0, 3.0]
    assert pycoll.grad(((x * 2) * y).sum(), [y], no_grad_vars=[x])[0].numpy().tolist() == [1.0, -2.0, 4.0]
    for create_graph in (False, True):
        a = _leaf([1.0, 2.0])
        mid = a * 3
        out = (mid ** 2).sum() + (a * a).sum()
        (g,) = pycoll.grad(out, a, no_grad_vars=[mid], create_graph=create_graph)
        assert g.numpy().tolist() == [2.0, 4.0]  # 2a only: the path through mid is cut
        (g,) = pycoll.grad(out, a, create_graph=create_graph)
        assert g.numpy().tolist() == [20.0, 40.0]  # the hook is gone afterwards
        # an input listed in no_grad_vars too gets none (paddle 3.3.1: None, or its error)
        assert pycoll.grad(out, [a, mid], no_grad_vars=[mid], allow_unused=True, create_graph=create_graph)[1] is None
        assert pycoll.grad((x * y).sum(), [x, y], no_grad_vars=[y], allow_unused=True)[1] is None
        with pytest.raises(ValueError, match="input 1 does not appear"):
            pycoll.grad((x * y).sum(), [x, y], no_grad_vars=[y])


def test_a_hook_on_an_input_of_grad_acts_on_what_grad_returns():
    """paddle 3.3.1: h = 2x with a hook multiplying by 100; grad(3h) wrt h is 300, wrt x 600, in
    both walks (a hook on a leaf is not run by grad, as paddle's)."""
    for create_graph in (False, True):
        x = _leaf([1.0, 2.0])
        x.register_hook(lambda g: g * 10)
        h = x * 2
        h.register_hook(lambda g: g * 100)
        y = (h * 3).sum()
        g_h, g_x = pycoll.grad(y, [h, x], create_graph=create_graph)
        assert g_h.numpy().tolist() == [300.0, 300.0] and g_x.numpy().tolist() == [600.0, 600.0]
        assert pycoll.grad(y, h, create_graph=create_graph)[0].numpy().tolist() == [300.0, 300.0]
