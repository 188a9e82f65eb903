"""Layers, containers, dtype/device conversion, ParamAttr and initializers added for paddle parity.

Where a value is paddle's, it was read off Paddle 3.3.1 (CPU) on the same input; the rest are
checked against NumPy formulas.
"""
import math
import re

import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
import pycoll.nn.functional as F
from pycoll.nn import initializer as I


# ---- activation layers, Flatten, Identity ---------------------------------------------------------

@pytest.mark.parametrize("layer, fn", [
    (nn.LeakyReLU(0.2), lambda x: F.leaky_relu(x, 0.2)),
    (nn.Silu(), F.silu),
    (nn.ELU(0.5), lambda x: F.elu(x, 0.5)),
    (nn.Softplus(2, 5), lambda x: F.softplus(x, 2, 5)),
    (nn.Hardswish(), F.hardswish),
])
def test_activation_layers_call_their_functions(layer, fn):
    x = pycoll.to_tensor(np.linspace(-4, 4, 9).astype(np.float32))
    out = layer(x)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out.numpy(), fn(x).numpy())


def test_activation_reprs_are_paddles():
    assert repr(nn.LeakyReLU()) == "LeakyReLU(negative_slope=0.01)"
    assert repr(nn.Silu()) == "Silu(inplace=False)"
    assert repr(nn.ELU()) == "ELU(alpha=1.0)"
    assert repr(nn.Softplus()) == "Softplus(beta=1, threshold=20)"
    assert repr(nn.Hardswish()) == "Hardswish()"
    assert repr(nn.Flatten()) == "Flatten()" and repr(nn.Identity(3, a=1)) == "Identity()"
    assert repr(nn.L1Loss()) == "L1Loss()" and repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
    nn.ReLU(name="r"), nn.Tanh(name="t"), nn.Sigmoid(name="s"), nn.Hardswish(name="h")  # paddle's name=


def test_activation_formulas_in_float32():
    v = np.array([-30.0, -2.0, -0.5, 0.0, 0.5, 3.0, 25.0], dtype=np.float32)
    x = pycoll.to_tensor(v)
    sig = 1 / (1 + np.exp(-v.astype(np.float64)))
    np.testing.assert_allclose(F.silu(x).numpy(), v * sig, rtol=1e-6, atol=1e-30)
    np.testing.assert_allclose(F.elu(x, 0.7).numpy(), np.where(v > 0, v, 0.7 * np.expm1(v)), rtol=1e-6)
    np.testing.assert_allclose(F.softplus(x).numpy(), np.where(v > 20, v, np.log1p(np.exp(v))), rtol=1e-6)
    np.testing.assert_allclose(F.hardswish(x).numpy(), v * np.clip(v + 3, 0, 6) / 6, rtol=1e-6)
    for fn in (F.silu, F.elu, F.softplus, F.hardswish, F.leaky_relu):
        t = pycoll.to_tensor(v, stop_gradient=False)
        fn(t).sum().backward()
        assert fn(t).dtype == np.float32 and t.grad.dtype == np.float32
    with pytest.raises(TypeError, match="negative_slope"):
        F.leaky_relu(x, "0.1")
    with pytest.raises(ValueError, match="beta"):
        F.softplus(x, beta=0)


def test_activation_gradients_at_the_kinks_are_paddles():
    # paddle 3.3.1: leaky_relu'(0) = 1, elu'(0) = alpha, hardswish'(-3) = 0 and hardswish'(3) = 1
    x = pycoll.to_tensor(np.array([-3.0, 0.0, 3.0]), stop_gradient=False)
    F.leaky_relu(x, 0.1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.1, 1.0, 1.0])
    x.clear_gradient()
    F.elu(x, 0.7).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.7 * math.exp(-3), 0.7, 1.0])
    x.clear_gradient()
    F.hardswish(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.5, 1.0])


