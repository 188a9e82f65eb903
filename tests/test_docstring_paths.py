"""The module paths and keyword names paddle 3.3.1's own docstring examples use, on pycoll: paddle's
distribution and nn.layer submodules hold pycoll's objects, LKJCholesky.sample takes sample_shape,
and the transforms' log-det-Jacobians have paddle's shapes (values measured on paddle 3.3.1 CPU)."""
import importlib
import math

import numpy as np
import pytest

import pycoll
import pycoll.distribution as D
import pycoll.nn as nn

T = pycoll.to_tensor

# paddle 3.3.1: the public classes/functions each paddle.distribution.<sub> defines that pycoll has
# (constraint and variable, paddle's internal domain checks, are not in pycoll)
DISTRIBUTION_MODULES = {
    "bernoulli": ["Bernoulli"], "beta": ["Beta"], "binomial": ["Binomial"], "categorical": ["Categorical"],
    "cauchy": ["Cauchy"], "chi2": ["Chi2"], "continuous_bernoulli": ["ContinuousBernoulli"],
    "dirichlet": ["Dirichlet"], "distribution": ["Distribution"], "exponential": ["Exponential"],
    "exponential_family": ["ExponentialFamily"], "gamma": ["Gamma"], "geometric": ["Geometric"],
    "gumbel": ["Gumbel"], "independent": ["Independent"], "kl": ["kl_divergence", "register_kl"],
    "laplace": ["Laplace"], "lkj_cholesky": ["LKJCholesky"], "lognormal": ["LogNormal"],
    "multinomial": ["Multinomial"], "multivariate_normal": ["MultivariateNormal"], "normal": ["Normal"],
    "poisson": ["Poisson"], "student_t": ["StudentT"], "uniform": ["Uniform"],
    "transformed_distribution": ["TransformedDistribution"],
    "transform": ["Transform", "AbsTransform", "AffineTransform", "ChainTransform", "ExpTransform",
                  "IndependentTransform", "PowerTransform", "ReshapeTransform", "SigmoidTransform",
                  "SoftmaxTransform", "StackTransform", "StickBreakingTransform", "TanhTransform"],
}


@pytest.mark.parametrize("sub", sorted(DISTRIBUTION_MODULES))
def test_distribution_submodule_holds_the_packages_objects(sub):
    module = importlib.import_module(f"pycoll.distribution.{sub}")
    assert getattr(D, sub) is module
    for name in DISTRIBUTION_MODULES[sub]:
        assert getattr(module, name) is getattr(D, name), (sub, name)


def test_distribution_docstring_imports():
    from pycoll.distribution import independent, transformed_distribution
    from pycoll.distribution.gumbel import Gumbel
    assert Gumbel is D.Gumbel and independent.Independent is D.Independent
    assert transformed_distribution.TransformedDistribution is D.TransformedDistribution


# paddle 3.3.1: the public classes paddle.nn.layer.<sub> defines that pycoll has (a few of each)
NN_LAYER_MODULES = {
    "activation": ["ReLU", "Softmax2D", "Maxout"], "common": ["Linear", "Unflatten", "CircularPad3D"],
    "container": ["Sequential", "ParameterDict"], "conv": ["Conv2D", "Conv3DTranspose"],
    "distance": ["PairwiseDistance"], "layers": ["Layer"],
    "loss": ["CrossEntropyLoss", "CTCLoss", "HSigmoidLoss", "AdaptiveLogSoftmaxWithLoss"],
    "norm": ["LayerNorm", "SpectralNorm", "LocalResponseNorm", "SyncBatchNorm"],
    "pooling": ["MaxPool2D", "FractionalMaxPool3D"], "rnn": ["LSTM", "RNNCellBase"],
    "transformer": ["MultiHeadAttention", "Transformer"], "vision": ["PixelShuffle", "ChannelShuffle"],
}


@pytest.mark.parametrize("sub", sorted(NN_LAYER_MODULES))
def test_nn_layer_submodule_holds_nns_objects(sub):
    module = importlib.import_module(f"pycoll.nn.layer.{sub}")
    for name in NN_LAYER_MODULES[sub]:
        assert getattr(module, name) is getattr(nn, name), (sub, name)
    assert all(getattr(module, name) is getattr(nn, name) for name in module.__all__)


