"""paddle 3.3.1 APIs built as composites of pycoll's differentiable ops: the stacking ops,
block_diag, cartesian_prod, combinations, positive / isneginf / isposinf / isreal, argwhere,
take_along_dim, pdist, matrix_transpose, linalg.diagonal / matmul, the mode-named padding layers,
HuberLoss, Unflatten, rrelu / RReLU, dropout1d, rms_norm and swiglu. Expected numbers marked
"paddle" were measured on paddle 3.3.1 (CPU) with the same inputs."""
import itertools
import math

import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
import pycoll.nn.functional as F
from numeric import central_grad


def T(v, grad=False, dtype="float64"):
    return pycoll.to_tensor(np.asarray(v, dtype=dtype), stop_gradient=not grad)


def test_stacks_shapes_and_values():
    a, b, m = T([1, 2, 3]), T([4, 5, 6]), T([[1, 2], [3, 4]])
    # paddle: vstack [2,3]/[4,2], hstack [6]/[2,4], dstack [1,3,2]/[2,2,2], column_stack [3,2]/[2,4]
    expected = {"vstack": ([2, 3], [4, 2]), "hstack": ([6], [2, 4]), "dstack": ([1, 3, 2], [2, 2, 2]),
                "column_stack": ([3, 2], [2, 4]), "row_stack": ([2, 3], [4, 2])}
    for fn, (s1, s2) in expected.items():
        assert getattr(pycoll, fn)([a, b]).shape == s1, fn
        assert getattr(pycoll, fn)([m, m]).shape == s2, fn
    np.testing.assert_array_equal(pycoll.vstack([a, b]).numpy(), np.vstack([a.numpy(), b.numpy()]))
    np.testing.assert_array_equal(pycoll.dstack([m, m]).numpy(), np.dstack([m.numpy(), m.numpy()]))
    out = pycoll.column_stack([a, T([[7], [8], [9]])]).numpy()
    np.testing.assert_array_equal(out, [[1, 7], [2, 8], [3, 9]])  # paddle
    with pytest.raises(TypeError, match="x must be a non-empty list"):
        pycoll.vstack(a)


def test_stack_gradient_reaches_each_input():
    a, m = T([1, 2], grad=True), T([[1, 2], [3, 4]], grad=True)
    w = T([[1, 2], [3, 4], [5, 6]])
    (pycoll.vstack([a, m]) * w).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [1, 2])
    np.testing.assert_array_equal(m.grad.numpy(), [[3, 4], [5, 6]])


def test_block_diag_values_gradient_and_errors():
    blocks = [T(5.0, grad=True), T([1, 2], grad=True), T([[1, 2], [3, 4]], grad=True)]
    out = pycoll.block_diag(blocks)
    np.testing.assert_array_equal(out.numpy(), [[5, 0, 0, 0, 0], [0, 1, 2, 0, 0],
                                                [0, 0, 0, 1, 2], [0, 0, 0, 3, 4]])  # paddle
    w = np.arange(20.0).reshape(4, 5)
    (out * T(w)).sum().backward()
    assert float(blocks[0].grad) == w[0, 0]
    np.testing.assert_array_equal(blocks[1].grad.numpy(), w[1, 1:3])
    np.testing.assert_array_equal(blocks[2].grad.numpy(), w[2:, 3:])
    with pytest.raises(ValueError, match=r"inputs\[0\] must be 0-D, 1-D or 2-D"):
        pycoll.block_diag([T(np.ones((1, 1, 1)))])
    with pytest.raises(TypeError, match="share one dtype"):
        pycoll.block_diag([T([1.0]), T([1], dtype="int64")])


