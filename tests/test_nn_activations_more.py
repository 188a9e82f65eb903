"""relu6, swish/silu, mish, softsign, tanhshrink, log_sigmoid, hardsigmoid, hardshrink, softshrink,
hardtanh, thresholded_relu, celu, selu, glu, maxout, prelu and their layers (and LogSoftmax, SiLU).

Values against NumPy formulas written here, gradients against central differences away from the
kinks and, at the kinks, against gradients read off paddle 3.3.1 (CPU, float64). Side by side
with paddle 3.3.1 in float64 on 33 points (the kinks and random ones) every function and layer
agreed to 1e-7 relative, save where paddle keeps an attribute in float32 (hardsigmoid's slope
1/6, selu's scale and alpha in its gradient: up to 3e-8 absolute).
"""
import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
import pycoll.nn.functional as F

RNG = np.random.default_rng(11)
KINKS = np.array([-6, -3, -1, -0.5, 0, 0.5, 1, 3, 6])


def sig(a):
    return 1 / (1 + np.exp(-a))


def softplus(a):
    return np.log1p(np.exp(a))


CASES = {  # name: (call, numpy value, gradient at KINKS measured on paddle 3.3.1)
    "relu6": (F.relu6, lambda a: np.clip(a, 0, 6), [0, 0, 0, 0, 0, 1, 1, 1, 0]),
    "swish": (F.swish, lambda a: a * sig(a), None),
    "mish": (F.mish, lambda a: a * np.tanh(softplus(a)), None),
    "softsign": (F.softsign, lambda a: a / (1 + np.abs(a)), None),
    "tanhshrink": (F.tanhshrink, lambda a: a - np.tanh(a), None),
    "log_sigmoid": (F.log_sigmoid, lambda a: np.log(sig(a)), None),
    "hardsigmoid": (lambda x: F.hardsigmoid(x, 0.3, 0.2), lambda a: np.clip(0.3 * a + 0.2, 0, 1),
                    [0, 0, 0, 0.3, 0.3, 0.3, 0.3, 0, 0]),
    "hardshrink": (lambda x: F.hardshrink(x, 1.0), lambda a: np.where(np.abs(a) >= 1.0, a, 0),
                   [1, 1, 1, 0, 0, 0, 1, 1, 1]),
    "softshrink": (lambda x: F.softshrink(x, 1.0), lambda a: np.sign(a) * np.maximum(np.abs(a) - 1.0, 0),
                   [1, 1, 0, 0, 0, 0, 0, 1, 1]),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 3), lambda a: np.clip(a, -0.5, 3), [0, 0, 0, 0, 1, 1, 1, 0, 0]),
    "thresholded_relu": (lambda x: F.thresholded_relu(x, 0.5, -2.0), lambda a: np.where(a > 0.5, a, -2.0),
                         [0, 0, 0, 0, 0, 0, 1, 1, 1]),
    "celu": (lambda x: F.celu(x, 0.5), lambda a: np.maximum(a, 0) + np.minimum(0, 0.5 * np.expm1(a / 0.5)),
             [np.exp(-12), np.exp(-6), np.exp(-2), np.exp(-1), 1, 1, 1, 1, 1]),
    "selu": (lambda x: F.selu(x, 1.5, 0.5), lambda a: 1.5 * np.where(a > 0, a, 0.5 * np.expm1(a)),
             [0.75 * np.exp(-6), 0.75 * np.exp(-3), 0.75 * np.exp(-1), 0.75 * np.exp(-0.5), 0.75, 1.5, 1.5, 1.5,
              1.5]),
}


def grads(fn, *arrays):
    ts = [pycoll.to_tensor(a, stop_gradient=False) for a in arrays]
    out = fn(*ts)
    r = np.cos(np.arange(out.size)).reshape(out.shape)
    (out * pycoll.to_tensor(r)).sum().backward()
    return out.numpy(), [t.grad.numpy() for t in ts], r


def numeric(fn, arrays, i, r, eps=1e-6):
    a = arrays[i]
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        hi, lo = [x.copy() for x in arrays], [x.copy() for x in arrays]
        hi[i][idx] += eps
        lo[i][idx] -= eps
        with pycoll.no_grad():
            g[idx] = ((fn(*map(pycoll.to_tensor, hi)).numpy() - fn(*map(pycoll.to_tensor, lo)).numpy()) * r).sum()
    return g / (2 * eps)


