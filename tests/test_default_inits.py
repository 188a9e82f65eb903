"""Every layer's default parameter initialisation follows paddle 3.3.1's (distribution family,
bounds and spread), and the structured initializers Orthogonal, Dirac and Bilinear.

The statistics are taken over large parameters drawn under a fixed seed, so they are deterministic;
the tolerances are many standard errors wide all the same. Uniform and normal draws are told apart
by their kurtosis (1.8 against 3), which paddle's layers show on the same shapes (measured on paddle
3.3.1: Embedding(1000, 64) max |w| 0.0751 = sqrt(6 / 1064), Conv2D(16, 64, 3) std 0.117 ~ sqrt(2 / 144)
with max |w| past 3 std).
"""
import math

import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
from pycoll.nn import initializer as I


@pytest.fixture(autouse=True)
def _seed():
    pycoll.seed(2024)


def _stats(param):
    a = param.numpy().astype(np.float64).reshape(-1)
    std = a.std()
    return a, std, float(((a - a.mean()) ** 4).mean() / std ** 4)


def _check_uniform(param, bound):
    a, std, kurt = _stats(param)
    assert np.abs(a).max() <= bound * (1 + 1e-6)
    assert np.abs(a).max() > 0.99 * bound  # it reaches its bound
    assert abs(std - bound / math.sqrt(3)) < 0.03 * bound / math.sqrt(3)
    assert abs(kurt - 1.8) < 0.1


def _check_normal(param, std_expected):
    a, std, kurt = _stats(param)
    assert abs(std - std_expected) < 0.03 * std_expected
    assert abs(a.mean()) < 0.03 * std_expected
    assert abs(kurt - 3.0) < 0.3
    assert np.abs(a).max() > 3 * std_expected  # not truncated


def _check_constant(param, value):
    np.testing.assert_array_equal(param.numpy(), np.full(param.shape, value, np.float32))


def test_embedding_is_xavier_uniform_like_paddle():
    layer = nn.Embedding(2000, 64)
    _check_uniform(layer.weight, math.sqrt(6.0 / 2064))
    padded = nn.Embedding(2000, 64, padding_idx=5)
    _check_constant(padded.weight[5], 0.0)
    assert np.abs(padded.weight.numpy()).max() <= math.sqrt(6.0 / 2064) * (1 + 1e-6)


def test_linear_bilinear_and_attention_are_xavier_uniform_with_zero_bias():
    lin = nn.Linear(300, 400)
    _check_uniform(lin.weight, math.sqrt(6.0 / 700))
    _check_constant(lin.bias, 0.0)
    bil = nn.Bilinear(40, 50, 60)  # weight [60, 40, 50]: fan_in 40 * 50, fan_out 60 * 50
    _check_uniform(bil.weight, math.sqrt(6.0 / 5000))
    _check_constant(bil.bias, 0.0)
    mha = nn.MultiHeadAttention(256, 4, kdim=128)
    _check_uniform(mha.q_proj.weight, math.sqrt(6.0 / 512))
    _check_uniform(mha.k_proj.weight, math.sqrt(6.0 / 384))
    _check_constant(mha.out_proj.bias, 0.0)


@pytest.mark.parametrize("make, fan_in", [
    (lambda: nn.Conv1D(64, 128, 5), 64 * 5),
    (lambda: nn.Conv2D(64, 128, 3), 64 * 9),
    (lambda: nn.Conv2D(64, 128, 3, groups=4), 64 * 9),  # paddle counts all in_channels, not per group
    (lambda: nn.Conv3D(16, 64, 3), 16 * 27),
])
def test_conv_is_normal_with_he_std_and_zero_bias(make, fan_in):
    layer = make()
    _check_normal(layer.weight, math.sqrt(2.0 / fan_in))
    _check_constant(layer.bias, 0.0)


@pytest.mark.parametrize("make, fans", [
    (lambda: nn.Conv1DTranspose(64, 128, 5), (128 * 5, 64 * 5)),
    (lambda: nn.Conv2DTranspose(64, 128, 3), (128 * 9, 64 * 9)),
    (lambda: nn.Conv2DTranspose(64, 128, 3, groups=4), (32 * 9, 64 * 9)),  # weight [in, out / groups, k, k]
    (lambda: nn.Conv3DTranspose(16, 64, 3), (64 * 27, 16 * 27)),
])
def test_conv_transpose_is_xavier_uniform_and_zero_bias(make, fans):
    layer = make()
    _check_uniform(layer.weight, math.sqrt(6.0 / sum(fans)))
    _check_constant(layer.bias, 0.0)


