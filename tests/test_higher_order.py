"""pycoll.grad(create_graph=True): gradients that are differentiated again (pycoll._higher_order).

Second derivatives are checked against central differences of first-order gradients (which
test_gradcheck checks against differences of the function), over test_gradcheck's cases; the
programs that need them (PINN, WGAN-GP, MAML) against values computed another way.
"""
import ast
import gc
import pathlib
import weakref

import numpy as np
import pytest

import pycoll
import pycoll.nn.functional as F
from pycoll._higher_order.saved import RULES
from test_gradcheck import CASES, _rand, central_differences

EPS = 1e-5


def _first_grads(fn, arrays, w, asked, create_graph):
    ts = [pycoll.to_tensor(a, stop_gradient=False) for a in arrays]
    out = fn(*ts)
    grads = pycoll.grad((out * pycoll.to_tensor(w)).sum(), [ts[i] for i in asked],
                        create_graph=create_graph, allow_unused=True)
    return ts, grads


def _objective(grads, vs):
    """A non-linear function of the first-order gradients: sum(v . g + g * g / 2)."""
    total = 0
    for g, v in zip(grads, vs):
        if g is not None:
            total = total + (g * pycoll.to_tensor(v) + g * g * 0.5).sum()
    return total


def second_order_check(fn, arrays, asked=None, atol=1e-5, rtol=1e-4):
    """The gradient, with respect to every input, of a function of the first-order gradients of
    the inputs in `asked` (all by default: then also the mixed second derivatives to inputs not
    asked first, as a gradient penalty's weights need), against central differences."""
    asked = list(range(len(arrays))) if asked is None else asked
    rng = np.random.default_rng(1)
    with pycoll.no_grad():
        shape = fn(*[pycoll.to_tensor(a) for a in arrays]).shape
    w = rng.standard_normal(shape)
    vs = [rng.standard_normal(arrays[i].shape) for i in asked]
    ts, grads = _first_grads(fn, arrays, w, asked, create_graph=True)
    hess = pycoll.grad(_objective(grads, vs), ts, allow_unused=True)

    def value(arrs):
        _, gs = _first_grads(fn, arrs, w, asked, create_graph=False)
        return float(_objective(gs, vs).numpy())

    for i, a in enumerate(arrays):
        numeric = central_differences(value, arrays, i, EPS)
        got = np.zeros_like(a) if hess[i] is None else hess[i].numpy()
        np.testing.assert_allclose(got, numeric, atol=atol, rtol=rtol, err_msg=f"second derivative of input {i}")


def _dropout_seeded(x):
    pycoll.seed(7)  # the same mask on every call: central differences need one function
    return F.dropout(x * x, 0.4)