def test_flatten_and_identity():
    x = pycoll.ones([2, 3, 4, 5])
    assert nn.Flatten()(x).shape == [2, 60]  # paddle's default start_axis=1
    assert nn.Flatten(1, 2)(x).shape == [2, 12, 5]
    assert nn.Flatten(0, -1)(pycoll.ones([2, 3])).shape == [6]
    assert nn.Identity()(x) is x
    t = pycoll.to_tensor(np.arange(6.0).reshape(2, 3), stop_gradient=False)
    (nn.Flatten(0)(t) * pycoll.to_tensor(np.arange(6.0))).sum().backward()
    np.testing.assert_array_equal(t.grad.numpy(), np.arange(6.0).reshape(2, 3))


# ---- one_hot, normalize ---------------------------------------------------------------------------

def test_one_hot():
    out = F.one_hot(pycoll.to_tensor(np.array([[1, 0], [3, 2]])), 4)
    assert out.shape == [2, 2, 4] and out.dtype == np.float32  # paddle's dtype
    np.testing.assert_array_equal(out.numpy()[1, 0], [0, 0, 0, 1])
    np.testing.assert_array_equal(F.one_hot(pycoll.to_tensor([1, 3]), -1).numpy(),
                                  [[0, 1, 0, 0], [0, 0, 0, 1]])
    with pytest.raises(ValueError, match=r"\[0, 4\)"):
        F.one_hot(pycoll.to_tensor([1, 5]), 4)
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        F.one_hot(pycoll.to_tensor([-1, 2]), 3)
    with pytest.raises(TypeError, match="integer"):
        F.one_hot(pycoll.to_tensor([1.0]), 3)


def test_normalize_values_and_zero_rows():
    x = pycoll.to_tensor(np.array([[3.0, -4.0, 0.0], [0.0, 0.0, 0.0]]), stop_gradient=False)
    out = F.normalize(x)  # paddle's default axis=1
    np.testing.assert_allclose(out.numpy(), [[0.6, -0.8, 0.0], [0.0, 0.0, 0.0]])
    (out * pycoll.to_tensor(np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]]))).sum().backward()
    # paddle 3.3.1 gives exactly these: a zero row divides by epsilon
    np.testing.assert_allclose(x.grad.numpy(), [[0.32, 0.24, 0.6], [1e12, 1e12, 1e12]])
    np.testing.assert_allclose(F.normalize(pycoll.to_tensor([[3.0, -4.0]]), p=float("inf")).numpy(),
                               [[0.75, -1.0]])
    with pytest.raises(ValueError, match="p must"):
        F.normalize(x, p=0)


# ---- losses: layers, errors, dtypes ------------------------------------------------------------

def test_loss_layers_match_their_functions():
    rng = np.random.default_rng(5)
    x = pycoll.to_tensor(rng.standard_normal((4, 3)))
    y = pycoll.to_tensor(rng.standard_normal((4, 3)))
    p = pycoll.to_tensor(rng.uniform(0.05, 0.95, (4, 3)))
    b = pycoll.to_tensor((rng.uniform(size=(4, 3)) > 0.5).astype(np.float64))
    ids = pycoll.to_tensor(np.array([0, 2, 1, 2]))
    w = pycoll.to_tensor(np.array([0.5, 1.0, 2.0]))
    logp = F.log_softmax(x)
    pairs = [
        (nn.L1Loss("sum")(x, y), F.l1_loss(x, y, "sum")),
        (nn.SmoothL1Loss(delta=0.5)(x, y), F.smooth_l1_loss(x, y, delta=0.5)),
        (nn.BCELoss(w, "none")(p, b), F.binary_cross_entropy(p, b, w, "none")),
        (nn.BCEWithLogitsLoss(pos_weight=w)(x, b), F.binary_cross_entropy_with_logits(x, b, pos_weight=w)),
        (nn.NLLLoss(w, ignore_index=1)(logp, ids), F.nll_loss(logp, ids, w, 1)),
        (nn.KLDivLoss("batchmean")(logp, p), F.kl_div(logp, p, "batchmean")),
        (nn.CrossEntropyLoss(w, label_smoothing=0.1)(x, ids), F.cross_entropy(x, ids, w, label_smoothing=0.1)),
        (nn.MSELoss()(x, y), F.mse_loss(x, y)),
    ]
    for got, want in pairs:
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    for cls in (nn.L1Loss, nn.SmoothL1Loss, nn.BCELoss, nn.BCEWithLogitsLoss, nn.NLLLoss, nn.KLDivLoss,
                nn.CrossEntropyLoss, nn.MSELoss):
        with pytest.raises(ValueError, match="reduction"):
            cls(reduction="avg")


