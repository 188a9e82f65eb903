"""An in-place op on a view of a tensor in the graph (``y[0].zero_()``, ``y.reshape([6]).add_(z)``,
``y.T.scale_(3)``, ``y[0][1] = v``) changes the tensor it views, as it does outside the graph through
the shared memory and as paddle does. The values are paddle 3.3.1's (measured, each case below);
the gradients are checked against central differences, because paddle's are not right for most of
these (it drops the in-place op's own derivative: 48 for col_scale where 144 is right, and gives
w no gradient in row_add_w)."""
import numpy as np
import pytest

import pycoll
from pycoll.inplace_ops import LeafInplaceError

X = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
W = np.array([10.0, 20.0, 30.0])

CASES = {  # name -> (change of y = 2x made in place through a view, y afterwards on paddle 3.3.1)
    "row_zero": (lambda y, w: y[0].zero_(), [[0, 0, 0], [8, 10, 12]]),
    "row_add_w": (lambda y, w: y[1].add_(w), [[2, 4, 6], [18, 30, 42]]),
    "col_scale": (lambda y, w: y[:, 1].scale_(3), [[2, 12, 6], [8, 30, 12]]),
    "reshape_mul": (lambda y, w: y.reshape([6]).multiply_(pycoll.arange(6, dtype="float64")),
                    [[0, 4, 12], [24, 40, 60]]),
    "transpose_add": (lambda y, w: y.transpose([1, 0]).add_(pycoll.ones([3, 2], dtype="float64")),
                      [[3, 5, 7], [9, 11, 13]]),
    "view_of_view": (lambda y, w: y[1][1:].zero_(), [[2, 4, 6], [8, 0, 0]]),
    "unsqueeze_fill": (lambda y, w: y.unsqueeze(0).fill_(5), [[5, 5, 5], [5, 5, 5]]),
    "setitem_on_view": (lambda y, w: y[0].__setitem__(1, 100.0), [[2, 100, 6], [8, 10, 12]]),
    "T_tanh": (lambda y, w: y.T.tanh_(), np.tanh(2 * X).tolist()),
}


def run(change, x_values, w_values):
    """loss = sum(y * y) after `change` on y = 2x, with x's and w's gradients."""
    x = pycoll.to_tensor(x_values.copy(), stop_gradient=False)  # to_tensor shares a NumPy array's memory
    w = pycoll.to_tensor(w_values.copy(), stop_gradient=False)
    y = x * 2
    change(y, w)
    loss = (y * y).sum()
    loss.backward()
    return y.numpy(), float(loss), x.grad, w.grad


def central_differences(change, wrt, eps=1e-6):
    """d loss / d (x or w) by central differences, with no graph recorded."""
    values = {"x": X.copy(), "w": W.copy()}
    grad = np.zeros_like(values[wrt])
    for i in np.ndindex(grad.shape):
        ends = []
        for step in (eps, -eps):
            moved = {k: v.copy() for k, v in values.items()}
            moved[wrt][i] += step
            with pycoll.no_grad():
                y = pycoll.to_tensor(moved["x"]) * 2
                change(y, pycoll.to_tensor(moved["w"]))
                ends.append(float((y * y).sum()))
        grad[i] = (ends[0] - ends[1]) / (2 * eps)
    return grad


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_base_changes_as_in_paddle_and_gradients_are_exact(case):
    change, expected = CASES[case]
    y, loss, gx, gw = run(change, X, W)
    np.testing.assert_allclose(y, expected, rtol=1e-12)
    np.testing.assert_allclose(gx.numpy(), central_differences(change, "x"), rtol=1e-6, atol=1e-6)
    if gw is not None:
        np.testing.assert_allclose(gw.numpy(), central_differences(change, "w"), rtol=1e-6, atol=1e-6)
    else:
        assert not np.any(central_differences(change, "w"))


def test_the_view_keeps_viewing_the_new_values():
    x = pycoll.to_tensor(X, stop_gradient=False)
    y = x * 2
    v = y[0]
    v.add_(pycoll.to_tensor(W))
    v.scale_(0.5)  # again, through the same view
    np.testing.assert_allclose(v.numpy(), (2 * X[0] + W) / 2)
    np.testing.assert_allclose(y.numpy(), [(2 * X[0] + W) / 2, 2 * X[1]])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[1, 1, 1], [2, 2, 2]])


def test_a_buffer_outside_the_graph_joins_it_through_its_view():
    """paddle keeps such a buffer out of the graph (w gets no gradient); pycoll gives w the
    gradient it has, as torch does."""
    z = pycoll.zeros([2, 3], dtype="float64")
    w = pycoll.to_tensor(W, stop_gradient=False)
    z[1].add_(w)
    np.testing.assert_allclose(z.numpy(), [[0, 0, 0], W])
    (z * z).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), 2 * W)


def test_what_a_backward_kept_of_the_base_stays_right():
    x = pycoll.to_tensor(X, stop_gradient=False)
    y = x * 2
    cube = y * y * y  # keeps y's old values
    y[0].zero_()
    (cube.sum() + y.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), 3 * (2 * X) ** 2 * 2 + [[0, 0, 0], [2, 2, 2]])


def test_a_view_of_a_parameter_is_refused_in_the_graph_and_written_under_no_grad():
    w = pycoll.to_tensor(X.copy(), stop_gradient=False)
    with pytest.raises(LeafInplaceError, match="view of leaf tensor"):
        w[0].add_(pycoll.ones([3], dtype="float64"))
    np.testing.assert_allclose(w.numpy(), X)
    with pycoll.no_grad():
        w[0].add_(pycoll.ones([3], dtype="float64"))
    np.testing.assert_allclose(w.numpy(), [X[0] + 1, X[1]])


def test_copies_are_not_views():
    x = pycoll.to_tensor(X, stop_gradient=False)
    y = x * 2
    picked = y[pycoll.to_tensor([0, 0])]  # advanced indexing copies, in paddle as in NumPy
    picked.zero_()
    first, second = pycoll.split(y, [1, 1])  # paddle's split copies
    first.zero_()
    np.testing.assert_allclose(y.numpy(), 2 * X)


@pytest.mark.gpu
def test_views_write_through_on_the_gpu():
    before = pycoll.get_device()
    pycoll.set_device("gpu:0")  # the cases' own tensors (arange, ones) are made there too
    try:
        for case in sorted(CASES):
            change, expected = CASES[case]
            y, loss, gx, gw = run(change, X, W)
            assert gx.place == "gpu:0", case
            np.testing.assert_allclose(y, expected, rtol=1e-12, err_msg=case)
            np.testing.assert_allclose(gx.numpy(), central_differences(change, "x"), rtol=1e-6, atol=1e-6,
                                       err_msg=case)
    finally:
        pycoll.set_device(before)