@pytest.mark.parametrize("make", [lambda: nn.SimpleRNNCell(64, 100), lambda: nn.LSTMCell(64, 100),
                                  lambda: nn.GRUCell(64, 100), lambda: nn.LSTM(64, 100, 2),
                                  lambda: nn.GRU(64, 100, direction="bidirect")])
def test_rnn_parameters_are_uniform_within_one_over_sqrt_hidden(make):
    layer = make()
    weights = np.concatenate([p.numpy().reshape(-1) for p in layer.parameters()])
    assert np.abs(weights).max() <= 0.1 * (1 + 1e-6)
    assert abs(weights.std() - 0.1 / math.sqrt(3)) < 0.03 * 0.1 / math.sqrt(3)
    for name, p in layer.named_parameters():  # biases too (paddle's cells draw them uniformly)
        assert np.abs(p.numpy()).max() > 0.9 * 0.1, name


def test_norm_layers_start_at_identity():
    for layer in (nn.LayerNorm(64), nn.GroupNorm(4, 64), nn.BatchNorm2D(64), nn.BatchNorm(64)):
        _check_constant(layer.weight, 1.0)
        _check_constant(layer.bias, 0.0)
    bn = nn.BatchNorm1D(64)
    _check_constant(bn._mean, 0.0)
    _check_constant(bn._variance, 1.0)
    inorm = nn.InstanceNorm2D(64)
    _check_constant(inorm.scale, 1.0)
    _check_constant(inorm.bias, 0.0)
    _check_constant(nn.PReLU(8)._weight, 0.25)


def test_spectral_norm_vectors_are_standard_normal():
    layer = nn.SpectralNorm([4096, 8], dim=0)
    _check_normal(layer.weight_u, 1.0)


def test_dirac_matches_paddle():
    # nonzero positions measured on paddle 3.3.1 (create_parameter with Dirac(groups))
    cases = [((4, 2, 3), 1, [[0, 0, 1], [1, 1, 1]]),
             ((6, 3, 3, 3), 2, [[0, 0, 1, 1], [1, 1, 1, 1], [2, 2, 1, 1], [3, 0, 1, 1], [4, 1, 1, 1], [5, 2, 1, 1]]),
             ((4, 6, 1, 3, 2), 2, [[0, 0, 0, 1, 1], [1, 1, 0, 1, 1], [2, 0, 0, 1, 1], [3, 1, 0, 1, 1]])]
    for shape, groups, where in cases:
        w = pycoll.create_parameter(list(shape), "float32", default_initializer=I.Dirac(groups)).numpy()
        assert np.argwhere(w != 0).tolist() == where
        assert (w[w != 0] == 1).all()
    with pytest.raises(ValueError, match="groups"):
        I.Dirac(0)
    with pytest.raises(ValueError, match="divisible"):
        pycoll.create_parameter([5, 2, 3], "float32", default_initializer=I.Dirac(2))


def test_bilinear_initializer_matches_paddle():
    # values measured on paddle 3.3.1 (its formula's fractional row index included)
    row = [0.0625, 0.28125, 0.375, 0.15625, 0.1875, 0.65625, 0.75, 0.21875, 0.1875, 0.46875, 0.375, 0.09375,
           0.0625, 0.09375, 0.0, -0.03125]
    w = pycoll.create_parameter([2, 1, 4, 4], "float32", default_initializer=I.Bilinear()).numpy()
    np.testing.assert_array_equal(w.reshape(-1), np.array(row * 2, np.float32))
    w = pycoll.create_parameter([1, 2, 3, 3], "float32", default_initializer=I.Bilinear()).numpy()
    np.testing.assert_array_equal(w.reshape(-1)[:9], np.array(
        [0.0625, 0.3125, 0.4375, 0.1875, 0.6875, 0.6875, 0.1875, 0.4375, 0.3125], np.float32))
    with pytest.raises(ValueError, match="shape"):
        pycoll.create_parameter([2, 1, 4, 3], "float32", default_initializer=I.Bilinear())


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 2, 3)])
def test_orthogonal_is_semi_orthogonal_times_gain(shape):
    w = pycoll.create_parameter(list(shape), "float64", default_initializer=I.Orthogonal(gain=2.0)).numpy()
    m = w.reshape(shape[0], -1)
    gram = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(gram, 4.0 * np.eye(len(gram)), atol=1e-12)
    with pytest.raises(ValueError, match="2 or more dims"):
        pycoll.create_parameter([4], "float32", default_initializer=I.Orthogonal())