def test_cross_entropy_mean_over_a_padded_batch():
    # paddle: with the default ignore_index=-100, 'mean' divides by every row (padding included);
    # with ignore_index >= 0 by the rows that count. Half the rows padded: a 2x difference.
    logits = np.random.default_rng(1).standard_normal((4, 5))
    per_row = -np.log(np.exp(logits) / np.exp(logits).sum(1, keepdims=True))[np.arange(4), [1, 3, 0, 0]]
    x = pycoll.to_tensor(logits)
    padded = F.cross_entropy(x, pycoll.to_tensor(np.array([1, 3, -100, -100])))
    assert float(padded) == pytest.approx(per_row[:2].sum() / 4)
    by_zero = F.cross_entropy(x, pycoll.to_tensor(np.array([1, 3, 0, 0])), ignore_index=0)
    assert float(by_zero) == pytest.approx(per_row[:2].sum() / 2)
    all_ignored = F.cross_entropy(x, pycoll.to_tensor(np.array([0, 0, 0, 0])), ignore_index=0)
    assert float(all_ignored) == 0.0  # paddle divides by count + (count == 0)


def test_cross_entropy_argument_errors():
    x = pycoll.to_tensor(np.zeros((2, 3)))
    ids = pycoll.to_tensor(np.array([0, 1]))
    soft = pycoll.to_tensor(np.full((2, 3), 1 / 3))
    with pytest.raises(ValueError, match="ignore_index"):
        F.cross_entropy(x, soft, soft_label=True, ignore_index=1)
    with pytest.raises(ValueError, match="label_smoothing"):
        F.cross_entropy(x, ids, label_smoothing=1.5)
    with pytest.raises(ValueError, match="label_smoothing needs"):
        F.cross_entropy(x, pycoll.to_tensor(np.array([0, -100])), label_smoothing=0.1)
    with pytest.raises(ValueError, match="dimensions"):
        F.cross_entropy(x, pycoll.to_tensor(np.zeros((2, 3, 1), np.int64)))
    with pytest.raises(ValueError, match="axis"):
        F.cross_entropy(x, ids, axis=2)
    with pytest.raises(ValueError, match="weight must have shape"):
        F.cross_entropy(x, ids, weight=pycoll.to_tensor(np.ones(4)))
    with pytest.raises(TypeError, match="soft labels must be floating"):
        F.cross_entropy(x, pycoll.to_tensor(np.zeros((2, 3), np.int64)), soft_label=True)
    with pytest.raises(ValueError, match="soft label shape"):
        F.cross_entropy(x, pycoll.to_tensor(np.zeros((2, 1))), soft_label=True)


def test_other_loss_argument_errors():
    p = pycoll.to_tensor(np.array([0.5, 1.5]))
    with pytest.raises(ValueError, match=r"probabilities in \[0, 1\]"):
        F.binary_cross_entropy(p, pycoll.to_tensor(np.array([1.0, 0.0])))
    with pytest.raises(ValueError, match="label shape"):
        F.binary_cross_entropy(pycoll.to_tensor(np.array([0.5, 0.5])), pycoll.to_tensor(np.array([[1.0, 0.0]])))
    with pytest.raises(ValueError, match="2 or more dimensions"):
        F.nll_loss(pycoll.to_tensor(np.array([-1.0, -2.0])), pycoll.to_tensor(np.array([1])))
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        F.nll_loss(pycoll.to_tensor(np.zeros((2, 3))), pycoll.to_tensor(np.array([2, 3])))
    with pytest.raises(ValueError, match="delta"):
        F.smooth_l1_loss(p, p, delta=0)
    with pytest.raises(ValueError, match="batchmean"):
        F.kl_div(p, p, reduction="avg")