MORE_CASES = {
    "relu6_hardtanh": (lambda x: F.relu6(x * 4) * F.hardtanh(x) ** 2, [_rand(3, 4)]),
    "softshrink_hardsigmoid": (lambda x: F.softshrink(x) ** 2 + F.hardsigmoid(x) ** 2, [_rand(3, 4)]),
    "dropout": (_dropout_seeded, [_rand(3, 4)]),
    "flip_tile": (lambda x: pycoll.flip(x * x, [0]) * pycoll.tile(x, [1, 1]) + pycoll.tile(x[:1], [3, 2])[:, :4] ** 3,
                  [_rand(3, 4)]),
    "take_along_axis": (lambda x: pycoll.take_along_axis(x * x, pycoll.to_tensor([[0, 2, 0], [1, 1, 2]]), 1) ** 2,
                        [_rand(2, 3)]),
    "masked_select": (lambda x: pycoll.masked_select(x ** 3, pycoll.to_tensor([True, False, True])), [_rand(2, 3)]),
    "pad_constant_cropped": (lambda x: F.pad(x * x, [1, -1, 2, 0], value=0.5) ** 2, [_rand(1, 1, 3, 3)]),
    "pad_reflect": (lambda x: F.pad(x, [2, 1, 1, 1], mode="reflect") ** 3, [_rand(1, 1, 3, 4)]),
    "pad_replicate_circular": (lambda x: F.pad(x, [1, 2], mode="replicate", data_format="NCL") ** 2
                               + F.pad(x, [1, 1], mode="circular", data_format="NCL").sum() ** 2, [_rand(1, 2, 3)]),
    "adaptive_avg_pool2d_nhwc": (lambda x: F.adaptive_avg_pool2d(x * x, [2, 3], data_format="NHWC") ** 2,
                                 [_rand(1, 3, 4, 2)]),
    "adaptive_max_pool2d": (lambda x: F.adaptive_max_pool2d(x * x, 2) ** 2, [_rand(1, 2, 3, 5)]),
    "var_std": (lambda x: pycoll.var(x, axis=1) * pycoll.std(x) + pycoll.var(x, axis=0, keepdim=True, unbiased=False).sum(),
                [_rand(3, 4)]),
    "inv_det": (lambda x: pycoll.linalg.inv(x) * pycoll.linalg.det(x) + pycoll.linalg.det(x * x) ** 2,
                [np.array([[2.0, 0.5, 0.1], [0.3, 1.5, -0.2], [0.1, 0.4, 1.8]]) + _rand(3, 3) * 0.1]),
    "roll_sort_topk": (lambda x: pycoll.roll(x * x, [1, -1], [0, 1]) * pycoll.roll(x, 2) + pycoll.sort(x ** 3, axis=1)
                       + pycoll.topk(x * x, 2, axis=0)[0].sum(), [_rand(3, 4)]),
    "cross_maxout": (lambda x, y: pycoll.linalg.cross(x * x, y, axis=1) ** 2
                     + F.maxout((x * y).reshape([1, 6, 1, 1]), 2).sum() ** 2, [_rand(2, 3), _rand(2, 3)]),
    "index_writes": (lambda x, v: pycoll.index_add(x * x, pycoll.to_tensor([0, 2, 0]), 0, v * v) ** 2
                     + pycoll.scatter(x ** 3, pycoll.to_tensor([1, 1]), v[:2] * x[:2], overwrite=False)
                     + pycoll.scatter_nd_add(x * x, pycoll.to_tensor([[0, 1], [2, 0]]), v[:2, 0] ** 2)
                     + pycoll.gather_nd(x * v[:, :2], pycoll.to_tensor([[1, 0], [1, 0]])).sum()
                     + pycoll.index_fill(x ** 3, pycoll.to_tensor([1]), 1, 0.5), [_rand(3, 2), _rand(3, 2)]),
    "put_along_axis": (lambda x, v: pycoll.put_along_axis(x * x, pycoll.to_tensor([[0], [1], [0]]), v ** 3, 1) ** 2
                       + pycoll.put_along_axis(x ** 3, pycoll.to_tensor([[1], [1], [0]]), v * x[:, :1], 1, "add")
                       + pycoll.put_along_axis(x, pycoll.to_tensor([[0], [0], [1]]), v * v, 1, "mean") ** 2,
                       [_rand(3, 2), _rand(3, 1)]),
    "bilinear": (lambda x1, x2, w, b: F.bilinear(x1 * x1, x2, w, b) ** 2, [_rand(2, 3), _rand(2, 2), _rand(2, 3, 2),
                                                                             _rand(1, 2)]),
    "unfold_fold": (lambda x: F.unfold(x * x, 2, paddings=1) ** 2
                    + F.fold(F.unfold(x, 2, strides=1), [3, 3], 2).sum() ** 2, [_rand(1, 1, 3, 3)]),
    "solve": (lambda a, b: pycoll.linalg.solve(a * a + pycoll.eye(3, dtype="float64") * 2, b) ** 2
              + pycoll.linalg.solve(a + pycoll.eye(3, dtype="float64") * 3, b[:, 0] * b[:, 1]).sum() ** 2,
              [_rand(3, 3) * 0.3, _rand(3, 2)]),
    "local_response_norm": (lambda x: F.local_response_norm(x * x, 3, alpha=0.5, beta=0.75, k=1.5) * x,
                            [_rand(1, 4, 2)]),
    "triu_tril": (lambda x: pycoll.triu(x * x, 1) ** 2 + pycoll.tril(x ** 3, -1), [_rand(3, 3)]),
    "gather_index_select": (lambda x: pycoll.gather(x * x, pycoll.to_tensor([2, 0, 2]), axis=1)
                            + pycoll.index_select(x, pycoll.to_tensor([1, 1, 0]), axis=1) ** 3, [_rand(2, 3)]),
}