def test_set_global_initializer_replaces_the_layer_defaults_below_a_param_attr():
    """paddle 3.3.1 gave these values for the same calls: the global weight initializer also
    replaces BatchNorm's and Embedding's defaults, a ParamAttr's initializer still wins, None cancels."""
    init = nn.initializer
    try:
        init.set_global_initializer(init.Constant(0.5), init.Constant(0.25))
        lin, bn, emb = nn.Linear(2, 3), nn.BatchNorm1D(3), nn.Embedding(4, 2)
        named = nn.Linear(2, 2, weight_attr=pycoll.ParamAttr(initializer=init.Constant(2.0)))
        for param, value in ((lin.weight, 0.5), (lin.bias, 0.25), (bn.weight, 0.5), (bn.bias, 0.25),
                             (emb.weight, 0.5), (named.weight, 2.0), (named.bias, 0.25)):
            np.testing.assert_array_equal(param.numpy(), np.full(param.shape, value, np.float32))
        with pytest.raises(TypeError, match="weight_init"):
            init.set_global_initializer(3)
    finally:
        init.set_global_initializer(None)
    fresh = nn.Linear(2, 3)
    assert not fresh.bias.numpy().any() and len(np.unique(fresh.weight.numpy())) == 6


def test_paddle_s_older_initializer_names_keep_their_signatures():
    """XavierInitializer / MSRAInitializer pick the uniform or normal form by a flag; a seed other
    than 0 fills every parameter with the same values (paddle 3.3.1: two parameters drawn with
    NormalInitializer(seed=5) are equal); UniformInitializer's diag_* change nothing in dygraph."""
    def drawn(init, shape=(400, 600)):
        return pycoll.create_parameter(list(shape), "float32", default_initializer=init)

    _check_normal(drawn(I.XavierInitializer(uniform=False)), math.sqrt(2 / 1000))
    _check_uniform(drawn(I.XavierInitializer(gain=2.0)), 2 * math.sqrt(6 / 1000))
    _check_normal(drawn(I.MSRAInitializer(uniform=False, mode="fan_out")), math.sqrt(2 / 600))
    _check_uniform(drawn(I.MSRAInitializer(fan_in=50)), math.sqrt(6 / 50))
    first, second = drawn(I.NormalInitializer(1.0, 0.5, seed=5)), drawn(I.NormalInitializer(1.0, 0.5, seed=5))
    np.testing.assert_array_equal(first.numpy(), second.numpy())
    _check_normal(first - 1.0, 0.5)
    assert not np.array_equal(drawn(I.NormalInitializer()).numpy(), drawn(I.NormalInitializer()).numpy())
    assert abs(drawn(I.TruncatedNormalInitializer(scale=2.0, a=-1, b=1)).numpy()).max() <= 1
    _check_constant(drawn(I.UniformInitializer(0.0, 0.0, diag_num=3, diag_step=5, diag_val=7.0), (3, 4)), 0.0)
    _check_constant(drawn(I.ConstantInitializer(3.0, force_cpu=True), (2, 2)), 3.0)
    np.testing.assert_array_equal(drawn(I.NumpyArrayInitializer(np.eye(2)), (2, 2)).numpy(), np.eye(2))
    linear = nn.Linear(4, 3, weight_attr=pycoll.ParamAttr(initializer=I.XavierInitializer(seed=7)))
    assert isinstance(I.XavierInitializer(), I.XavierInitializer) and linear.weight.shape == [4, 3]
    with pytest.raises(TypeError, match="NormalInitializer: seed must be an int"):
        I.NormalInitializer(seed=1.5)
