"""The backward engine: accumulation, graph lifetime, no_grad, hooks, callbacks, PyLayer."""
import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
from pycoll import autograd
from pycoll.autograd import PyLayer


def leaf(values):
    return pycoll.to_tensor(np.asarray(values, dtype=np.float64), stop_gradient=False)


# ---- stop_gradient, accumulation, clearing -----------------------------------------------

def test_stop_gradient_defaults_and_propagation():
    plain = pycoll.to_tensor([1.0, 2.0])
    param = nn.Linear(2, 2).weight
    assert plain.stop_gradient is True and param.stop_gradient is False
    assert (plain * 2).stop_gradient is True
    assert (plain + param[0]).stop_gradient is False


def test_gradients_accumulate_until_cleared():
    x = leaf([1.0, 2.0, 3.0])
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2, 4, 6])
    (x * 3.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5, 7, 9])
    grad = x.grad
    x.clear_grad()
    assert x.grad is grad and np.all(grad.numpy() == 0)  # paddle: zeroed in place
    x.clear_gradient(set_to_zero=False)
    assert x.grad is None


def test_grad_is_a_leaf_tensor_with_stop_gradient_false_as_paddles():
    x = leaf([1.0])
    (x * 2).backward()
    assert isinstance(x.grad, pycoll.Tensor) and not x.grad.stop_gradient and x.grad.grad_node is None
    (x.grad * 3).backward()  # as in paddle: the gradient's own gradient, x.grad left as it was
    assert x.grad.numpy().tolist() == [2.0] and x.grad.grad.numpy().tolist() == [3.0]


def test_accumulation_is_in_place():
    x = leaf(np.ones((3, 2)))
    (x * 2).sum().backward()
    array = x.grad.array
    (x * 2).sum().backward()
    assert x.grad.array is array
    np.testing.assert_allclose(array, 4.0)


def test_grad_set_to_a_view_receives_gradients_in_place():
    x = leaf(np.ones(4))
    bucket = np.zeros(10)
    x.grad = bucket[2:6]
    (x * 3).sum().backward()
    np.testing.assert_allclose(bucket, [0, 0, 3, 3, 3, 3, 0, 0, 0, 0])


def test_grad_setter_checks_shape():
    x = leaf(np.ones(4))
    with pytest.raises(ValueError, match="shape"):
        x.grad = np.zeros(3)


def test_leaf_grads_never_alias_each_other_or_the_seed():
    x, y = leaf(np.ones(3)), leaf(np.ones(3))
    seed = np.array([1.0, 2.0, 3.0])
    (x + y).backward(pycoll.to_tensor(seed))
    assert not np.shares_memory(x.grad.array, y.grad.array)
    assert not np.shares_memory(x.grad.array, seed)
    (x + y).backward(pycoll.to_tensor(seed))
    np.testing.assert_allclose(x.grad.numpy(), 2 * seed)
    np.testing.assert_allclose(y.grad.numpy(), 2 * seed)
    np.testing.assert_allclose(seed, [1, 2, 3])


def test_reshaped_and_broadcast_gradients_are_writable_copies():
    x = leaf(np.ones((2, 3)))
    x.reshape([6]).sum().backward()
    x.sum().backward()  # broadcast_to view in sum's backward must not become .grad
    np.testing.assert_allclose(x.grad.numpy(), 2.0)


def test_diamond_graph_sums_both_paths():
    x = leaf([2.0])
    a = x * 3
    b = x * x
    (a * b).backward()  # d(3x^3)/dx = 9x^2
    np.testing.assert_allclose(x.grad.numpy(), [36.0])


def test_non_scalar_backward_seeds_ones():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    (x * 2).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2.0)


def test_backward_with_grad_tensor_and_shape_check():
    x = leaf([1.0, 2.0])
    (x * 2).backward(pycoll.to_tensor([1.0, 10.0], dtype="float64"))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 20.0])
    with pytest.raises(ValueError, match="grad_tensor must have shape"):
        (x * 2).backward(pycoll.to_tensor([1.0]))


def test_backward_on_stop_gradient_tensor_does_nothing():
    # paddle 3.3.1: loss.backward() on a stop_gradient tensor is a no-op (x.grad stays None)
    x = leaf([1.0, 2.0])
    with pycoll.no_grad():
        loss = (x * x).sum()
    loss.backward()
    assert x.grad is None