def test_cartesian_prod_and_combinations():
    out = pycoll.cartesian_prod([T([1, 2], dtype="int64"), T([3, 4, 5], dtype="int64")])
    np.testing.assert_array_equal(out.numpy(), [[1, 3], [1, 4], [1, 5], [2, 3], [2, 4], [2, 5]])  # paddle
    np.testing.assert_array_equal(pycoll.cartesian_prod([T([1, 2])]).numpy(), [1, 2])  # paddle: the input
    with pytest.raises(ValueError, match=r"x\[1\] must be 1-D"):
        pycoll.cartesian_prod([T([1.0]), T([[1.0]])])
    x = T([1, 2, 3, 4], grad=True)
    c = pycoll.combinations(x, 3)
    np.testing.assert_array_equal(c.numpy(), [[1, 2, 3], [1, 2, 4], [1, 3, 4], [2, 3, 4]])  # paddle
    c.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3, 3, 3, 3])  # each element sits in 3 of the 4 rows
    out = pycoll.combinations(T([1, 2, 3], dtype="int64"), 2, with_replacement=True)
    np.testing.assert_array_equal(out.numpy(), [[1, 1], [1, 2], [1, 3], [2, 2], [2, 3], [3, 3]])  # paddle
    assert pycoll.combinations(x, 0).shape == [0] and pycoll.combinations(x, 5).shape == [0, 5]  # paddle
    with pytest.raises(ValueError, match="r must be a non-negative int, got -1"):
        pycoll.combinations(x, -1)


@pytest.mark.parametrize("with_replacement", [False, True])
def test_combinations_come_in_itertools_order_for_every_small_size(with_replacement):
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    for n in range(1, 7):
        x = pycoll.arange(n, dtype="int64") * 10
        for r in range(1, 5):
            expected = [[10 * i for i in row] for row in pick(range(n), r)]
            got = pycoll.combinations(x, r, with_replacement=with_replacement)
            assert got.numpy().tolist() == expected and got.shape == [len(expected), r], (n, r)


def test_value_tests_and_positive():
    x = T([-np.inf, -1.0, 0.0, np.inf, np.nan])
    assert pycoll.isneginf(x).numpy().tolist() == [True, False, False, False, False]  # paddle
    assert pycoll.isposinf(x).numpy().tolist() == [False, False, False, True, False]  # paddle
    assert pycoll.isneginf(T([1, 2], dtype="int64")).numpy().tolist() == [False, False]  # paddle
    z = pycoll.to_tensor(np.array([1 + 0j, 1 + 2j, 3j]))
    assert pycoll.isreal(z).numpy().tolist() == [True, False, False]  # paddle
    assert pycoll.isreal(T([1.0, 2.0])).numpy().tolist() == [True, True]
    y = T([1.0, -2.0], grad=True)
    pycoll.positive(y).sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [1, 1])
    with pytest.raises(TypeError, match="positive: x must not be a bool"):
        pycoll.positive(pycoll.to_tensor([True]))
    with pytest.raises(TypeError, match="isneginf: x must be a real tensor"):
        pycoll.isneginf(z)


def test_argwhere_take_along_dim_and_linalg_names():
    out = pycoll.argwhere(T([[1, 0], [0, 3]], dtype="int64"))
    assert out.numpy().tolist() == [[0, 0], [1, 1]] and str(out.dtype).endswith("int64")  # paddle
    m = T([[1, 2], [3, 4]], grad=True)
    picked = pycoll.take_along_dim(m, pycoll.to_tensor(np.array([[1], [0]])), 1)
    np.testing.assert_array_equal(picked.numpy(), [[2], [3]])  # paddle
    picked.sum().backward()
    np.testing.assert_array_equal(m.grad.numpy(), [[0, 1], [1, 0]])
    assert pycoll.matrix_transpose(T(np.zeros((1, 2, 3)))).shape == [1, 3, 2]  # paddle
    assert pycoll.linalg.matrix_transpose is pycoll.matrix_transpose
    with pytest.raises(ValueError, match="matrix_transpose: x must have at least 2 dimensions"):
        pycoll.matrix_transpose(T([1.0]))
    diag = pycoll.linalg.diagonal(T(np.arange(8.0).reshape(2, 2, 2)))
    np.testing.assert_array_equal(diag.numpy(), [[0, 6], [1, 7]])  # paddle
    np.testing.assert_array_equal(pycoll.linalg.matmul(m, m).numpy(), [[7, 10], [15, 22]])  # paddle