@pytest.mark.parametrize("name", sorted(CASES))
def test_elementwise_values_and_gradients(name):
    fn, ref, kink_grad = CASES[name]
    x = RNG.standard_normal(40) * 3
    x = x[np.abs(np.abs(x) - np.round(np.abs(x) * 2) / 2) > 1e-3]  # away from the kinks (0, 0.5, 1, 3, 6)
    out, (g,), r = grads(fn, x)
    np.testing.assert_allclose(out, ref(x), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(g, numeric(fn, [x], 0, r), rtol=1e-6, atol=1e-9)
    if kink_grad is not None:
        _, (gk,), rk = grads(fn, KINKS.astype(np.float64))
        np.testing.assert_allclose(gk / rk, kink_grad, rtol=1e-12, atol=1e-15)
    assert fn(pycoll.to_tensor(x.astype(np.float32))).dtype == np.float32


def test_log_sigmoid_and_mish_stay_finite_far_out():
    x = pycoll.to_tensor(np.array([-800.0, -30.0, 30.0, 800.0]), stop_gradient=False)
    out = F.log_sigmoid(x)
    np.testing.assert_allclose(out.numpy(), [-800.0, -30.0, -np.exp(-30.0), 0.0], rtol=1e-12)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, 1, np.exp(-30.0), 0], rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(F.mish(pycoll.to_tensor([-800.0, 800.0])).numpy(), [0, 800.0], atol=1e-300)