@pytest.mark.parametrize("name", sorted(MORE_CASES))
def test_more_second_derivatives(name):
    fn, arrays = MORE_CASES[name]
    second_order_check(fn, arrays)


def test_an_op_without_a_rule_is_named():
    x = pycoll.to_tensor(_rand(3) + 2, stop_gradient=False)
    with pytest.raises(NotImplementedError, match="lgamma"):
        pycoll.grad(pycoll.lgamma(x).sum(), x, create_graph=True)
    a = pycoll.to_tensor(np.eye(3) * 2 + 0.1, stop_gradient=False)
    with pytest.raises(NotImplementedError, match="cholesky"):  # recorded through linalg_decomp.outputs
        pycoll.grad(pycoll.linalg.cholesky(a).sum(), a, create_graph=True)
    z = pycoll.to_tensor(_rand(3) + 1j * _rand(3), stop_gradient=False)
    with pytest.raises(NotImplementedError, match="complex"):
        pycoll.grad(pycoll.abs(z).sum(), z, create_graph=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_derivative(name):
    fn, arrays = CASES[name]
    second_order_check(fn, arrays)
    if len(arrays) > 1:  # the first gradient of input 0 only, differentiated to all of them
        second_order_check(fn, arrays, asked=[0])


CONV_CASES = {
    "conv2d_stride_pad_leaky": (lambda x, w, b: F.leaky_relu(F.conv2d(x, w, b, stride=2, padding=1), 0.2),
                                [_rand(2, 2, 5, 5), _rand(3, 2, 3, 3), _rand(3)]),
    "conv2d_groups_dilation_nhwc": (lambda x, w: F.conv2d(x, w, groups=2, dilation=2, data_format="NHWC") ** 2,
                                    [_rand(1, 5, 5, 4), _rand(4, 2, 2, 2)]),
    "conv1d_same": (lambda x, w: F.tanh(F.conv1d(x, w, padding="SAME")), [_rand(2, 2, 6), _rand(3, 2, 3)]),
    "conv3d": (lambda x, w, b: F.conv3d(x, w, b, padding=[1, 0, 1]) ** 2,
               [_rand(1, 2, 3, 3, 3), _rand(2, 2, 2, 2, 2), _rand(2)]),
}


def _running(c):
    return pycoll.to_tensor(np.zeros(c)), pycoll.to_tensor(np.ones(c))


CONV_CASES.update({
    "max_pool2d_padded": (lambda x: F.max_pool2d(x, 2, stride=1, padding=1) ** 2, [_rand(1, 2, 3, 3)]),
    "max_pool1d_ceil": (lambda x: F.max_pool1d(x * x, 2, ceil_mode=True), [_rand(2, 1, 5)]),
    "avg_pool2d_nhwc": (lambda x: F.avg_pool2d(x, 2, stride=1, padding=1, data_format="NHWC") ** 2,
                        [_rand(1, 3, 3, 2)]),
    "batch_norm_train": (lambda x, w, b: F.batch_norm(x, *_running(3), w, b, training=True) ** 2,
                         [_rand(4, 3, 2), _rand(3), _rand(3)]),
    "batch_norm_eval": (lambda x, w: F.batch_norm(x, pycoll.to_tensor(np.array([0.1, -0.2])),
                                                  pycoll.to_tensor(np.array([0.5, 2.0])), w) ** 2,
                        [_rand(3, 2), _rand(2)]),
    "group_norm": (lambda x, w, b: F.group_norm(x, 2, weight=w, bias=b) ** 2,
                   [_rand(2, 4, 3), _rand(4), _rand(4)]),
    "instance_norm": (lambda x: F.instance_norm(x) ** 3, [_rand(2, 3, 2, 2)]),
    "group_norm_nhwc": (lambda x: F.group_norm(x, 3, data_format="NHWC") ** 3, [_rand(2, 2, 2, 3)]),
})


@pytest.mark.parametrize("name", sorted(CONV_CASES))
def test_conv_pool_norm_second_derivative(name):
    fn, arrays = CONV_CASES[name]
    second_order_check(fn, arrays)
    second_order_check(fn, arrays, asked=[0])


def _params(rng, *shapes):
    return [pycoll.to_tensor(rng.randn(*s) * 0.5, stop_gradient=False) for s in shapes]


def test_pinn_laplacian_residual_matches_paddle():
    """A physics-informed loss (the Laplacian of a tanh MLP through two create_graph grads, then
    backward to the weights); paddle 3.3.1 ran the same program (numbers below)."""
    rng = np.random.RandomState(0)
    W1, b1, W2, b2, W3, b3 = _params(rng, (2, 16), (16,), (16, 16), (16,), (16, 1), (1,))
    xy = pycoll.to_tensor(rng.rand(8, 2), stop_gradient=False)

    def net(z):
        h = pycoll.tanh(F.linear(z, W1, b1))
        return F.linear(pycoll.tanh(F.linear(h, W2, b2)), W3, b3)
    u = net(xy)
    (du,) = pycoll.grad(u, xy, grad_outputs=pycoll.ones_like(u), create_graph=True)
    (dux,) = pycoll.grad(du[:, 0:1], xy, grad_outputs=pycoll.ones_like(u), create_graph=True)
    (duy,) = pycoll.grad(du[:, 1:2], xy, grad_outputs=pycoll.ones_like(u), create_graph=True)
    loss = ((dux[:, 0:1] + duy[:, 1:2] - pycoll.sin(xy[:, 0:1])) ** 2).mean() + (u ** 2).mean()
    loss.backward()
    np.testing.assert_allclose(loss.numpy(), 9.294478760719832, rtol=1e-12)
    np.testing.assert_allclose(W1.grad.numpy()[:, :3], [[5.729477813082539, -0.031101066314119963, -1.4284052256317232],
                                                        [5.410376619411988, 0.9640665216073456, -9.071323069505063]],
                               rtol=1e-10)
    np.testing.assert_allclose(W3.grad.numpy()[:3, 0], [-0.738204745856798, -13.619896368832945, -2.40649264007687],
                               rtol=1e-10)
    assert xy.grad is not None and du.stop_gradient is False


def test_wgan_gradient_penalty_reaches_the_conv_weights_as_paddle():
    """WGAN-GP: the penalty on the critic's input gradient, backpropagated to the conv weights
    (mixed second derivatives through conv2d and leaky_relu); paddle 3.3.1's numbers, which also
    equal central differences of the loss."""
    rng = np.random.RandomState(0)
    _params(rng, (2, 16), (16,), (16, 16), (16,), (16, 1), (1,))  # the PINN's draws come first
    rng.rand(8, 2)
    K1, c1, K2, c2, L, b = _params(rng, (4, 1, 3, 3), (4,), (4, 4, 3, 3), (4,), (36, 1), (1,))

    def critic(x):
        h = F.leaky_relu(F.conv2d(x, K1, c1, stride=1, padding=1), 0.2)
        h = F.leaky_relu(F.conv2d(h, K2, c2, stride=2), 0.2)
        return F.linear(h.reshape([h.shape[0], -1]), L, b)
    real, fake = pycoll.to_tensor(rng.randn(3, 1, 8, 8)), pycoll.to_tensor(rng.randn(3, 1, 8, 8))
    alpha = pycoll.to_tensor(rng.rand(3, 1, 1, 1))
    mixed = alpha * real + (1 - alpha) * fake
    mixed.stop_gradient = False
    d = critic(mixed)
    (g,) = pycoll.grad(d, mixed, grad_outputs=pycoll.ones_like(d), create_graph=True)
    gp = ((g.reshape([3, -1]).norm(2, axis=1) - 1) ** 2).mean()
    (critic(fake).mean() - critic(real).mean() + 10 * gp).backward()
    np.testing.assert_allclose(gp.numpy(), 23.592662569221734, rtol=1e-12)
    np.testing.assert_allclose(K1.grad.numpy()[:, 0, 0, 0],
                               [31.721652233129003, -8.824097346096206, 8.150466362021659, 36.65674108210115],
                               rtol=1e-10)
    np.testing.assert_allclose(K2.grad.numpy()[0, :2, 1, 1], [-7.271544330147831, 7.130416910496465], rtol=1e-10)
    np.testing.assert_allclose(L.grad.numpy()[:3, 0], [1.7555947943484553, -36.512863127147305, 6.943252470954391],
                               rtol=1e-10)


def test_maml_inner_step_matches_paddle():
    """MAML: the query loss after one differentiable SGD step on the support loss, backpropagated
    to the initial weights (paddle 3.3.1's numbers)."""
    rng = np.random.RandomState(0)
    _params(rng, (2, 16), (16,), (16, 16), (16,), (16, 1), (1,))
    rng.rand(8, 2)
    _params(rng, (4, 1, 3, 3), (4,), (4, 4, 3, 3), (4,), (36, 1), (1,))
    rng.randn(3, 1, 8, 8), rng.randn(3, 1, 8, 8), rng.rand(3, 1, 1, 1)
    ps = _params(rng, (3, 8), (8,), (8, 2), (2,))
    xs, ys, xq, yq = (pycoll.to_tensor(rng.randn(5, k)) for k in (3, 2, 3, 2))

    def f(x, p):
        return F.linear(F.relu(F.linear(x, p[0], p[1])), p[2], p[3])
    grads = pycoll.grad(F.mse_loss(f(xs, ps), ys), ps, create_graph=True)
    query = F.mse_loss(f(xq, [p - 0.1 * g for p, g in zip(ps, grads)]), yq)
    query.backward()
    np.testing.assert_allclose(query.numpy(), 5.817213842297155, rtol=1e-12)
    np.testing.assert_allclose(ps[0].grad.numpy()[:, :3], [[0.47971459736128363, 0.02310046336903617, 0.9843142355957658],
                                                           [-0.3068438777902269, -0.27253025642961076, 0.09357181598933795],
                                                           [0.3885211903940837, 0.17656866109333705, -0.14201037839969038]],
                               rtol=1e-10)
    np.testing.assert_allclose(ps[1].grad.numpy()[:3], [-0.5940126517871236, -0.19747637837825258, 0.12496157185322265],
                               rtol=1e-10)


def test_third_derivative_of_tanh():
    x = pycoll.to_tensor(np.linspace(-1.5, 1.5, 7), stop_gradient=False)
    (d1,) = pycoll.grad(pycoll.tanh(x).sum(), x, create_graph=True)
    (d2,) = pycoll.grad(d1.sum(), x, create_graph=True)
    (d3,) = pycoll.grad(d2.sum(), x)
    t = np.tanh(x.numpy())
    np.testing.assert_allclose(d1.numpy(), 1 - t * t, rtol=1e-13)
    np.testing.assert_allclose(d2.numpy(), -2 * t * (1 - t * t), rtol=1e-13)
    np.testing.assert_allclose(d3.numpy(), (1 - t * t) * (6 * t * t - 2), rtol=1e-12, atol=1e-14)


def test_create_graph_leaves_grad_alone_and_keeps_the_graph():
    w = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    y = (w ** 3).sum()
    (g,) = pycoll.grad(y, w, create_graph=True)
    assert w.grad is None and g.stop_gradient is False
    np.testing.assert_allclose(g.numpy(), [3.0, 12.0])
    y.backward()  # the graph is still there: create_graph keeps it
    np.testing.assert_allclose(w.grad.numpy(), [3.0, 12.0])
    (g * g).sum().backward()  # d/dw sum(9 w^4) = 36 w^3, added to .grad
    np.testing.assert_allclose(w.grad.numpy(), [3.0 + 36.0, 12.0 + 288.0])


def test_constant_gradient_is_marked_like_paddle():
    """A gradient that does not depend on the inputs: stop_gradient False (paddle's), and a
    later grad finds the input unused."""
    x = pycoll.to_tensor([1.0, -2.0], stop_gradient=False)
    (g,) = pycoll.grad((x * 2).sum(), x, create_graph=True)
    assert g.stop_gradient is False
    np.testing.assert_allclose(g.numpy(), [2.0, 2.0])
    assert pycoll.grad((g * g).sum(), x, allow_unused=True) == [None]


@pytest.mark.parametrize("name, fn", [("relu", F.relu), ("leaky_relu", lambda x: F.leaky_relu(x, 0.1)),
                                      ("abs", pycoll.abs), ("relu6", F.relu6), ("hardtanh", F.hardtanh)])
def test_piecewise_linear_gradient_depends_on_its_input_with_zeros(name, fn):
    """paddle 3.3.1 (relu, leaky_relu, abs; torch for all): the second grad through a
    piecewise-linear op reaches its input and is zero there; a leaf and an op's output alike."""
    for make in (lambda x: x, lambda x: x * 1.0):
        x = pycoll.to_tensor([-1.0, 0.5, 2.0], stop_gradient=False)
        (g,) = pycoll.grad((fn(make(x)) * pycoll.to_tensor([1.0, 2.0, 3.0])).sum(), x, create_graph=True)
        (h,) = pycoll.grad((g * g).sum(), x)
        assert h.numpy().tolist() == [0.0, 0.0, 0.0], name


def test_intermediate_input_and_differentiable_seed():
    x = pycoll.to_tensor([0.5, 1.5], stop_gradient=False)
    h = x * x
    v = pycoll.to_tensor([1.0, 3.0], stop_gradient=False)
    (gh,) = pycoll.grad(pycoll.sin(h), h, grad_outputs=v, create_graph=True)  # v * cos(h)
    (gx, gv) = pycoll.grad(gh.sum(), [x, v])
    xs, vs = x.numpy(), v.numpy()
    np.testing.assert_allclose(gh.numpy(), vs * np.cos(xs ** 2), rtol=1e-13)
    np.testing.assert_allclose(gx.numpy(), -vs * np.sin(xs ** 2) * 2 * xs, rtol=1e-13)
    np.testing.assert_allclose(gv.numpy(), np.cos(xs ** 2), rtol=1e-13)


def test_only_the_paths_to_the_inputs_need_rules():
    """An op without a rule off the path to the inputs asked for is no obstacle; on it, the error
    names the op."""
    x = pycoll.to_tensor([0.3, 0.7], stop_gradient=False)
    w = pycoll.to_tensor([[1.0, 2.0], [3.0, 4.0]], stop_gradient=False)
    normed = pycoll.lgamma(w + 3).sum(axis=0)  # no rule for it yet
    y = (pycoll.tanh(x) * normed).sum()
    (gx,) = pycoll.grad(y, x, create_graph=True)
    np.testing.assert_allclose(gx.numpy(), (1 - np.tanh([0.3, 0.7]) ** 2) * normed.numpy(), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="lgamma"):
        pycoll.grad(y, w, create_graph=True)


def test_a_write_after_the_forward_is_caught():
    x = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    h = x * 1.0
    y = (pycoll.exp(h) * h).sum()
    with pycoll.no_grad():
        h.add_(pycoll.to_tensor([1.0, 1.0]))
    with pytest.raises(RuntimeError, match="in place|inplace|modified"):
        pycoll.grad(y, x, create_graph=True)


def _nested_backward_names():
    """{qualified name of each nested function in pycoll: the modules defining it}."""
    root = pathlib.Path(pycoll.__file__).parent
    found = {}
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text())
        tops = [(f.name, f) for f in tree.body if isinstance(f, ast.FunctionDef)]
        tops += [(f"{c.name}.{f.name}", f) for c in tree.body if isinstance(c, ast.ClassDef)
                 for f in c.body if isinstance(f, ast.FunctionDef)]
        for name, top in tops:
            for node in ast.walk(top):
                if node is top:
                    continue
                if isinstance(node, ast.FunctionDef):
                    found.setdefault(f"{name}.<locals>.{node.name}", set()).add(str(path))
                elif isinstance(node, ast.Lambda):
                    found.setdefault(f"{name}.<locals>.<lambda>", set()).add(str(path))
    return found