# paddle 3.3.1: pdist(x, p) and the gradient of its sum, x below
_PDIST_X = [[0.0, 1.0], [2.0, 3.0], [5.0, 1.0], [1.0, -1.0]]
_PDIST = {
    2.0: ([2.8284270763397217, 5.0, 2.2360680103302, 3.605551242828369, 4.123105525970459, 4.4721360206604],
          [[-2.154320478439331, 0.18732041120529175], [0.11759209632873535, 2.2319495677948],
           [2.72647762298584, -0.10748660564422607], [-0.6897492408752441, -2.3117833137512207]]),
    1.0: ([4, 5, 3, 5, 5, 6], [[-3, 0], [1, 3], [3, 0], [-1, -3]]),
    0.0: ([2, 1, 2, 2, 2, 2], [[0, 0], [0, 0], [0, 0], [0, 0]]),
    3.0: ([2.5198421478271484, 5.000000476837158, 2.0800838470458984, 3.271066427230835, 4.020725727081299,
           4.160167694091797],
          [[-1.8610807657241821, 0.2945212125778198], [-0.14931344985961914, 1.993513822555542],
           [2.7656126022338867, -0.1427156776189804], [-0.7552186250686646, -2.1453192234039307]]),
    float("inf"): ([2, 5, 2, 3, 4, 4], [[-2, 0], [0, 2], [3, 0], [-1, -2]]),
}


@pytest.mark.parametrize("p", list(_PDIST))
def test_pdist_matches_paddle(p):
    x = T(_PDIST_X, grad=True, dtype="float32")
    out = F.pdist(x, p)
    assert pycoll.pdist is F.pdist
    (g,) = pycoll.grad(out.sum(), x)
    np.testing.assert_allclose(out.numpy(), _PDIST[p][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g.numpy(), _PDIST[p][1], rtol=1e-5, atol=1e-5)


def test_pdist_errors():
    with pytest.raises(ValueError, match="pdist: x must be 2-D"):
        pycoll.pdist(T([1.0, 2.0]))
    with pytest.raises(ValueError, match="pdist: p must be a non-negative number"):
        pycoll.pdist(T([[1.0], [2.0]]), -1)


def test_mode_pad_layers_match_paddle():
    x1 = T([[[1, 2, 3]]])
    expected1 = {nn.ZeroPad1D: [0, 0, 1, 2, 3, 0], nn.ReflectionPad1D: [3, 2, 1, 2, 3, 2],
                 nn.ReplicationPad1D: [1, 1, 1, 2, 3, 3], nn.CircularPad1D: [2, 3, 1, 2, 3, 1]}  # paddle
    for layer, want in expected1.items():
        np.testing.assert_array_equal(layer([2, 1])(x1).numpy().reshape(-1), want, err_msg=layer.__name__)
    np.testing.assert_array_equal(nn.ConstantPad1D(1, 7.0)(x1).numpy(), [[[7, 1, 2, 3, 7]]])  # paddle
    np.testing.assert_array_equal(nn.ConstantPad1D([1, 0], 7.0, data_format="NLC")(x1).numpy(),
                                  [[[7, 7, 7], [1, 2, 3]]])  # paddle
    x2 = T(np.arange(6.0).reshape(1, 1, 2, 3))
    expected2 = {nn.ReflectionPad2D: [[4, 3, 4, 5, 4], [1, 0, 1, 2, 1], [4, 3, 4, 5, 4]],
                 nn.ReplicationPad2D: [[0, 0, 1, 2, 2], [0, 0, 1, 2, 2], [3, 3, 4, 5, 5]],
                 nn.CircularPad2D: [[5, 3, 4, 5, 3], [2, 0, 1, 2, 0], [5, 3, 4, 5, 3]]}  # paddle
    for layer, want in expected2.items():
        np.testing.assert_array_equal(layer([1, 1, 1, 0])(x2).numpy()[0, 0], want, err_msg=layer.__name__)
    assert float(nn.ConstantPad2D(1, -1.0)(x2).sum()) == 1.0  # paddle
    x3 = T(np.arange(8.0).reshape(1, 1, 2, 2, 2))
    expected3 = {  # paddle, padding [1, 0, 0, 1, 1, 0]
        nn.ZeroPad3D: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 2, 3, 0, 0, 0, 0, 4, 5, 0, 6, 7, 0, 0, 0],
        nn.ReflectionPad3D: [5, 4, 5, 7, 6, 7, 5, 4, 5, 1, 0, 1, 3, 2, 3, 1, 0, 1, 5, 4, 5, 7, 6, 7, 5, 4, 5],
        nn.ReplicationPad3D: [0, 0, 1, 2, 2, 3, 2, 2, 3, 0, 0, 1, 2, 2, 3, 2, 2, 3, 4, 4, 5, 6, 6, 7, 6, 6, 7],
        nn.CircularPad3D: [5, 4, 5, 7, 6, 7, 5, 4, 5, 1, 0, 1, 3, 2, 3, 1, 0, 1, 5, 4, 5, 7, 6, 7, 5, 4, 5]}
    for layer, want in expected3.items():
        np.testing.assert_array_equal(layer([1, 0, 0, 1, 1, 0])(x3).numpy().reshape(-1), want,
                                      err_msg=layer.__name__)
    out = nn.ConstantPad3D(1, 2.0)(x3)
    assert out.shape == [1, 1, 4, 4, 4] and float(out.sum()) == 140.0  # paddle
    with pytest.raises(TypeError, match="ConstantPad2D: value must be a number"):
        nn.ConstantPad2D(1, "x")