def test_glu_halves_along_axis():
    x = RNG.standard_normal((2, 4, 3))
    fn = lambda t: F.glu(t, axis=1)  # noqa: E731
    out, (g,), r = grads(fn, x)
    np.testing.assert_allclose(out, x[:, :2] * sig(x[:, 2:]), rtol=1e-12)
    np.testing.assert_allclose(g, numeric(fn, [x], 0, r), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(nn.GLU()(pycoll.to_tensor(x[:, :, :2])).numpy(), x[:, :, :1] * sig(x[:, :, 1:2]))
    with pytest.raises(ValueError, match="even size"):
        F.glu(pycoll.to_tensor(x))
    with pytest.raises(ValueError, match="axis"):
        F.glu(pycoll.to_tensor(x), axis=3)


def test_maxout_groups_consecutive_channels():
    x = RNG.standard_normal((2, 6, 2, 3))
    x[0, 0, 0, 0] = x[0, 1, 0, 0] = 5.0  # a tie for the largest: the first channel gets the gradient
    out, (g,), r = grads(lambda t: F.maxout(t, 3), x)
    np.testing.assert_allclose(out, x.reshape(2, 2, 3, 2, 3).max(2))
    assert g[0, 0, 0, 0] == r[0, 0, 0, 0] and g[0, 1, 0, 0] == 0
    assert np.count_nonzero(g) == out.size
    last, (gl,), _ = grads(nn.Maxout(2, axis=-1), x.transpose(0, 2, 3, 1))
    np.testing.assert_allclose(last, x.transpose(0, 2, 3, 1).reshape(2, 2, 3, 3, 2).max(-1))
    with pytest.raises(ValueError, match="groups"):
        F.maxout(pycoll.to_tensor(x), 4)


@pytest.mark.parametrize("data_format,channel", [("NCHW", 1), ("NHWC", 3), ("NCL", 1)])
def test_prelu_per_channel(data_format, channel):
    x = RNG.standard_normal((2, 3, 4, 3) if len(data_format) == 4 else (2, 3, 4))
    x.flat[0] = 0.0  # at 0 the slope applies (paddle: x > 0 ? g : w * g)
    w = RNG.standard_normal(3)
    fn = lambda t, wt: F.prelu(t, wt, data_format)  # noqa: E731
    out, (gx, gw), r = grads(fn, x, w)
    shape = [1] * x.ndim
    shape[channel] = 3
    np.testing.assert_allclose(out, np.where(x > 0, x, x * w.reshape(shape)), rtol=1e-12)
    np.testing.assert_allclose(gx, np.where(x > 0, r, r * w.reshape(shape)), rtol=1e-12)
    np.testing.assert_allclose(gw, numeric(fn, [x, w], 1, r), rtol=1e-6, atol=1e-9)


def test_prelu_layer_parameter_and_single_slope():
    layer = nn.PReLU(3, init=0.1)
    assert list(layer.state_dict()) == ["_weight"]  # paddle's key
    np.testing.assert_array_equal(layer._weight.numpy(), np.full(3, 0.1, np.float32))
    x = RNG.standard_normal((2, 3, 2))
    out, (gx, gw), r = grads(lambda t, wt: F.prelu(t, wt), x, np.array([0.3]))
    np.testing.assert_allclose(out, np.where(x > 0, x, 0.3 * x))
    np.testing.assert_allclose(gw, [np.sum(np.where(x > 0, 0, x * r))])
    np.testing.assert_allclose(F.prelu(pycoll.to_tensor(x), pycoll.to_tensor(np.array(0.3))).numpy(), out)
    with pytest.raises(ValueError, match="channels"):
        F.prelu(pycoll.to_tensor(x), pycoll.to_tensor(np.ones(4)))
    with pytest.raises(ValueError, match="num_parameters"):
        nn.PReLU(0)


def test_layers_call_their_functions():
    x = pycoll.to_tensor(RNG.standard_normal((2, 4)) * 4)
    pairs = [(nn.ReLU6(), F.relu6(x)), (nn.Swish(), F.swish(x)), (nn.SiLU(), F.silu(x)), (nn.Mish(), F.mish(x)),
             (nn.Softsign(), F.softsign(x)), (nn.Tanhshrink(), F.tanhshrink(x)), (nn.LogSigmoid(), F.logsigmoid(x)),
             (nn.Hardsigmoid(), F.hardsigmoid(x, 0.1666667, 0.5)), (nn.Hardshrink(0.7), F.hardshrink(x, 0.7)),
             (nn.Softshrink(0.7), F.softshrink(x, 0.7)), (nn.Hardtanh(-2, 2), F.hardtanh(x, -2, 2)),
             (nn.ThresholdedReLU(0.3, 1.0), F.thresholded_relu(x, 0.3, 1.0)), (nn.CELU(2.0), F.celu(x, 2.0)),
             (nn.SELU(), F.selu(x)), (nn.LogSoftmax(0), F.log_softmax(x, 0))]
    for layer, expected in pairs:
        np.testing.assert_array_equal(layer(x).numpy(), expected.numpy(), err_msg=type(layer).__name__)
    np.testing.assert_allclose(nn.Hardsigmoid()(x).numpy(), np.clip(x.numpy() / 6 + 0.5, 0, 1), atol=1e-6)


def test_bad_arguments_are_refused():
    x = pycoll.to_tensor([1.0, -1.0])
    with pytest.raises(ValueError, match="alpha"):
        F.celu(x, 0.0)
    with pytest.raises(ValueError, match="scale"):
        F.selu(x, scale=1.0)
    with pytest.raises(ValueError, match="alpha"):
        F.selu(x, alpha=-1.0)
    with pytest.raises(ValueError, match="threshold"):
        F.softshrink(x, -1.0)
    with pytest.raises(TypeError, match="threshold"):
        F.hardshrink(x, "0.5")
    with pytest.raises(TypeError, match="floating"):
        F.relu6(pycoll.to_tensor([1, 2]))


def test_gelu_takes_paddles_approximate_forms():
    # paddle 3.3.1, float32: 'none'/False/None exact, 'tanh'/True the tanh formula; anything else refused
    x = pycoll.to_tensor([[-1, 0.5], [1, 1.5]])
    exact = [-0.15865526, 0.34573123, 0.8413447, 1.3997892]
    for form in ("none", False, None):
        np.testing.assert_allclose(F.gelu(x, approximate=form).numpy().ravel(), exact, rtol=2e-7)
        np.testing.assert_allclose(nn.GELU(form)(x).numpy().ravel(), exact, rtol=2e-7)
    for form in ("tanh", True):
        assert abs(float(F.gelu(pycoll.to_tensor([1.0]), form)[0]) - 0.841192) < 1e-6
    for bad in ("exact", "TANH", 1):
        with pytest.raises(ValueError, match="approximate"):
            F.gelu(x, bad)
        with pytest.raises(ValueError, match="approximate"):
            nn.GELU(bad)


def test_silu_and_dropout_inplace_change_x():
    # paddle 3.3.1: F.silu(x, True) leaves x = [0.7310586, 1.761594] and returns x
    x = pycoll.to_tensor([1.0, 2.0])
    assert F.silu(x, True) is x
    np.testing.assert_allclose(x.numpy(), [0.7310586, 1.761594], rtol=1e-6)
    x = pycoll.to_tensor([1.0, 2.0])
    assert nn.Silu(inplace=True)(x) is x and nn.SiLU()(pycoll.to_tensor([1.0])) is not x
    np.testing.assert_allclose(x.numpy(), [0.7310586, 1.761594], rtol=1e-6)
    # an op's output changed in place passes the gradient on: d silu(2w)/dw = 2 silu'(2w)
    w = pycoll.to_tensor([0.5, -1.0], dtype="float64", stop_gradient=False)
    y = w * 2
    F.silu(y, inplace=True).sum().backward()
    a = 2 * w.numpy()
    np.testing.assert_allclose(w.grad.numpy(), 2 * sig(a) * (1 + a * (1 - sig(a))), rtol=1e-12)
    with pytest.raises(ValueError, match="leaf"):  # a parameter itself cannot be (paddle's rule)
        F.silu(w, inplace=True)
    pycoll.seed(5)
    x = pycoll.ones([100])
    assert F.dropout(x, 0.5, inplace=True) is x
    assert set(np.unique(x.numpy()).tolist()) == {0.0, 2.0}
    x = pycoll.ones([4])
    nn.Dropout(0.5, inplace=True).eval()(x)
    assert x.numpy().tolist() == [1.0] * 4
    with pytest.raises(NotImplementedError, match="axis"):
        F.dropout(pycoll.ones([2, 2]), 0.5, axis=0, inplace=True)


@pytest.mark.parametrize("dtype, rtol", [("float16", 1e-3), ("float32", 3e-7), ("float64", 1e-15)])
def test_sigmoid_and_silu_across_the_range_of_each_dtype(dtype, rtol):
    """1 / (1 + exp(-x)), 16-bit floats through float32: sigmoid(-14) is 8.3e-7 in float16, not
    the 0 its own exp(14) overflow would give; inf and NaN as paddle's"""
    x = np.array([-100, -30, -14, -11, -1, 0, 0.5, 3, 17, 40, np.inf, -np.inf, np.nan]).astype(dtype)
    want = 1 / (1 + np.exp(-x.astype(np.float64)))
    got = F.sigmoid(pycoll.to_tensor(x))
    assert got.dtype == np.dtype(dtype)
    want_rounded = want.astype(dtype).astype(np.float64)
    np.testing.assert_allclose(got.numpy().astype(np.float64), want_rounded, rtol=rtol, atol=0)
    assert got.numpy()[2] > 0
    finite = x[:-3].astype(np.float64)
    np.testing.assert_allclose(F.silu(pycoll.to_tensor(x)).numpy()[:-3].astype(np.float64),
                               (finite * want[:-3]).astype(dtype).astype(np.float64), rtol=rtol, atol=1e-40)


def test_softmaxes_and_attention_over_an_empty_axis_give_empty_results_quietly(recwarn):
    # paddle 3.3.1: [2, 0], [3, 0], and zeros for attention over an empty key/value (an empty cache)
    assert F.softmax(pycoll.zeros([2, 0]), axis=-1).shape == [2, 0]
    assert F.log_softmax(pycoll.zeros([3, 0])).shape == [3, 0]
    q = pycoll.ones([1, 1, 2, 4])
    q.stop_gradient = False
    out = F.scaled_dot_product_attention(q, pycoll.zeros([1, 0, 2, 4]), pycoll.zeros([1, 0, 2, 4]))
    assert out.numpy().tolist() == np.zeros([1, 1, 2, 4]).tolist()
    out.sum().backward()  # paddle's own backward fails here
    assert q.grad.numpy().tolist() == np.zeros([1, 1, 2, 4]).tolist()
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("op", ["layer_norm", "LayerNorm", "group_norm", "instance_norm", "lerp",
                                "local_response_norm"])
def test_normalisations_keep_a_bfloat16_input_s_dtype(op):
    x = pycoll.to_tensor(np.random.RandomState(0).rand(2, 4, 3, 3).astype("float32"))
    half = x.astype("bfloat16")
    run = {"layer_norm": lambda t: F.layer_norm(t, [3, 3]), "LayerNorm": lambda t: nn.LayerNorm([3, 3]).to(
        dtype=t.dtype)(t), "group_norm": lambda t: F.group_norm(t, 2), "instance_norm": F.instance_norm,
        "lerp": lambda t: pycoll.lerp(t, t * 2, 0.25), "local_response_norm": lambda t: F.local_response_norm(t, 3)}[op]
    out = run(half)
    assert out.dtype == pycoll.bfloat16  # float32 before: the next bfloat16 Linear refused it
    np.testing.assert_allclose(out.astype("float32").numpy(), run(x).numpy(), rtol=2e-2, atol=2e-2)


def test_shrinks_and_thresholded_relu_keep_nan_and_local_response_norm_keeps_channels_apart():
    """paddle 3.3.1's values: NaN stays NaN through the shrinks and thresholded_relu; a huge or
    overflowing channel changes only the channels whose window holds it."""
    F = pycoll.nn.functional
    x = pycoll.to_tensor([np.nan, np.inf, -np.inf, 2.0])
    np.testing.assert_array_equal(F.hardshrink(x).numpy(), [np.nan, np.inf, -np.inf, 2.0])
    np.testing.assert_array_equal(F.softshrink(x).numpy(), [np.nan, np.inf, -np.inf, 1.5])
    np.testing.assert_array_equal(F.thresholded_relu(x, 1.0, value=-1.0).numpy(), [np.nan, np.inf, -1.0, 2.0])
    for fn in (F.hardshrink, F.softshrink, F.thresholded_relu):  # NaN takes no gradient (paddle's 0)
        w = pycoll.to_tensor([np.nan, 2.0], stop_gradient=False)
        fn(w).sum().backward()
        assert w.grad.numpy().tolist() == [0.0, 1.0]
    big = np.full((1, 16, 1, 1), 0.01, np.float32)
    big[0, 0] = 3000.0
    out = F.local_response_norm(pycoll.to_tensor(big), size=3, alpha=3.0, k=1e-4).numpy()[0, 8:12, 0, 0]
    np.testing.assert_allclose(out, [3.535534] * 4, rtol=1e-5)  # paddle (a running sum gave 10)
    huge = np.arange(1, 9, dtype=np.float32).reshape(1, 8, 1, 1) / 4
    huge[0, 0] = 1e30
    out = F.local_response_norm(pycoll.to_tensor(huge), size=3).numpy()[:, :, 0, 0]
    np.testing.assert_allclose(out[0], [0, 0, 0.749966, 0.9999219, 1.2498497, 1.4997424, 1.7495927, 1.999647],
                               rtol=1e-5)  # paddle


def test_norms_of_16_bit_inputs_with_float32_parameters_give_the_inputs_dtype():
    """AMP O2 keeps the norms' weights in float32: paddle's kernels take a float16 x with them and
    give float16, the gradient of x float16 and the weights' float32."""
    x = pycoll.rand([2, 4, 3, 3]).astype("float16")
    x.stop_gradient = False
    for layer in (pycoll.nn.LayerNorm(3), pycoll.nn.GroupNorm(2, 4), pycoll.nn.InstanceNorm2D(4)):
        out = layer(x)
        out.sum().backward()
        weight = layer.parameters()[0]
        assert out.dtype == pycoll.float16 and x.grad.dtype == pycoll.float16 and weight.grad.dtype == pycoll.float32
        wide = layer(x.detach().astype("float32")).numpy()
        np.testing.assert_allclose(out.numpy().astype(np.float32), wide, atol=2e-3)
        x.clear_gradient()


def test_maxout_picks_the_first_largest_of_each_group_on_either_layout():
    x = pycoll.to_tensor(np.array([1.0, 3.0, 3.0, 2.0, 5.0, 5.0]).reshape(1, 6, 1, 1), stop_gradient=False)
    out = pycoll.nn.functional.maxout(x, 2, axis=1)
    out.sum().backward()
    assert out.numpy().ravel().tolist() == [3.0, 3.0, 5.0] and x.grad.numpy().ravel().tolist() == [0, 1, 1, 0, 1, 0]
    nhwc = pycoll.to_tensor(np.arange(12.0).reshape(1, 1, 2, 6))
    assert pycoll.nn.functional.maxout(nhwc, 3, axis=-1).numpy().ravel().tolist() == [2.0, 5.0, 8.0, 11.0]
    same = pycoll.nn.functional.maxout(nhwc, 1, axis=-1)
    same.numpy()[...] = -1  # one per group: a tensor of its own
    assert nhwc.numpy().max() == 11.0


def test_dropout_in_evaluation_gives_a_new_tensor_as_paddles():
    """A probe: under eval, p = self.drop(self.pos); p.scale_(10) wrote into the parameter (paddle's
    dropout gives a new tensor outside training; p = 0 gives x itself, as paddle's)."""
    pos = pycoll.create_parameter([1, 4], "float32", default_initializer=pycoll.nn.initializer.Constant(1.0))
    drop = pycoll.nn.Dropout(0.3)
    drop.eval()
    with pycoll.no_grad():
        drop(pos).scale_(10)
    assert pos.numpy().tolist() == [[1.0] * 4]
    x = pycoll.ones([2, 3])
    assert F.dropout(x, 0.5, training=False) is not x and F.dropout(x, 0.0) is x
    y = pycoll.ones([3], "float32")
    y.stop_gradient = False
    F.dropout(y, 0.5, training=False).sum().backward()  # the copy passes the gradient on
    assert y.grad.numpy().tolist() == [1.0, 1.0, 1.0]