def test_nll_loss_with_every_label_ignored_is_zero():
    x = pycoll.to_tensor(np.log(np.full((2, 3), 1 / 3)), stop_gradient=False)
    out = F.nll_loss(x, pycoll.to_tensor(np.array([1, 1])), ignore_index=1)
    out.backward()
    assert float(out) == 0.0 and np.all(x.grad.numpy() == 0)  # paddle 3.3.1 returns 0 too


def test_bce_with_logits_gradient_at_zero_is_the_true_one():
    # Paddle 3.3.1's kernel (no pos_weight) gives sigmoid(0) - label - 1 at a logit of exactly 0,
    # -0.5 for label 0; pycoll gives the derivative, sigmoid(0) - label, as paddle does everywhere else
    x = pycoll.to_tensor(np.array([0.0, 0.0, 1e-9]), stop_gradient=False)
    F.binary_cross_entropy_with_logits(x, pycoll.to_tensor(np.array([0.0, 1.0, 0.0])), reduction="sum").backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.5, -0.5, 0.5])


@pytest.mark.parametrize("fn, args", [
    (F.l1_loss, ("x", "y")), (F.smooth_l1_loss, ("x", "y")), (F.mse_loss, ("x", "y")),
    (F.binary_cross_entropy, ("p", "b")), (F.binary_cross_entropy_with_logits, ("x", "b")),
    (F.kl_div, ("x", "p")), (F.nll_loss, ("x", "ids")), (F.cross_entropy, ("x", "ids")),
])
def test_losses_keep_float32(fn, args):
    rng = np.random.default_rng(0)
    values = {"x": rng.standard_normal((4, 3)), "y": rng.standard_normal((4, 3)),
              "p": rng.uniform(0.1, 0.9, (4, 3)), "b": (rng.uniform(size=(4, 3)) > 0.5) * 1.0}
    tensors = {k: pycoll.to_tensor(v.astype(np.float32), stop_gradient=k != "x") for k, v in values.items()}
    tensors["ids"] = pycoll.to_tensor(np.array([0, 2, 1, 1]))
    inputs = [tensors[a] for a in args]
    if fn is F.binary_cross_entropy:
        inputs[0].stop_gradient = False
    out = fn(*inputs)
    out.backward()
    assert out.dtype == np.float32 and inputs[0].grad.dtype == np.float32


def test_kl_div_promotes_a_float64_label():
    out = F.kl_div(pycoll.to_tensor(np.array([-1.0], np.float32)), pycoll.to_tensor(np.array([0.5])))
    assert out.dtype == np.float64  # paddle 3.3.1 casts the input up


# ---- Embedding padding ----------------------------------------------------------------------------

@pytest.mark.parametrize("padding_idx, row", [(1, 1), (-1, 3), (0, 0)])
def test_embedding_zeroes_the_padding_row_at_creation(padding_idx, row):
    emb = nn.Embedding(4, 3, padding_idx=padding_idx, weight_attr=I.Constant(2.0))
    w = emb.weight.numpy()
    assert np.all(w[row] == 0) and np.all(np.delete(w, row, axis=0) == 2.0)  # as paddle's


def test_embedding_without_padding_keeps_every_row():
    pycoll.seed(0)
    assert np.all(np.abs(nn.Embedding(4, 3).weight.numpy()).sum(1) > 0)


# ---- containers -------------------------------------------------------------------------------