def test_every_rule_names_one_backward_in_pycoll():
    """A rule is found by its backward's qualified name: each must exist, in one module only
    (the op factories name theirs after the op: 'sin.<locals>.backward')."""
    found = _nested_backward_names()
    factory_made = {f"{n}.<locals>.backward" for n in  # unary_ops' and binary_ops' families, nn's _pointwise ops
                    "sin cos tan asin acos atan sinh cosh asinh acosh atanh log1p log2 log10 expm1 rsqrt reciprocal "
                    "deg2rad rad2deg erf erfinv ceil floor trunc sign round neg frac "
                    "atan2 hypot logaddexp fmax fmin heaviside "
                    "relu6 hardtanh hardshrink softshrink thresholded_relu hardsigmoid "
                    "mish selu celu softsign log_sigmoid tanhshrink hardswish "
                    "i0 i1 i0e i1e sinc".split()}  # bessel_ops' and special_ops' rules, on unary_ops' family
    for name in RULES:
        if name in factory_made:
            continue
        assert name in found, f"rule for {name}: no such function in pycoll"
        assert len(found[name]) == 1, f"rule for {name}: the name is defined in {sorted(found[name])}"


def test_hooks_on_the_path_run_recorded():
    """A hook on an intermediate tensor runs in a create_graph grad and what it computes is
    differentiated too; retain_grads changes nothing (paddle 3.3.1's numbers, same program)."""
    rs = np.random.RandomState(0)
    X, W = rs.randn(3, 4), rs.randn(4, 2)
    got = {}
    for mode in ("none", "hook", "retain_grads"):
        x, w = pycoll.to_tensor(X.copy(), stop_gradient=False), pycoll.to_tensor(W.copy(), stop_gradient=False)
        h = pycoll.matmul(x, w)
        if mode == "hook":
            h.register_hook(lambda g: g * 2.0)
        if mode == "retain_grads":
            h.retain_grads()
        (g,) = pycoll.grad((pycoll.tanh(h) ** 2).sum(), x, create_graph=True)
        (gg,) = pycoll.grad((g ** 2).sum(), w)
        got[mode] = g.numpy().ravel()[:3], gg.numpy().ravel()[:3]
    np.testing.assert_allclose(got["none"][0], [-0.02148782, -0.06720256, 0.0502185], rtol=1e-6)
    np.testing.assert_allclose(got["none"][1], [0.75840025, -2.4664744, -0.33335206], rtol=1e-6)
    np.testing.assert_allclose(got["hook"][0], [-0.04297564, -0.13440513, 0.100437], rtol=1e-6)
    np.testing.assert_allclose(got["hook"][1], [3.02332497, -17.53408503, -3.53573746], rtol=1e-6)
    np.testing.assert_allclose(got["retain_grads"][1], got["none"][1], rtol=1e-12)