def test_nn_layer_stays_the_layer_module():
    from pycoll.nn.layer import Layer, create_parameter
    from pycoll.nn.layer.layers import Layer as PaddlePathLayer
    from pycoll.nn.layer.loss import CrossEntropyLoss
    assert Layer is PaddlePathLayer is nn.Layer and callable(create_parameter)
    loss = CrossEntropyLoss()(T([[2.0, 1.0, 0.1]]), T([0]))
    by_hand = -math.log(math.exp(2.0) / (math.exp(2.0) + math.exp(1.0) + math.exp(0.1)))
    assert abs(float(loss) - by_hand) < 1e-6


def test_lkj_cholesky_sample_takes_paddles_keyword():
    pycoll.seed(3)
    factor = D.LKJCholesky(3, 2.0).sample(sample_shape=[4]).numpy()
    assert factor.shape == (4, 3, 3)  # as paddle 3.3.1's
    assert np.allclose(np.triu(factor, 1), 0) and np.allclose((factor ** 2).sum(-1), 1, atol=1e-5)


def _values(t):
    return t.shape, np.round(t.numpy().astype("float64"), 5).tolist()


def test_affine_log_det_jacobian_has_scales_shape():
    # shapes and values printed by paddle 3.3.1 CPU for the same calls
    x2, x23 = T([0.3, 0.7]), T([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]])
    scalar = D.AffineTransform(T(1.0), T(2.0))
    assert _values(scalar.forward_log_det_jacobian(x2)) == ([], 0.69315)
    assert _values(scalar.inverse_log_det_jacobian(x2)) == ([], -0.69315)
    vec = D.AffineTransform(T([0., 1., 2.]), T([1., -2., 3.]))
    assert _values(vec.forward_log_det_jacobian(x23)) == ([3], [0.0, 0.69315, 1.09861])
    assert _values(D.AffineTransform(T([0., 1., 2.]), T(3.0)).forward_log_det_jacobian(x23)) == ([], 1.09861)
    chain = D.ChainTransform((D.AffineTransform(T(0.), T(2.)), D.ExpTransform()))
    assert _values(chain.forward_log_det_jacobian(x23)) == ([2, 3], [[0.89315, 1.09315, 1.29315],
                                                                     [1.49315, 1.69315, 1.89315]])
    assert _values(D.ChainTransform((D.AffineTransform(T(0.), T(2.)),)).forward_log_det_jacobian(x2)) \
        == ([], 0.69315)
    zero, _ = D.AbsTransform().inverse_log_det_jacobian(x23)
    assert _values(zero) == ([], 0.0)


def test_transformed_log_prob_keeps_its_values():
    x = T([[0.5, -1.0], [2.0, 0.1]])
    td = D.TransformedDistribution(D.Normal(T(0.), T(1.)), [D.AffineTransform(T(1.), T(2.))])
    # paddle 3.3.1 CPU
    paddle = [[-1.6433357000350952, -2.1120858192443848], [-1.7370857000350952, -1.7133357524871826]]
    np.testing.assert_allclose(td.log_prob(x).numpy(), paddle, rtol=1e-6)
    z = (x.numpy() - 1.) / 2.
    np.testing.assert_allclose(td.log_prob(x).numpy(), -0.5 * z ** 2 - 0.5 * math.log(2 * math.pi) - math.log(2.),
                               rtol=1e-6)


def _attention_by_hand(q, k, v, causal=False):
    """[seq, heads, dim] NumPy attention: (out, lse [heads, seq_q], softmax [heads, seq_q, seq_k])."""
    s = np.einsum("qhd,khd->hqk", q, k) / math.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.tril(np.ones(s.shape[1:], bool)), s, -np.inf)
    lse = np.log(np.exp(s).sum(-1))
    p = np.exp(s - lse[..., None])
    return np.einsum("hqk,khd->qhd", p, v), lse, p