def test_layer_dict():
    ld = nn.LayerDict({"b": nn.Linear(2, 2), "a": nn.ReLU()})
    assert list(ld.keys()) == ["b", "a"] and len(ld) == 2 and "a" in ld  # insertion order, as paddle
    assert [n for n, _ in ld.named_parameters()] == ["b.weight", "b.bias"]
    assert isinstance(ld.pop("a"), nn.ReLU) and list(ld) == ["b"]
    ld["c"] = nn.Tanh()
    ld.update([("d", nn.ReLU())])
    assert list(ld) == ["b", "c", "d"] and [k for k, _ in ld.items()] == ["b", "c", "d"]
    assert isinstance(list(ld.values())[0], nn.Linear) and isinstance(ld["c"], nn.Tanh)
    del ld["c"]
    assert list(ld.keys()) == ["b", "d"]
    ld.clear()
    assert len(ld) == 0 and list(ld.state_dict()) == []
    assert list(nn.LayerDict([("z", nn.ReLU()), ("y", nn.ReLU())])) == ["z", "y"]
    with pytest.raises(ValueError, match="pair"):
        ld.update([nn.ReLU()])
    with pytest.raises(KeyError):
        del ld["nope"]


def test_parameter_list():
    pl = nn.ParameterList([pycoll.create_parameter([2], "float32") for _ in range(2)])
    assert len(pl) == 2 and [n for n, _ in pl.named_parameters()] == ["0", "1"]
    pl.append(pycoll.create_parameter([3], "float32"))
    assert [p.shape for p in pl] == [[2], [2], [3]]
    pl[0] = pycoll.create_parameter([5], "float32")
    assert [p.shape for p in pl] == [[5], [2], [3]] and list(pl.state_dict()) == ["0", "1", "2"]
    assert pl[-1].shape == [3] and len(pl.parameters()) == 3
    with pytest.raises(TypeError, match="Parameter"):
        pl.append(pycoll.ones([2]))


# ---- to / astype / float / double ------------------------------------------------------------

class _WithBuffers(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)
        self.norm = nn.LayerNorm(2)
        self.register_buffer("idx", pycoll.to_tensor(np.array([1, 2])))
        self.register_buffer("scale", pycoll.to_tensor(np.array([1.0, 2.0], np.float32)))


def test_to_dtype_casts_everything_in_place_with_gradients():
    net = _WithBuffers()
    weight = net.fc.weight
    net.fc(pycoll.ones([1, 2])).sum().backward()
    assert net.to(dtype="float64") is net
    assert net.fc.weight is weight and weight.dtype == np.float64 and weight.grad.dtype == np.float64
    assert net.idx.dtype == np.float64 and net.scale.dtype == np.float64  # paddle casts int buffers too
    assert nn.Linear(2, 2).to() is not None and net.to() is net
    net.fc(pycoll.ones([1, 2], dtype="float64"))  # computes in the new dtype
    with pytest.raises(ValueError, match="device"):
        net.to(device=3)
    with pytest.raises(ValueError, match="place"):
        net.to(device="tpu")
    net.to("cpu")
    assert weight.place == "cpu"


def test_float_double_astype_follow_paddle():
    net = _WithBuffers()
    net.double()
    assert all(p.dtype == np.float64 for p in net.parameters())
    assert net.idx.dtype == np.float64  # paddle's double() casts integer buffers too
    net = _WithBuffers().to(dtype="float64")
    net.float()
    assert all(p.dtype == np.float32 for p in net.parameters()) and net.scale.dtype == np.float32
    net = _WithBuffers()
    net.float16(excluded_layers=[nn.LayerNorm])
    assert net.fc.weight.dtype == np.float16 and net.norm.weight.dtype == np.float32
    assert net.idx.dtype == np.int64  # float()/float16() leave integer tensors
    # paddle 3.3.1: create_parameter without a dtype takes the default dtype, not the layer's
    assert nn.Linear(2, 2).to(dtype="float64").create_parameter([1]).dtype == np.float32
    net = _WithBuffers()
    net.astype("float64")
    assert all(p.dtype == np.float64 for p in net.parameters())
    assert net.scale.dtype == np.float32 and net.idx.dtype == np.int64  # paddle 3.3.1 leaves buffers
    with pytest.raises(ValueError, match="dtype must be one of"):
        net.astype("foo")
    with pytest.raises(TypeError, match="excluded_layers"):
        net.float(excluded_layers="LayerNorm")


