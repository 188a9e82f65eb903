"""Autograd behaviours matched to paddle 3.3.1 (CPU build; the values in comments were printed by
it): PyLayer's keyword and list inputs, non-Tensor outputs and its ctx settings, grad-mode
decorators on generators, backward from a stop_gradient tensor, and inplace_version counting."""
import logging

import numpy as np
import pytest

import pycoll
from pycoll.autograd import PyLayer


def leaf(values):
    return pycoll.to_tensor(values, stop_gradient=False)


class Mul(PyLayer):
    @staticmethod
    def forward(ctx, x, y):
        return x * y

    @staticmethod
    def backward(ctx, g):
        return g * 10, g * 100  # marks which input each gradient went to


@pytest.mark.parametrize("order", ["xy", "yx"])
def test_keyword_tensors_are_inputs_in_call_order(order):
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    kwargs = {"x": x, "y": y} if order == "xy" else {"y": y, "x": x}
    Mul.apply(**kwargs).sum().backward()
    first, second = (x, y) if order == "xy" else (y, x)
    # paddle: the first keyword Tensor of the call gets backward's first gradient
    np.testing.assert_array_equal(first.grad.numpy(), [10.0, 10.0])
    np.testing.assert_array_equal(second.grad.numpy(), [100.0, 100.0])


def test_positional_then_keyword_and_list_inputs():
    class F(PyLayer):
        @staticmethod
        def forward(ctx, a, s=1.0, b=None, cs=None):
            return a * s + b + cs[0] + cs[1]

        @staticmethod
        def backward(ctx, g):
            return g * 1, [g * 2, g * 3], g * 4

    a, b, c0, c1 = leaf([1.0]), leaf([2.0]), leaf([3.0]), leaf([4.0])
    F.apply(a, cs=[c0, c1], s=2.0, b=b).sum().backward()
    assert [t.grad.item() for t in (a, c0, c1, b)] == [1.0, 2.0, 3.0, 4.0]


def test_keyword_only_tensor_that_needs_a_gradient_makes_the_output_need_one():
    class Scale(PyLayer):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x)
            return x * w

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensor()
            return None, g * x

    x, w = pycoll.to_tensor([1.0, 2.0]), leaf([3.0, 4.0])
    z = Scale.apply(x, w=w)
    assert z.stop_gradient is False  # paddle: False, w.grad [1, 2]
    z.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, 2.0])


def test_non_tensor_outputs_come_back_as_they_are():
    class F(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return 3, x * 2, "a", x * 3

        @staticmethod
        def backward(ctx, g1, g3):
            return g1 + g3

    x = leaf([1.0, 2.0])
    n, y1, s, y3 = F.apply(x)
    assert (n, s) == (3, "a")
    (y1.sum() + y3.sum() * 2).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])  # paddle: [3, 3]
    with pytest.raises(ValueError, match="at least one Tensor"):
        type("G", (F,), {"forward": staticmethod(lambda ctx, x: 3)}).apply(x)


class TwoOut(PyLayer):
    seen = []

    @staticmethod
    def forward(ctx, x, materialize, non_diff):
        a, b = x * 2, x * 3
        if non_diff:
            ctx.mark_non_differentiable(b)
        if materialize is not None:
            ctx.set_materialize_grads(materialize)
        return a, b

    @staticmethod
    def backward(ctx, ga, gb):
        TwoOut.seen.append(None if gb is None else gb.numpy().tolist())
        return ga * 2 if gb is None else ga * 2 + gb


@pytest.mark.parametrize("materialize", [None, False])
@pytest.mark.parametrize("non_diff", [False, True])
def test_materialize_grads_and_non_differentiable_outputs(materialize, non_diff):
    TwoOut.seen.clear()
    x = leaf([1.0, 2.0])
    a, b = TwoOut.apply(x, materialize, non_diff)
    assert (a.stop_gradient, b.stop_gradient) == (False, non_diff)
    (a.sum() + b.sum() * 5).backward()
    # paddle: b's gradient is [5, 5] unless b is non-differentiable, then zeros (None unmaterialized)
    expect_gb = [0.0, 0.0] if non_diff else [5.0, 5.0]
    if non_diff and materialize is False:
        expect_gb = None
    assert TwoOut.seen == [expect_gb]
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0] if non_diff else [7.0, 7.0])