def test_flash_attention_v3_varlen_is_varlen_attention_per_sequence():
    import pycoll.nn.functional as F
    from pycoll.nn.functional.flash_attention import flash_attention_v3_varlen
    assert "flash_attention_v3_varlen" in F.__all__ and F.flash_attention_v3_varlen is flash_attention_v3_varlen
    r = np.random.RandomState(0)
    q, k, v = (r.randn(7, 2, 4).astype("float32") for _ in range(3))
    cu = T(np.array([0, 3, 7], "int32"))
    out, lse = flash_attention_v3_varlen(T(q), T(k), T(v), cu, cu, 4, 4, causal=True)
    for a, b in ((0, 3), (3, 7)):
        o, l, _ = _attention_by_hand(q[a:b], k[a:b], v[a:b], causal=True)
        np.testing.assert_allclose(out.numpy()[a:b], o, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(lse.numpy()[:, a:b], l, rtol=1e-5, atol=1e-6)


def test_get_triangle_upper_mask_as_paddle():
    from pycoll.nn.functional.flash_attention import get_triangle_upper_mask
    mask = get_triangle_upper_mask(T(np.arange(12, dtype="float32").reshape(1, 3, 4)))
    # paddle 3.3.1 CPU printed the same for this x
    assert mask.stop_gradient and mask.shape == [1, 3, 4] and str(mask.dtype).endswith("float32")
    assert mask.numpy().tolist() == [[[0.0, -1e4, -1e4, -1e4], [0.0, 0.0, -1e4, -1e4], [0.0, 0.0, 0.0, -1e4]]]


def test_calc_reduced_attention_scores_sums_the_softmax_over_queries():
    from pycoll.nn.functional.flash_attention import calc_reduced_attention_scores
    r = np.random.RandomState(1)
    q, k = r.randn(2, 5, 3, 8).astype("float32"), r.randn(2, 6, 3, 8).astype("float32")
    lse = np.zeros((2, 3, 128), "float32")  # a kernel's rows rounded up to 128
    expected = np.zeros((2, 3, 1, 6))
    for b in range(2):
        _, lse[b, :, :5], p = _attention_by_hand(q[b], k[b], k[b])
        expected[b, :, 0] = p.sum(1)
    got = calc_reduced_attention_scores(T(q), T(k), T(lse))
    assert got.shape == [2, 3, 1, 6] and str(got.dtype).endswith("float32")
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got.numpy().sum(-1), 5.0, rtol=1e-5)  # each query row's softmax sums to 1
    trainable = T(q, stop_gradient=False)
    with pytest.raises(ValueError, match="stop_gradient"):
        calc_reduced_attention_scores(trainable, T(k), T(lse))


def test_hapi_static_flops_module(capsys):
    import pycoll.hapi as hapi
    from pycoll.hapi import hub
    from pycoll.hapi.static_flops import Table, static_flops
    assert hapi.static_flops.static_flops is static_flops and hub is pycoll.hub
    table = Table(["OP Type", "Param name", "Flops"])
    table.add_row(["conv2d", "conv2d_0.w_0", 12345])
    table.add_row(["pool2d", "", 7])
    table.print_table()
    assert capsys.readouterr().out == (  # paddle 3.3.1 printed this for the same rows
        "+---------+--------------+-------+\n"
        "| OP Type |  Param name  | Flops |\n"
        "+---------+--------------+-------+\n"
        "|  conv2d | conv2d_0.w_0 | 12345 |\n"
        "|  pool2d |              |   7   |\n"
        "+---------+--------------+-------+\n")
    with pytest.raises(ValueError, match="row_str"):
        table.add_row(["only one"])
    with pytest.raises(TypeError, match="program must be a static Program"):
        static_flops(nn.Linear(2, 2))