def test_reflection_pad_gradient():
    x = T([[[1.0, 2.0, 3.0]]], grad=True)
    nn.ReflectionPad1D([2, 1])(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[[1, 3, 2]]])  # [3, 2, 1, 2, 3, 2]: counts per source


@pytest.mark.parametrize("mode, np_mode", [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")])
@pytest.mark.parametrize("shape, pad, data_format", [((2, 3, 7), [3, 2], "NCL"), ((2, 5, 6, 3), [2, 1, 3, 4], "NHWC"),
                                                     ((1, 2, 4, 5, 3), [1, 2, 3, 0, 2, 2], "NCDHW")])
def test_pad_gradient_adds_each_padded_cell_to_the_cell_it_copies(mode, np_mode, shape, pad, data_format):
    """Against np.add.at over the cells np.pad copies (the backward adds run by run)."""
    rng = np.random.default_rng(0)
    x = T(rng.standard_normal(shape), grad=True)
    out = F.pad(x, pad, mode=mode, data_format=data_format)
    w = rng.standard_normal(out.shape)
    (out * T(w)).sum().backward()
    spatial = list(range(2, len(shape))) if data_format.startswith("NC") else list(range(1, len(shape) - 1))
    widths = [(0, 0)] * len(shape)
    for i, axis in enumerate(spatial[::-1]):
        widths[axis] = (pad[2 * i], pad[2 * i + 1])
    copied = np.pad(np.arange(math.prod(shape)).reshape(shape), widths, mode=np_mode)
    want = np.zeros(math.prod(shape))
    np.add.at(want, copied.reshape(-1), w.reshape(-1))
    np.testing.assert_allclose(x.grad.numpy(), want.reshape(shape), rtol=1e-12)


def test_circular_and_replicate_pads_wider_than_the_axis_add_every_copy():
    x = T([[[1.0, 2.0]]], grad=True)
    (F.pad(x, [3, 4], mode="circular") * T(np.arange(9.0))).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[[1 + 3 + 5 + 7, 0 + 2 + 4 + 6 + 8]]])  # wrap: 1, 0, 1, 0, ...
    x.clear_grad()
    (F.pad(x, [3, 4], mode="replicate") * T(np.arange(9.0))).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[[0 + 1 + 2 + 3, 4 + 5 + 6 + 7 + 8]]])