# ---- ParamAttr -----------------------------------------------------------------------------------

def test_param_attr_learning_rate_and_need_clip_reach_the_parameter():
    attr = nn.ParamAttr(learning_rate=0.5, need_clip=False, do_model_average=False)
    layer = nn.Linear(2, 3, weight_attr=attr)
    w, b = layer.weight, layer.bias
    assert w.optimize_attr == {"learning_rate": 0.5} and w.need_clip is False  # paddle's names
    assert w.do_model_average is False and w.regularizer is None
    assert b.optimize_attr == {"learning_rate": 1.0} and b.need_clip is True
    assert vars(nn.ParamAttr()) == {"name": None, "initializer": None, "learning_rate": 1.0,
                                    "regularizer": None, "trainable": True, "do_model_average": True,
                                    "need_clip": True}
    plain = pycoll.create_parameter([2], "float32")
    assert plain.optimize_attr == {"learning_rate": 1.0} and plain.need_clip
    with pytest.raises(TypeError, match="learning_rate"):
        nn.ParamAttr(learning_rate="x")


# ---- initializers ------------------------------------------------------------------------------

def _init(shape, initializer):
    pycoll.seed(0)
    return pycoll.create_parameter(shape, "float64", default_initializer=initializer).numpy()


def test_kaiming_initializers():
    assert abs(_init([400, 300], I.KaimingNormal()).std() - math.sqrt(2 / 400)) < 0.01 * math.sqrt(2 / 400)
    std = math.sqrt(2 / 1.04 / 300)  # leaky_relu gain with slope 0.2, fan_out
    w = _init([400, 300], I.KaimingNormal(mode="fan_out", nonlinearity="leaky_relu", negative_slope=0.2))
    assert abs(w.std() - std) < 0.01 * std
    limit = 5 / 3 * math.sqrt(3 / 100)  # tanh gain, the fan_in argument
    w = _init([400, 300], I.KaimingUniform(fan_in=100, nonlinearity="tanh"))
    assert limit * 0.99 < np.abs(w).max() <= limit
    conv = _init([8, 4, 3, 3], I.KaimingUniform())  # fan_in = 4 * 3 * 3
    assert np.abs(conv).max() <= math.sqrt(2) * math.sqrt(3 / 36)
    with pytest.raises(ValueError, match="mode"):
        I.KaimingNormal(mode="bad")
    with pytest.raises(ValueError, match="nonlinearity"):
        I.KaimingNormal(nonlinearity="foo")
    assert I.calculate_gain("tanh") == 5 / 3 and I.calculate_gain("leaky_relu", 1.0) == 1.0


def test_truncated_normal_bounds_are_absolute():
    w = _init([20000], I.TruncatedNormal(mean=0.0, std=2.0, a=-1.0, b=3.0))
    assert w.min() >= -1.0 and w.max() <= 3.0 and w.min() < -0.99 and w.max() > 2.99
    w = _init([5000], I.TruncatedNormal(mean=5.0, std=1.0))  # [a, b] = [-2, 2] far from the mean
    assert w.min() >= -2.0 and w.max() <= 2.0 and 1.5 < w.mean() < 1.9  # paddle: 1.715
    w = _init([20000], I.TruncatedNormal(mean=1.0, std=2.0))
    assert abs(w.mean() - 0.29) < 0.05  # paddle: 0.290
    with pytest.raises(ValueError, match="a must be < b"):
        I.TruncatedNormal(a=1.0, b=0.0)