def test_backward_on_a_leaf_fills_its_grad():
    x = leaf([1.0, 2.0])
    x.backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 1.0])


def test_grad_is_cast_to_leaf_dtype():
    x = pycoll.to_tensor([1.0, 2.0], dtype="float32", stop_gradient=False)
    (x * pycoll.to_tensor([1.0, 1.0], dtype="float64")).sum().backward()
    assert x.grad.dtype == np.float32


def test_graph_is_freed_unless_retained():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])
    with pytest.raises(RuntimeError, match="retain_graph"):
        y.backward()


def test_autograd_backward_with_several_roots():
    x = leaf([1.0, 2.0])
    autograd.backward([x * 2, (x * x).sum()], [pycoll.ones([2], "float64"), None])
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 6.0])


def test_deep_graph_has_no_recursion_limit():
    x = leaf([1.0])
    y = x
    for _ in range(5000):
        y = y * 1.0
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0])


# ---- no_grad and detach ------------------------------------------------------------------

def test_no_grad_context_and_decorator():
    x = leaf([1.0])
    assert pycoll.is_grad_enabled()
    with pycoll.no_grad():
        assert not pycoll.is_grad_enabled()
        with pycoll.no_grad():
            pass
        assert not pycoll.is_grad_enabled()
        y = x * 2
    assert pycoll.is_grad_enabled()
    assert y.stop_gradient and y.is_leaf

    @pycoll.no_grad()
    def double(t):
        assert not pycoll.is_grad_enabled()
        return t * 2
    assert double(x).stop_gradient and pycoll.is_grad_enabled()


def test_no_grad_restores_after_exception():
    with pytest.raises(KeyError):
        with pycoll.no_grad():
            raise KeyError
    assert pycoll.is_grad_enabled()


def test_detach_shares_memory_and_leaves_the_graph():
    x = leaf([1.0, 2.0])
    d = (x * 1).detach()
    assert d.stop_gradient and d.is_leaf
    e = x.detach()
    e.array[0] = 7.0
    assert x.numpy()[0] == 7.0


def test_setitem_of_none_is_refused():
    t = pycoll.to_tensor([1.0, 2.0])
    with pytest.raises(ValueError, match="the value assigned is None"):  # paddle 3.3.1: ValueError; NumPy wrote NaN
        t[0] = None
    assert t.numpy().tolist() == [1.0, 2.0]


def test_setitem_on_tensor_requiring_grad_is_refused():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="no_grad"):
        x[0] = 3.0
    with pycoll.no_grad():
        x[0] = 3.0
    assert x.numpy()[0] == 3.0


# ---- array / set_value -------------------------------------------------------------------

def test_array_is_zero_copy():
    x = pycoll.zeros([3])
    x.array[1] = 5.0
    assert x.numpy()[1] == 5.0 and x.array is x.numpy()