def test_compat_matches_paddle():
    # every value below as paddle 3.3.1 CPU printed it for the same calls
    import pycoll.compat as C
    assert pycoll.compat is C and C.nn.functional.softmax is pycoll.softmax
    x = T([[5., 8., 9., 5.], [0., 0., 1., 7.], [6., 9., 2., 4.]])
    assert C.equal(T([1, 2, 3]), T([1, 3, 2])) is False and C.equal(T([1, 2]), T([1., 2.])) is True
    r = C.sort(x, 1, descending=True)
    assert r.values.numpy().tolist() == [[9, 8, 5, 5], [7, 1, 0, 0], [9, 6, 4, 2]]
    assert r.indices.numpy().tolist() == [[2, 1, 0, 3], [3, 2, 0, 1], [1, 0, 3, 2]]
    assert [t.shape for t in C.split(pycoll.rand([3, 8, 5]), 3, dim=-2)] == [[3, 3, 5], [3, 3, 5], [3, 2, 5]]
    assert [t.shape[1] for t in C.split(pycoll.rand([3, 8, 5]), [1, 2, 5], dim=1)] == [1, 2, 5]
    xi = T([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    assert C.median(xi).item() == 5 and C.median(xi, dim=1).values.numpy().tolist() == [2, 5, 8]
    nan = float("nan")
    r = C.nanmedian(T([[1, nan, 3], [4, 5, 6], [nan, nan, nan]], dtype="float32"), dim=1)
    assert r.values.numpy()[:2].tolist() == [1, 5] and np.isnan(r.values.numpy()[2])
    assert r.indices.numpy().tolist() == [0, 1, 0]
    assert C.min(x).item() == 0.0 and C.max(x, 1).values.numpy().tolist() == [9, 7, 9]
    assert C.max(x, 1).indices.numpy().tolist() == [2, 3, 1]
    assert C.min(x, dim=0, keepdim=True).indices.numpy().tolist() == [[1, 1, 1, 2]]
    assert C.max(x, x * 0 + 6).numpy().tolist() == [[6, 8, 9, 6], [6, 6, 6, 7], [6, 9, 6, 6]]
    scalar = T(3.0)  # a 0-d input: itself and index 0 along dim 0 or -1 (paddle's MinMaxRetType(3., 0))
    for r in (C.max(scalar, dim=0), C.min(scalar, -1, keepdim=True), C.sort(scalar), C.sort(scalar, dim=0)):
        assert (r[0].item(), r[1].item(), r[1].dtype, r[1].shape) == (3.0, 0, pycoll.int64, [])
    with pytest.raises(ValueError, match="paddle.compat.max: dim must be 0 or -1 for a 0-d input, got 1"):
        C.max(scalar, 1)
    xg = T([[1., 1., 1.], [2., 0., 2.]], stop_gradient=False)
    C.max(xg, 1).values.sum().backward()
    assert xg.grad.numpy().tolist() == [[1, 0, 0], [1, 0, 0]]  # to the index only, as paddle's
    u = C.unique(T([2, 3, 3, 1, 5, 3]), return_inverse=True, return_counts=True)
    assert [t.numpy().tolist() for t in u] == [[1, 2, 3, 5], [1, 2, 2, 0, 3, 2], [1, 1, 3, 1]]
    s = C.slogdet(T([[2., 1.], [1., -3.]]))
    assert s.sign.item() == -1.0 and abs(s.logabsdet.item() - math.log(7.)) < 1e-5
    w, b = T(np.arange(8, dtype="float32").reshape(2, 4)), T([1., -1.])
    assert C.nn.functional.linear(x, w, b).numpy().tolist() == [[42, 148], [24, 54], [26, 108]]
    e = np.exp(x.numpy())
    np.testing.assert_allclose(C.nn.Softmax(dim=0)(x).numpy(), e / e.sum(0), rtol=1e-6)
    np.testing.assert_allclose(C.nn.functional.softmax(x).numpy(), e / e.sum(1, keepdims=True), rtol=1e-6)
    o, oi = pycoll.zeros([3]), pycoll.zeros([3], dtype="int64")
    r = C.median(T([[1., 2., 3.], [4., 5., 6.], [7., 8., 9.]]), dim=1, out=(o, oi))
    assert r.values is o and o.numpy().tolist() == [2, 5, 8] and oi.numpy().tolist() == [1, 1, 1]
    for bad in (lambda: C.min(x, None), lambda: C.min(x, 1.5), lambda: C.max(x, 1, True, 3)):
        with pytest.raises(TypeError):
            bad()
    assert isinstance(C.seed(), int)