def test_ctx_flags_defaults_and_dtype_consistency():
    assert (PyLayer.materialize_grads, PyLayer.grad_in_dtype_consistent, PyLayer.non_differentiable) == (True, True, None)
    got = []

    class A(PyLayer):
        @staticmethod
        def forward(ctx, x, flag):
            if flag is not None:
                ctx.set_grad_in_dtype_consistent(flag)
            ctx.mark_not_inplace(x)
            return x

        @staticmethod
        def backward(ctx, g):
            got.append(g.dtype)
            return g

    class Half(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g.astype("float16")

    for flag in (None, False):
        x = leaf([1.0, 2.0])
        out = A.apply(x * 1, flag)
        Half.apply(out).sum().backward()
    # paddle: float32 by default (cast to the output's dtype), float16 with the flag False
    assert got == [pycoll.float32, pycoll.float16]


class ScaleInPlace(PyLayer):
    @staticmethod
    def forward(ctx, x):
        x.scale_(3.0)
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 3


class Tenfold(PyLayer):  # returns its input unchanged; its backward multiplies by 10
    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, g):
        return g * 10


def test_an_input_forward_returns_is_changed_in_place_in_the_graph():
    # paddle 3.3.1: z is y, and y's later uses differentiate through the PyLayer: x.grad [72, 144]
    x = leaf([1.0, 2.0])
    y = x * 2
    z = ScaleInPlace.apply(y)
    assert z is y and y.numpy().tolist() == [6.0, 12.0]
    (y * y).sum().backward()
    assert x.grad.numpy().tolist() == [72.0, 144.0]
    x = leaf([1.0, 2.0])
    y = x * 2
    Tenfold.apply(y)  # the result dropped: y itself went through it (paddle: x.grad [20, 20])
    y.sum().backward()
    assert x.grad.numpy().tolist() == [20.0, 20.0]
    x = leaf([1.0, 2.0])  # a leaf returned stays a leaf; the result is a new Tensor
    z = Tenfold.apply(x)
    assert z is not x and x.grad_node is None
    z.sum().backward()
    assert x.grad.numpy().tolist() == [10.0, 10.0]


def test_forward_may_not_change_a_leaf_that_takes_a_gradient():
    # paddle 3.3.1: ValueError "Leaf Var ... that doesn't stop gradient can't use inplace strategy"
    w = leaf([1.0, 2.0])
    with pytest.raises(ValueError, match=r"ScaleInPlace.forward changed leaf tensor .*in place"):
        ScaleInPlace.apply(w)
    frozen = pycoll.to_tensor([1.0, 2.0])
    with pycoll.no_grad():
        assert ScaleInPlace.apply(w).numpy().tolist() == [9.0, 18.0]  # no graph recorded: allowed
    assert ScaleInPlace.apply(frozen) is frozen


def test_a_lone_list_inputs_gradients_may_come_back_as_a_list():
    class Split(PyLayer):
        @staticmethod
        def forward(ctx, xs):
            return xs[0] + xs[1]

        @staticmethod
        def backward(ctx, g):
            return [g * 2, g * 3]  # paddle 3.3.1 reads it as the list input's gradients

    a, b = leaf([1.0]), leaf([1.0])
    Split.apply([a, b]).sum().backward()
    assert (a.grad.item(), b.grad.item()) == (2.0, 3.0)