def test_assign_and_named_initializers():
    np.testing.assert_array_equal(_init([2, 3], I.Assign(np.arange(6.0).reshape(2, 3))),
                                  np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(_init([2], I.Assign(pycoll.to_tensor([4.0, 5.0]))), [4.0, 5.0])
    with pytest.raises(ValueError, match="shape"):
        _init([2, 3], I.Assign(np.arange(5.0)))
    with pytest.raises(TypeError, match="numeric"):
        I.Assign("x")
    I.Normal(name="n"), I.Uniform(name="u"), I.XavierNormal(name="x"), I.XavierUniform(name="x")


def test_a_users_initializer_overrides_forward_as_paddles_documents():
    class Sevens(I.Initializer):
        def forward(self, param, block=None):
            param.set_value(pycoll.full(param.shape, 7.0, dtype=param.dtype))
            return param
    layer = pycoll.nn.Linear(2, 2, weight_attr=Sevens())
    assert layer.weight.numpy().tolist() == [[7.0, 7.0], [7.0, 7.0]]
    with pycoll.LazyGuard():
        lazy = pycoll.nn.Linear(2, 2, weight_attr=Sevens())
    lazy.weight.initialize()
    assert lazy.weight.numpy().tolist() == [[7.0, 7.0], [7.0, 7.0]]

    class Nothing(I.Initializer):
        pass
    with pytest.raises(NotImplementedError, match="Nothing: an Initializer subclass defines forward"):
        pycoll.nn.Linear(2, 2, weight_attr=Nothing())


@pytest.mark.parametrize("cls", [I.XavierUniform, I.XavierNormal])
def test_a_negative_xavier_gain_spreads_as_its_magnitude(cls):
    values = _init([200, 300], cls(gain=-2.0))
    bound = 2.0 * np.sqrt(6.0 / 500)
    if cls is I.XavierUniform:
        assert values.min() >= -bound and values.max() <= bound and values.max() > 0.9 * bound
    else:
        assert abs(values.std() - 2.0 * np.sqrt(2.0 / 500)) < 0.01 * bound


@pytest.mark.parametrize("fn, kwargs, words", [
    (F.binary_cross_entropy_with_logits, {"pos_weight": [1.0, 2.0, 3.0]},
     "binary_cross_entropy_with_logits: logit of shape [4, 5] and pos_weight of shape [3] do not broadcast"),
    (F.binary_cross_entropy_with_logits, {"weight": [1.0, 2.0, 3.0]},
     "binary_cross_entropy_with_logits: input of shape [4, 5] and weight of shape [3] do not broadcast"),
    (lambda x, y, **kw: F.binary_cross_entropy(F.sigmoid(x), y, **kw), {"weight": [1.0, 2.0, 3.0]},
     "binary_cross_entropy: input of shape [4, 5] and weight of shape [3] do not broadcast"),
])
def test_binary_cross_entropy_names_a_weight_that_does_not_broadcast(fn, kwargs, words):
    x, y = pycoll.zeros([4, 5]), pycoll.ones([4, 5])
    kwargs = {key: pycoll.to_tensor(value) for key, value in kwargs.items()}
    with pytest.raises(ValueError, match=re.escape(words)):
        fn(x, y, **kwargs)


def test_a_layers_own_dtype_is_not_create_parameters_default():
    """paddle 3.3.1: ``super().__init__(dtype='float64')`` then ``create_parameter([2])`` makes a
    float32 parameter (the default dtype; pass ``dtype=self._dtype`` for the layer's), so it meets
    a float32 Linear; the layers that take a dtype argument make their parameters in it."""
    class Mixed(nn.Layer):
        def __init__(self):
            super().__init__(dtype="float64")
            self.w = self.create_parameter([2])
            self.own = self.create_parameter([2], dtype=self._dtype)

    mixed = Mixed()
    assert mixed.w.dtype == np.float32 and mixed.own.dtype == np.float64
    assert nn.LayerNorm(4, dtype="float64").weight.dtype == np.float64
    assert nn.Embedding(4, 2, dtype="float64").weight.dtype == np.float64
    assert nn.Conv2D(2, 2, 3, dtype="float64").bias.dtype == np.float64