def test_huber_loss_and_unflatten():
    assert nn.HuberLoss is nn.SmoothL1Loss  # paddle's alias
    loss = nn.HuberLoss(delta=0.5)(T([0.0, 1.0, 3.0]), T([0.2, 0.0, 0.0]))
    np.testing.assert_allclose(float(loss), 0.59, rtol=1e-6)  # paddle
    assert nn.Unflatten(2, [3, 1])(T(np.ones((2, 3, 3)))).shape == [2, 3, 3, 1]  # paddle
    with pytest.raises(ValueError):
        nn.Unflatten(1, [2, 2])(T(np.ones((2, 3))))


def test_rrelu_eval_training_and_errors():
    x = T([[-1.0, 2.0, -3.0]])
    np.testing.assert_allclose(F.rrelu(x, 0.1, 0.3, training=False).numpy(), [[-0.2, 2.0, -0.6]])  # paddle
    layer = nn.RReLU(0.1, 0.3)
    layer.eval()
    np.testing.assert_allclose(layer(x).numpy(), [[-0.2, 2.0, -0.6]])
    pycoll.seed(3)
    xt = T(-np.ones(2000), grad=True)
    layer.train()
    out = layer(xt)
    slopes = -out.numpy()
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3 and abs(slopes.mean() - 0.2) < 0.01
    assert len(np.unique(slopes)) > 1000  # one draw per element
    out.sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), slopes)  # d(slope * x)/dx = slope
    assert float(F.rrelu(T([2.0]), training=True)) == 2.0
    for lower, upper, what in [(0.5, 0.3, "upper must be >= lower"), (-0.1, 0.3, "lower must be in"),
                               (0.1, 1.5, "upper must be in")]:
        with pytest.raises(ValueError, match=what):
            F.rrelu(x, lower, upper)


def test_dropout1d_drops_whole_channels():
    pycoll.seed(1)
    out = F.dropout1d(T(np.ones((4, 6, 5))), 0.5).numpy()
    per_channel = out.reshape(24, 5)
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert all(len(set(row)) == 1 for row in per_channel)  # a channel is kept or dropped whole
    assert 0 < (per_channel[:, 0] == 0).sum() < 24
    unbatched = F.dropout1d(T(np.ones((6, 5))), 0.5).numpy()
    assert all(len(set(row)) == 1 for row in unbatched)
    np.testing.assert_array_equal(F.dropout1d(T(np.ones((2, 3))), 0.5, training=False).numpy(), np.ones((2, 3)))
    with pytest.raises(ValueError, match="dropout1d: input must be 2-D"):
        F.dropout1d(T([1.0, 2.0]))


def test_swiglu_matches_paddle():
    x = T([[1.0, -2.0, 3.0, 0.5]], grad=True, dtype="float32")
    out = F.swiglu(x)
    (g,) = pycoll.grad(out.sum(), x)
    np.testing.assert_allclose(out.numpy(), [[2.193175792694092, -0.11920291930437088]], rtol=1e-6)  # paddle
    np.testing.assert_allclose(g.numpy(), [[2.7830116748809814, -0.045392125844955444, 0.7310585975646973,
                                            -0.23840583860874176]], rtol=1e-5)  # paddle
    np.testing.assert_allclose(F.swiglu(T([1.0, 2.0]), T([1.0, 2.0])).numpy(), [0.7310586, 3.5231881],
                               rtol=1e-6)  # paddle's docstring
    with pytest.raises(ValueError, match="swiglu: with y None"):
        F.swiglu(T([1.0, 2.0, 3.0]))