def test_no_grad_decorates_each_resumption_of_a_generator():
    x = leaf([1.0])

    @pycoll.no_grad()
    def gen():
        sent = yield (x * 2).stop_gradient, pycoll.is_grad_enabled()
        yield sent, pycoll.is_grad_enabled()
        return "done"

    g = gen()
    assert next(g) == (True, False)
    assert pycoll.is_grad_enabled()  # between resumptions the caller's mode holds
    assert g.send(5) == (5, False)
    with pytest.raises(StopIteration) as stop:
        next(g)
    assert stop.value.value == "done"
    with pycoll.no_grad():
        @pycoll.enable_grad()
        def on():
            yield (x * 2).stop_gradient
        assert list(on()) == [False]


def test_backward_from_a_stop_gradient_tensor_does_nothing(caplog):
    x = leaf([1.0, 2.0])
    with pycoll.no_grad():
        loss = (x * x).sum()
    with caplog.at_level(logging.WARNING, logger="pycoll"):
        loss.backward()
        pycoll.autograd.backward([loss])
    assert x.grad is None  # paddle: None, no error
    assert len([r for r in caplog.records if "stop_gradient=True" in r.message]) <= 1


def test_inplace_version_counts_changes_of_graph_tensors():
    a = pycoll.to_tensor([1.0, 2.0])
    a.add_(pycoll.to_tensor([1.0, 1.0]))
    a.scale_(2.0)
    a[0] = 3.0
    assert a.inplace_version == 3 == a._inplace_version()
    x = leaf([1.0, 2.0])
    y = x * 1
    y.add_(x)
    assert y.inplace_version == 1  # paddle: 1, then 2
    y[0] = 5.0
    assert y._inplace_version() == 2
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 2.0])


def test_a_hook_that_changes_its_gradient_in_place_is_refused_clearly():
    x = leaf([1.0, 2.0])
    y = x * 2
    y.register_hook(lambda g: g.scale_(5.0))  # paddle refuses it too
    with pytest.raises(ValueError, match="scale_: .*read-only.*hook"):
        y.sum().backward()


def test_create_graph_through_a_py_layer_with_a_keyword_input_and_a_non_differentiable_output():
    """The create_graph rule runs the same backward as the first-order graph: keyword inputs, a
    marked output (its gradient zero) and non-Tensor outputs alike. y = x^2 w with w a keyword:
    dy/dx = 2 x w, d2y/dx2 = 2 w."""
    class Square(PyLayer):
        @staticmethod
        def forward(ctx, x, w=None):
            ctx.save_for_backward(x, w)
            flag = x > 0
            ctx.mark_non_differentiable(flag)
            return x * x * w, flag, "note"

        @staticmethod
        def backward(ctx, dy, dflag):
            x, w = ctx.saved_tensor()
            return 2 * x * w * dy, x * x * dy

    x, w = leaf([1.0, -2.0]), leaf([3.0, 5.0])
    y, flag, note = Square.apply(x, w=w)
    assert flag.stop_gradient and note == "note"
    (gx,) = pycoll.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(gx.numpy(), [6.0, -20.0])
    (ggx,) = pycoll.grad(gx.sum(), x)
    np.testing.assert_allclose(ggx.numpy(), [6.0, 10.0])


@pytest.mark.parametrize("create_graph", [False, True])
def test_rounding_gradients_of_a_non_finite_gradient_are_paddles(create_graph):
    # paddle 3.3.1, x = [1.5, -2.5, 3.0], grad_outputs [inf, nan, 2.0]: floor, ceil, sign and round
    # give g * 0 = [nan, nan, 0]; trunc gives zeros
    expected = {"floor": [np.nan, np.nan, 0.0], "ceil": [np.nan, np.nan, 0.0], "sign": [np.nan, np.nan, 0.0],
                "round": [np.nan, np.nan, 0.0], "trunc": [0.0, 0.0, 0.0]}
    for name, values in expected.items():
        x = leaf([1.5, -2.5, 3.0])
        g = pycoll.to_tensor([np.inf, np.nan, 2.0])
        (gx,) = pycoll.grad([getattr(pycoll, name)(x)], [x], grad_outputs=[g], create_graph=create_graph)
        np.testing.assert_array_equal(gx.numpy(), values, err_msg=name)