def test_set_value_copies_in_place_and_checks():
    x = pycoll.zeros([2, 2])
    before = x.array
    x.set_value(np.ones((2, 2), dtype=np.float32))
    assert x.array is before and np.all(before == 1)
    x.set_value(pycoll.full([2, 2], 3.0))
    assert np.all(before == 3)
    x.set_value([[1, 2], [3, 4]])
    np.testing.assert_array_equal(before, [[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="shape"):
        x.set_value(np.ones(4, dtype=np.float32))
    with pytest.raises(ValueError, match="dtype"):
        x.set_value(np.ones((2, 2), dtype=np.float64))


# ---- grad-ready hooks --------------------------------------------------------------------

def test_hook_fires_once_after_the_last_contribution():
    w = leaf([1.0, 2.0])
    seen = []
    w.register_grad_ready_hook(lambda t: seen.append(t.grad.numpy().copy()))
    x = pycoll.to_tensor([3.0, 4.0], dtype="float64")
    ((w * x).sum() + (w * w).sum() + w.sum()).backward()  # three paths into w
    assert len(seen) == 1
    np.testing.assert_allclose(seen[0], [3 + 2 + 1, 4 + 4 + 1])


def test_hook_sees_accumulated_grad_and_fires_every_backward():
    w = leaf([1.0])
    seen = []
    w.register_grad_ready_hook(lambda t: seen.append(float(t.grad)))
    (w * 2).backward()
    (w * 2).backward()
    assert seen == [2.0, 4.0]


def test_hooks_fire_during_the_walk_not_at_its_end():
    events = []

    class Probe(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, dy):
            events.append("early layer backward")
            return dy

    w1, w2 = leaf(np.ones((2, 2))), leaf(np.ones((2, 2)))
    x = pycoll.to_tensor(np.ones((3, 2)), stop_gradient=False)
    w1.register_grad_ready_hook(lambda t: events.append("w1"))
    w2.register_grad_ready_hook(lambda t: events.append("w2"))
    h = Probe.apply(x) @ w1
    (pycoll.tanh(h) @ w2).sum().backward()
    assert events.index("w2") < events.index("early layer backward")
    assert events.index("w1") < events.index("early layer backward")
    assert events.count("w1") == events.count("w2") == 1


def test_hook_not_fired_for_unreached_leaf_and_removable():
    used, unused = leaf([1.0]), leaf([1.0])
    fired = []
    unused.register_grad_ready_hook(lambda t: fired.append("unused"))
    handle = used.register_grad_ready_hook(lambda t: fired.append("used"))
    (used * 2).backward()
    assert fired == ["used"]
    handle.remove()
    (used * 2).backward()
    assert fired == ["used"]


def test_hook_needs_a_leaf_and_a_callable():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="leaf"):
        (x * 2).register_grad_ready_hook(lambda t: None)
    with pytest.raises(TypeError, match="callable"):
        x.register_grad_ready_hook(3)


def test_hooks_on_parameters_of_a_model_fire_in_reverse_layer_order():
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    order = []
    for name, p in model.named_parameters():
        p.register_grad_ready_hook(lambda t, name=name: order.append(name))
    model(pycoll.randn([5, 3])).sum().backward()
    assert sorted(order) == sorted(n for n, _ in model.named_parameters())
    assert order.index("2.weight") < order.index("0.weight")


# ---- queue_callback ----------------------------------------------------------------------

def test_queue_callback_runs_once_after_the_walk():
    w1, w2 = leaf([1.0]), leaf([2.0])
    events = []

    def hook(t):
        events.append(("hook", t is w1))
        if t is w1:
            autograd.queue_callback(lambda: events.append(("callback", w1.grad is not None
                                                          and w2.grad is not None)))
    w1.register_grad_ready_hook(hook)
    w2.register_grad_ready_hook(hook)
    (w1 * w2).backward()
    assert [e[0] for e in events] == ["hook", "hook", "callback"]
    assert events[-1] == ("callback", True)
    (w1 * w2).backward()  # one more callback: none carried over from the first backward
    assert [e[0] for e in events].count("callback") == 2


def test_queue_callback_from_a_callback_and_in_order():
    w = leaf([1.0])
    events = []

    def hook(t):
        autograd.queue_callback(lambda: events.append(1))
        autograd.queue_callback(lambda: (events.append(2), autograd.queue_callback(lambda: events.append(3))))
    w.register_grad_ready_hook(hook)
    (w * 2).backward()
    assert events == [1, 2, 3]


def test_queue_callback_outside_backward_raises():
    with pytest.raises(RuntimeError, match="during backward"):
        autograd.queue_callback(lambda: None)


def test_queue_callback_state_is_clean_after_a_failing_backward():
    w = leaf([1.0])

    def hook(t):
        autograd.queue_callback(lambda: None)
        raise KeyError("boom")
    w.register_grad_ready_hook(hook)
    with pytest.raises(KeyError):
        (w * 2).backward()
    with pytest.raises(RuntimeError):
        autograd.queue_callback(lambda: None)


# ---- graph_leaves ------------------------------------------------------------------------

def test_graph_leaves_finds_used_parameters_only():
    used, unused = leaf([1.0]), leaf([2.0])
    frozen = pycoll.to_tensor([3.0], dtype="float64")
    y = used * frozen + 1.0
    leaves = autograd.graph_leaves(y)
    assert len(leaves) == 1 and leaves[0] is used
    nested = autograd.graph_leaves({"a": [y, 3], "b": (unused * 2, y)})
    assert len(nested) == 2 and {id(t) for t in nested} == {id(used), id(unused)}


def test_graph_leaves_of_a_model_output_and_after_backward():
    class TwoHeads(nn.Layer):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2)
            self.b = nn.Linear(2, 2)

        def forward(self, x):
            return self.a(x)

    model = TwoHeads()
    out = model(pycoll.randn([1, 2]))
    found = {id(p) for p in autograd.graph_leaves(out)}
    assert found == {id(model.a.weight), id(model.a.bias)}
    out.sum().backward()
    assert autograd.graph_leaves(out) == []  # the graph was freed