def test_rms_norm_values_and_gradient():
    # paddle 3.3.1 has no CPU kernel for rms_norm: compared with NumPy by hand
    xv = np.array([[1.0, -2.0, 3.0], [-0.5, 0.25, 4.0]])
    wv = np.array([1.0, 2.0, 0.5])

    def ref(a, w=wv):
        return a / np.sqrt((a * a).mean(-1, keepdims=True) + 1e-5) * w

    x, w = T(xv, grad=True), T(wv, grad=True)
    out, inv = F.rms_norm(x, [3], w)
    np.testing.assert_allclose(out.numpy(), ref(xv), rtol=1e-12)
    np.testing.assert_allclose(inv.numpy(), 1 / np.sqrt((xv * xv).mean(-1) + 1e-5), rtol=1e-6)
    assert inv.shape == [2] and str(inv.dtype).endswith("float32")
    gx, gw = pycoll.grad((out * out).sum(), [x, w])
    np.testing.assert_allclose(gx.numpy(), central_grad(lambda a: ref(a) ** 2, xv), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gw.numpy(), central_grad(lambda v: ref(xv, v) ** 2, wv), rtol=1e-6, atol=1e-8)
    out2, _ = F.rms_norm(T(np.ones((2, 2, 3))), [2, 3])
    np.testing.assert_allclose(out2.numpy(), np.ones((2, 2, 3)) / np.sqrt(1 + 1e-5))
    with pytest.raises(ValueError, match="rms_norm: normalized_shape must be the trailing sizes"):
        F.rms_norm(x, [2])
    with pytest.raises(ValueError, match="rms_norm: weight must have shape"):
        F.rms_norm(x, [3], T([1.0, 2.0]))


def test_composites_differentiate_twice():
    """create_graph works through the new composites (second derivative of pdist, p=2, vs central
    differences of its first derivative)."""
    xv = np.array([[0.0, 1.0], [2.0, 3.5], [5.0, 1.0]])
    x = T(xv, grad=True)
    (g,) = pycoll.grad(pycoll.pdist(x).sum(), x, create_graph=True)
    (h,) = pycoll.grad((g * g).sum(), x)

    def first(a):
        t = T(a, grad=True)
        return pycoll.grad(pycoll.pdist(t).sum(), t)[0].numpy()
    np.testing.assert_allclose(h.numpy(), central_grad(lambda a: first(a) ** 2, xv), rtol=1e-5, atol=1e-7)


def test_paddle_33_torch_style_names_are_the_same_classes_and_functions():
    """paddle 3.3.1: nn.Conv2d is nn.Conv2D, nn.Module is nn.Layer, ...; paddle.mul/greater/less/
    manual_seed are multiply/greater_than/less_than/seed."""
    for torch_name, paddle_name in [("Module", "Layer"), ("ModuleList", "LayerList"), ("ModuleDict", "LayerDict"),
                                    ("Conv2d", "Conv2D"), ("AdaptiveAvgPool2d", "AdaptiveAvgPool2D"),
                                    ("MaxUnpool2d", "MaxUnPool2D"), ("ZeroPad2d", "ZeroPad2D"),
                                    ("ReflectionPad1d", "ReflectionPad1D"), ("UpsamplingNearest2d", "UpsamplingNearest2D")]:
        assert getattr(nn, torch_name) is getattr(nn, paddle_name)
    x = pycoll.to_tensor([1.0, 3.0])
    assert pycoll.mul(x, x).numpy().tolist() == [1.0, 9.0]
    assert pycoll.greater(x, 2.0).numpy().tolist() == [False, True]
    assert pycoll.less(x, 2.0).numpy().tolist() == [True, False]
    assert pycoll.manual_seed is pycoll.seed