class _Cube(pycoll.autograd.PyLayer):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensor()
        return dy * 3 * x * x


def test_py_layer_backward_is_differentiated():
    """A PyLayer whose backward is written in pycoll ops: its gradient is differentiated again."""
    x = pycoll.to_tensor([0.5, -2.0], stop_gradient=False)
    (g,) = pycoll.grad(_Cube.apply(x).sum(), x, create_graph=True)
    (h,) = pycoll.grad(g.sum(), x)
    np.testing.assert_allclose(g.numpy(), 3 * x.numpy() ** 2, rtol=1e-6)
    np.testing.assert_allclose(h.numpy(), 6 * x.numpy(), rtol=1e-6)


class _Exp(pycoll.autograd.PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = pycoll.exp(x)
        ctx.save_for_backward(y)  # its own output: backward's use of it is differentiated too
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensor()
        return dy * y


def test_py_layer_saving_its_output_differentiates_through_it():
    """d/dx (x e^x) = e^x (1 + x), again e^x (2 + x) (paddle 3.3.1 gives the same): the saved
    output is the output in the graph, not a constant copy; and a graph dropped unused goes at
    once (no reference cycle through the saved output)."""
    x = pycoll.to_tensor([1.0, 2.0], dtype="float64", stop_gradient=False)
    y = _Exp.apply(x)
    (g,) = pycoll.grad((y * x).sum(), x, create_graph=True)
    (h,) = pycoll.grad(g.sum(), x)
    np.testing.assert_allclose(g.numpy(), np.exp([1.0, 2.0]) * [2.0, 3.0], rtol=1e-12)
    np.testing.assert_allclose(h.numpy(), np.exp([1.0, 2.0]) * [3.0, 4.0], rtol=1e-12)
    (h,) = pycoll.grad(pycoll.grad(_Exp.apply(x).sum(), x, create_graph=True)[0].sum(), x)
    np.testing.assert_allclose(h.numpy(), np.exp([1.0, 2.0]), rtol=1e-12)
    gc.collect()
    gc.disable()
    try:
        y = _Exp.apply(x)
        node = weakref.ref(y.grad_node)
        del y  # a forward whose graph is dropped unused
        assert node() is None
    finally:
        gc.enable()


@pytest.mark.gpu
def test_second_derivatives_on_the_gpu_equal_the_cpu_run():
    """A conv + pooling + norm critic's gradient penalty, backpropagated, on CuPy against NumPy."""
    rng = np.random.RandomState(5)
    arrays = [rng.randn(2, 1, 6, 6), rng.randn(3, 1, 3, 3), rng.randn(3), rng.randn(12, 1)]
    results = []
    for place in ("cpu", "gpu:0"):
        x, k, c, w = (pycoll.to_tensor(a, place=place, stop_gradient=False) for a in arrays)
        h = F.max_pool2d(F.leaky_relu(F.conv2d(x, k, c, padding=1), 0.2), 2, stride=2)
        h = F.group_norm(h, 3)
        d = F.linear(pycoll.tanh(h).reshape([2, -1])[:, :12], w)
        (g,) = pycoll.grad(d, x, grad_outputs=pycoll.ones_like(d), create_graph=True)
        ((g.reshape([2, -1]).norm(2, axis=1) - 1) ** 2).mean().backward()
        results.append([t.numpy() for t in (g, k.grad, c.grad, w.grad, x.grad)])
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def test_hard_boundary_condition_by_setitem():
    """A PINN's hard boundary: u[:, 0] = g(x) written into the network's output, then
    differentiated twice (paddle refuses, having no double grad for set_value)."""
    def fn(x, v):
        u = x * x * x
        u[:, 0] = v * v
        return u
    second_order_check(fn, [_rand(3, 2), _rand(3)])
    second_order_check(fn, [_rand(3, 2), _rand(3)], asked=[0])