def test_graph_leaves_includes_a_leaf_output_itself():
    x = leaf([1.0])
    assert autograd.graph_leaves([x]) == [x]


# ---- PyLayer -----------------------------------------------------------------------------

class Double(PyLayer):
    @staticmethod
    def forward(ctx, x, scale=2.0):
        ctx.grad_enabled_in_forward = pycoll.is_grad_enabled()
        ctx.scale = scale
        return x * scale

    @staticmethod
    def backward(ctx, dy):
        return dy * ctx.scale


def test_pylayer_forward_runs_without_grad_and_output_joins_graph():
    x = leaf([1.0, 2.0])
    y = Double.apply(x, scale=3.0)
    assert not y.stop_gradient and not y.is_leaf
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_pylayer_on_inputs_without_grad_records_nothing():
    y = Double.apply(pycoll.to_tensor([1.0]))
    assert y.stop_gradient and y.is_leaf


def test_pylayer_returning_its_input_does_not_alter_the_leaf():
    class Identity(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, dy):
            return dy

    x = leaf([1.0])
    y = Identity.apply(x)
    assert x.is_leaf and y is not x
    (y * 5).backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0])


def test_pylayer_backward_may_return_none_and_is_checked():
    class Pair(PyLayer):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, dy):
            return dy, None

    class Wrong(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, dy):
            return dy, dy

    x, y = leaf([1.0]), leaf([1.0])
    Pair.apply(x, y).backward()
    assert x.grad is not None and y.grad is None
    with pytest.raises(ValueError, match="1 gradient"):
        Wrong.apply(x).backward()


def test_pylayer_backward_gradient_shape_is_checked():
    class BadShape(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, dy):
            return pycoll.ones([5], "float64")

    with pytest.raises(ValueError, match="shape"):
        BadShape.apply(leaf([1.0, 2.0])).sum().backward()


def test_pylayer_backward_returning_a_number_is_named():
    class Doubled(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, dy):
            return 2.0  # paddle 3.3.1: a ValueError too ("only support Tensor or None")

    with pytest.raises(ValueError, match="Doubled.backward returned a float for input 0"):
        Doubled.apply(leaf([1.0, 2.0])).sum().backward()


def test_pylayer_saved_result_is_not_overwritten_by_accumulation():
    class KeepSaved(PyLayer):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(pycoll.ones([2], "float64"))
            return x * 1

        @staticmethod
        def backward(ctx, dy):
            saved, = ctx.saved_tensor()
            return saved  # handed out as-is: the engine must not adopt and then mutate it

    x = leaf([1.0, 1.0])
    y = KeepSaved.apply(x)
    (y.sum() + (x * 2).sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_set_grad_enabled_as_a_plain_call_stays_until_switched_back():
    # paddle 3.3.1 (and torch): set_grad_enabled(False) takes effect at the call, not only in a with block
    y = pycoll.to_tensor([1.0], stop_gradient=False)
    try:
        pycoll.set_grad_enabled(False)
        assert (y * 2).stop_gradient and not pycoll.is_grad_enabled()
        assert (y * 3).stop_gradient  # still off
    finally:
        pycoll.set_grad_enabled(True)
    assert not (y * 2).stop_gradient
    with pycoll.set_grad_enabled(False):
        assert (y * 2).stop_gradient
    assert pycoll.is_grad_enabled()
    with pycoll.no_grad():
        with pycoll.set_grad_enabled(True):
            assert not (y * 2).stop_gradient
        assert not pycoll.is_grad_enabled()

    @pycoll.set_grad_enabled(False)
    def double(t):
        return t * 2
    assert pycoll.is_grad_enabled() and double(y).stop_gradient and pycoll.is_grad_enabled()
