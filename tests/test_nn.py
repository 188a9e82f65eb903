"""nn.Layer bookkeeping, the layers, initialisation, losses, and the seed examples' single-process parts."""
import copy
import math
import re

import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
import pycoll.nn.functional as F
import pycoll.optimizer as opt
from pycoll import _special
from pycoll.autograd import PyLayer


class LinearNet(nn.Layer):
    def __init__(self):
        super().__init__()
        self._linear1 = nn.Linear(10, 10)
        self._linear2 = nn.Linear(10, 1)

    def forward(self, x):
        return self._linear2(self._linear1(x))


# ---- Layer bookkeeping -------------------------------------------------------------------

def test_parameters_are_registered_in_assignment_order():
    net = LinearNet()
    names = [n for n, _ in net.named_parameters()]
    assert names == ["_linear1.weight", "_linear1.bias", "_linear2.weight", "_linear2.bias"]
    assert [id(p) for p in net.parameters()] == [id(net._linear1.weight), id(net._linear1.bias),
                                                 id(net._linear2.weight), id(net._linear2.bias)]
    assert all(isinstance(p, nn.Parameter) and not p.stop_gradient for p in net.parameters())
    assert net.parameters(include_sublayers=False) == []
    assert net.sublayers() == [net._linear1, net._linear2]
    assert [n for n, _ in net.named_sublayers(include_self=True)] == ["", "_linear1", "_linear2"]
    assert list(net.children()) == [net._linear1, net._linear2]


def test_parameter_names_are_unique_and_paddle_like():
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    names = [p.name for p in a.parameters() + b.parameters()]
    assert len(set(names)) == 4
    assert a.weight.name.startswith("linear_") and a.weight.name.endswith(".w_0")
    assert a.bias.name.endswith(".b_0")


def test_shared_parameters_are_listed_once():
    class Tied(nn.Layer):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(3, 3)
            self.b = nn.Linear(3, 3)
            self.b.weight = self.a.weight

    model = Tied()
    assert len(model.parameters()) == 3
    assert "b.weight" in model.state_dict()


def test_buffers_and_persistable_flag():
    layer = nn.Layer()
    layer.register_buffer("running", pycoll.zeros([2]))
    layer.register_buffer("scratch", pycoll.ones([2]), persistable=False)
    assert [n for n, _ in layer.named_buffers()] == ["running", "scratch"]
    assert list(layer.state_dict()) == ["running"]
    layer.running = pycoll.ones([2])
    assert layer.buffers()[0] is layer.running
    with pytest.raises(TypeError, match="buffer"):
        layer.running = 3


def test_attribute_assignment_rules():
    layer = nn.Linear(2, 2)
    layer.bias = None
    assert [n for n, _ in layer.named_parameters()] == ["weight"]
    with pytest.raises(TypeError, match="parameter"):
        layer.weight = pycoll.ones([2, 2])
    del layer.weight
    assert layer.parameters() == []

    class Forgot(nn.Layer):
        def __init__(self):
            self.lin = nn.Linear(2, 2)
    with pytest.raises(RuntimeError, match="super"):
        Forgot()


def test_add_parameter_add_sublayer_create_parameter():
    layer = nn.Layer()
    p = layer.create_parameter([3], default_initializer=nn.initializer.Constant(2.0))
    layer.add_parameter("p", p)
    sub = layer.add_sublayer("sub", nn.ReLU())
    assert layer.p is p and layer.sub is sub and np.all(p.numpy() == 2.0)
    assert layer.create_parameter([3], attr=False) is None
    with pytest.raises(ValueError, match="name"):
        layer.add_parameter("a.b", p)
    with pytest.raises(TypeError, match="Parameter"):
        layer.add_parameter("q", pycoll.ones([1]))
    frozen = layer.create_parameter([2], attr=nn.ParamAttr(name="frozen_w", trainable=False))
    assert frozen.name == "frozen_w" and frozen.stop_gradient and not frozen.trainable


def test_train_eval_and_apply():
    net = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    net.eval()
    assert not net.training and not net[1].training
    net.train()
    assert all(layer.training for layer in net.sublayers(include_self=True))
    visited = []
    net.apply(lambda layer: visited.append(type(layer).__name__))
    assert visited == ["Linear", "Dropout", "Sequential"]


def test_state_dict_and_set_state_dict_copy_in_place():
    src, dst = LinearNet(), LinearNet()
    state = src.state_dict()
    assert list(state) == ["_linear1.weight", "_linear1.bias", "_linear2.weight", "_linear2.bias"]
    assert state["_linear1.weight"] is src._linear1.weight
    weight = dst._linear1.weight
    before = weight.array
    missing, unexpected = dst.set_state_dict({**state, "extra": pycoll.ones([1])})
    assert missing == [] and unexpected == ["extra"]
    assert dst._linear1.weight is weight and weight.array is before
    for k, v in dst.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), state[k].numpy())
    dst.set_state_dict({k: v.numpy().copy() for k, v in state.items()})  # arrays are fine too


def test_layer_clear_gradients():
    net = LinearNet()
    net(pycoll.ones([2, 10])).sum().backward()
    net.clear_gradients()
    assert all(np.all(p.grad.numpy() == 0) for p in net.parameters())
    net.clear_gradients(set_to_zero=False)
    assert all(p.grad is None for p in net.parameters())


def test_set_state_dict_skips_missing_and_mismatched_keys_with_warnings(caplog):
    # paddle 3.3.1: a missing key or a shape mismatch is skipped with a warning, the rest loads;
    # missing_keys lists both, unexpected_keys every key that loaded nothing (the mismatched one too)
    net = LinearNet()
    original_bias = net._linear2.bias.numpy().copy()
    state = {k: v.numpy().copy() + 1 for k, v in net.state_dict().items()}
    del state["_linear2.bias"]
    state["_linear2.weight"] = np.zeros((3, 3), np.float32)
    state["extra"] = np.ones(2, np.float32)
    with caplog.at_level("WARNING", logger="pycoll"), pytest.warns(UserWarning) as caught:
        missing, unexpected = net.set_state_dict(state)
    assert missing == ["_linear2.weight", "_linear2.bias"]  # paddle's order: the layer's
    assert unexpected == ["_linear2.weight", "extra"]
    assert [str(w.message) for w in caught] == [  # paddle's warnings, word for word
        "Skip loading for _linear2.weight. _linear2.weight receives a shape [3, 3], but the expected shape is [10, 1].",
        "Skip loading for _linear2.bias. _linear2.bias is not found in the provided dict."]
    assert any("extra" in r.getMessage() for r in caplog.records if r.name == "pycoll")
    np.testing.assert_array_equal(net._linear1.weight.numpy(), state["_linear1.weight"])  # loaded
    np.testing.assert_array_equal(net._linear2.bias.numpy(), original_bias)  # skipped


def test_set_state_dict_dtype_mismatch_raises_and_copies_nothing():
    net = LinearNet()
    original = net._linear1.weight.numpy().copy()
    state = {k: v.numpy().copy() + 1 for k, v in net.state_dict().items()}
    state["_linear1.bias"] = np.zeros(10)  # float64 into float32 (paddle: an assertion error)
    with pytest.raises(ValueError, match="_linear1.bias: dtype float64"):
        net.set_state_dict(state)
    np.testing.assert_array_equal(net._linear1.weight.numpy(), original)
    with pytest.raises(TypeError, match="dict"):
        net.set_state_dict([1])


def test_set_state_dict_by_parameter_name():
    src, dst = nn.Linear(2, 3), nn.Linear(2, 3)
    by_name = {dst.weight.name: src.weight, dst.bias.name: src.bias}
    dst.set_state_dict(by_name, use_structured_name=False)
    np.testing.assert_array_equal(dst.weight.numpy(), src.weight.numpy())


def test_deepcopy_of_a_layer_is_independent():
    net = LinearNet()
    clone = copy.deepcopy(net)
    clone._linear1.weight.array[...] = 0
    assert not np.all(net._linear1.weight.numpy() == 0)
    assert [n for n, _ in clone.named_parameters()] == [n for n, _ in net.named_parameters()]


def test_repr_lists_sublayers():
    text = repr(LinearNet())
    assert "(_linear1): Linear(in_features=10, out_features=10, dtype=float32)" in text  # paddle's
    shared = nn.Linear(2, 3)
    line = "Linear(in_features=2, out_features=3, dtype=float32)"
    assert repr(nn.Sequential(shared, shared)) == f"Sequential(\n  (0): {line}\n  (1): {line}\n)"  # each entry


# ---- initialisation ----------------------------------------------------------------------

def test_linear_default_init_is_xavier_uniform_and_zero_bias():
    pycoll.seed(0)
    layer = nn.Linear(300, 200)
    w = layer.weight.numpy()
    limit = math.sqrt(6.0 / 500)
    assert layer.weight.shape == [300, 200] and w.dtype == np.float32
    assert np.abs(w).max() <= limit and np.abs(w).max() > 0.95 * limit
    assert abs(w.std() - limit / math.sqrt(3)) < 0.01 * limit
    assert np.all(layer.bias.numpy() == 0)


def test_embedding_default_init_is_xavier_normal():
    pycoll.seed(0)
    emb = nn.Embedding(400, 100)
    assert abs(emb.weight.numpy().std() - math.sqrt(2.0 / 500)) < 0.02 * math.sqrt(2.0 / 500)


def test_init_depends_only_on_the_seed():
    pycoll.seed(42)
    a = [p.numpy().copy() for p in LinearNet().parameters()]
    pycoll.seed(42)
    b = [p.numpy().copy() for p in LinearNet().parameters()]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("attr, check", [
    (nn.initializer.Constant(0.5), lambda w: np.all(w == 0.5)),
    (nn.ParamAttr(initializer=nn.initializer.Uniform(-0.1, 0.1)), lambda w: np.abs(w).max() <= 0.1),
    (nn.initializer.Normal(1.0, 0.01), lambda w: abs(w.mean() - 1.0) < 0.01),
    (nn.initializer.XavierNormal(), lambda w: abs(w.std() - math.sqrt(2.0 / 80)) < 0.05),
    (nn.initializer.XavierUniform(gain=2.0), lambda w: np.abs(w).max() <= 2 * math.sqrt(6.0 / 80)),
])
def test_weight_attr_initializers(attr, check):
    assert check(nn.Linear(40, 40, weight_attr=attr).weight.numpy())


def test_bias_attr_false_and_bad_attr():
    assert nn.Linear(2, 2, bias_attr=False).bias is None
    with pytest.raises(TypeError, match="attr"):
        nn.Linear(2, 2, weight_attr=3)
    with pytest.raises(ValueError, match="in_features must be a non-negative int, got -1"):
        nn.Linear(-1, 2)  # 0 is paddle's empty layer (tests/test_zero_size.py)


# ---- layers and functional ---------------------------------------------------------------

def test_linear_forward():
    layer = nn.Linear(3, 2)
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    expected = x @ layer.weight.numpy() + layer.bias.numpy()
    np.testing.assert_allclose(layer(pycoll.to_tensor(x)).numpy(), expected, rtol=1e-5)
    with pytest.raises(ValueError, match="features"):
        layer(pycoll.ones([4, 5]))


@pytest.mark.parametrize("x_shape, w_shape", [((2, 3, 4, 6), (6, 5)), ((6,), (6, 5)), ((0, 3, 6), (6, 5)),
                                              ((4, 6), (6, 5)), ((2, 3, 6), (6, 0)), ((3, 0), (0, 4))])
@pytest.mark.parametrize("op", ["linear", "matmul"])
def test_products_of_stacked_rows_and_a_matrix_and_their_gradients(op, x_shape, w_shape):
    """linear and matmul fold x's leading dims into rows for one 2-D product; values and
    gradients are NumPy's stacked matmul, empty shapes included"""
    rng = np.random.default_rng(1)
    xa, wa = rng.standard_normal(x_shape).astype(np.float32), rng.standard_normal(w_shape).astype(np.float32)
    x, w = pycoll.to_tensor(xa, stop_gradient=False), pycoll.to_tensor(wa, stop_gradient=False)
    b = pycoll.to_tensor(np.ones(w_shape[-1], np.float32), stop_gradient=False)
    out = F.linear(x, w, b) - b if op == "linear" else pycoll.matmul(x, w)
    want = np.matmul(xa, wa)
    assert out.shape == list(want.shape)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)
    g = rng.standard_normal(want.shape).astype(np.float32)
    (out * pycoll.to_tensor(g)).sum().backward()
    rows = math.prod(x_shape[:-1])
    np.testing.assert_allclose(x.grad.numpy(), g @ wa.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w.grad.numpy(), xa.reshape(rows, w_shape[0]).T @ g.reshape(rows, w_shape[1]),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("x_shape, y_shape, words", [
    ([3, 5], [4, 5], "x's last dimension (5) must equal y's second-to-last dimension (4)"),
    ([5], [4], "x's last dimension (5) must equal y's size (4)"),
    ([2, 3, 4], [3, 4, 2], "the batch dimensions of x [2] and y [3] do not broadcast")])
def test_matmul_of_shapes_that_do_not_multiply_names_x_and_y(x_shape, y_shape, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        pycoll.matmul(pycoll.ones(x_shape), pycoll.ones(y_shape))


def test_embedding_lookup_and_padding():
    emb = nn.Embedding(5, 3, padding_idx=-1)
    assert emb.padding_idx == -1 and "padding_idx=-1" in repr(emb)  # as given (paddle 3.3.1; torch's is 4)
    ids = pycoll.to_tensor([[0, 4], [2, 2]])
    out = emb(ids)
    assert out.shape == [2, 2, 3]
    np.testing.assert_array_equal(out.numpy()[0, 0], emb.weight.numpy()[0])
    assert np.all(out.numpy()[0, 1] == 0)
    out.sum().backward()
    grad = emb.weight.grad.numpy()
    np.testing.assert_array_equal(grad[:, 0], [1, 0, 2, 0, 0])
    with pytest.raises(TypeError, match="integer"):
        emb(pycoll.ones([2]))


def test_layer_norm_forward():
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    ln = nn.LayerNorm(4)
    assert ln.weight.shape == [4] and np.all(ln.weight.numpy() == 1)
    expected = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(ln(pycoll.to_tensor(x)).numpy(), expected, rtol=1e-4, atol=1e-5)
    ln2 = nn.LayerNorm([3, 4])
    assert ln2.weight.shape == [12]
    assert ln2(pycoll.to_tensor(x)).shape == [2, 3, 4]
    with pytest.raises(ValueError, match="normalized_shape"):
        ln(pycoll.ones([2, 5]))


def test_activations():
    x = np.linspace(-3, 3, 13).astype(np.float32)
    t = pycoll.to_tensor(x)
    np.testing.assert_allclose(nn.ReLU()(t).numpy(), np.maximum(x, 0))
    np.testing.assert_allclose(nn.Tanh()(t).numpy(), np.tanh(x), rtol=1e-6)
    np.testing.assert_allclose(nn.Sigmoid()(t).numpy(), 1 / (1 + np.exp(-x)), rtol=1e-6)
    exact = np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x.astype(np.float64)])
    np.testing.assert_allclose(nn.GELU()(t).numpy(), exact, atol=1e-6)
    tanh_form = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(nn.GELU(approximate=True)(t).numpy(), tanh_form, rtol=1e-5, atol=1e-6)
    sm = nn.Softmax()(pycoll.to_tensor(np.array([[1.0, 2.0, 1000.0]]))).numpy()
    np.testing.assert_allclose(sm.sum(), 1.0) and np.testing.assert_allclose(sm[0, 2], 1.0)
    assert nn.GELU()(t).dtype == np.float32


def test_erf_fit_accuracy():
    # float64 to double precision (paddle 3.3.1 matches math.erf to 4e-16 here); float32 by its fit
    xs = np.linspace(-6, 6, 2001)
    exact = np.array([math.erf(v) for v in xs])
    assert np.abs(_special.erf(xs) - exact).max() < 7e-16
    assert np.abs(_special.erf(xs.astype(np.float32)) - exact).max() < 2.5e-7
    assert _special.erf(np.array([np.inf, -np.inf, -0.0])).tolist() == [1.0, -1.0, 0.0]
    assert np.signbit(_special.erf(np.array([-0.0])))[0] and np.isnan(_special.erf(np.array([np.nan])))[0]
    # exact gelu in float64: 0.5 x (1 + erf(x / sqrt 2)), now to rounding
    g = nn.GELU()(pycoll.to_tensor(xs)).numpy()
    np.testing.assert_allclose(g, [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in xs], rtol=0, atol=2e-15)


def test_dropout_train_and_eval():
    pycoll.seed(3)
    x = pycoll.ones([200, 100])
    drop = nn.Dropout(p=0.3)
    out = drop(x).numpy()
    zero_fraction = (out == 0).mean()
    assert abs(zero_fraction - 0.3) < 0.02
    np.testing.assert_allclose(out[out != 0], 1 / 0.7, rtol=1e-6)
    drop.eval()
    assert drop(x) is not x and drop(x).numpy().tolist() == x.numpy().tolist()  # a new tensor, as paddle's
    pycoll.seed(3)
    np.testing.assert_array_equal(nn.Dropout(0.3)(x).numpy(), out)
    assert np.all(F.dropout(x, p=1.0).numpy() == 0)
    with pytest.raises(ValueError, match="p must be"):
        nn.Dropout(1.5)


def test_mse_loss():
    a = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    b = np.array([[0.0, 2.0], [1.0, 1.0]], dtype=np.float32)
    ta, tb = pycoll.to_tensor(a), pycoll.to_tensor(b)
    assert float(nn.MSELoss()(ta, tb)) == pytest.approx(((a - b) ** 2).mean())
    assert float(nn.MSELoss("sum")(ta, tb)) == pytest.approx(((a - b) ** 2).sum())
    np.testing.assert_allclose(nn.MSELoss("none")(ta, tb).numpy(), (a - b) ** 2)
    with pytest.raises(ValueError, match="reduction"):
        nn.MSELoss("avg")


def _ce_reference(logits, labels):
    shifted = logits - logits.max(1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    return -logp[np.arange(len(labels)), labels]


def test_cross_entropy_loss():
    logits = np.random.default_rng(2).standard_normal((6, 4)).astype(np.float32)
    labels = np.array([0, 3, 1, 1, 2, 0])
    ref = _ce_reference(logits, labels)
    x = pycoll.to_tensor(logits)
    assert float(nn.CrossEntropyLoss()(x, pycoll.to_tensor(labels))) == pytest.approx(ref.mean(), rel=1e-5)
    assert float(nn.CrossEntropyLoss()(x, pycoll.to_tensor(labels[:, None]))) == pytest.approx(ref.mean(), rel=1e-5)
    assert float(nn.CrossEntropyLoss(reduction="sum")(x, pycoll.to_tensor(labels))) == pytest.approx(ref.sum(), rel=1e-5)
    none = nn.CrossEntropyLoss(reduction="none")(x, pycoll.to_tensor(labels[:, None]))
    assert none.shape == [6, 1]
    ignored = labels.copy()
    ignored[1] = -100
    # paddle: with a negative ignore_index 'mean' divides by all rows, ignored ones included ...
    assert float(nn.CrossEntropyLoss()(x, pycoll.to_tensor(ignored))) == pytest.approx(
        np.delete(ref, 1).sum() / 6, rel=1e-5)
    # ... and with ignore_index >= 0 by the rows that count
    assert float(nn.CrossEntropyLoss(ignore_index=3)(x, pycoll.to_tensor(labels))) == pytest.approx(
        np.delete(ref, 1).mean(), rel=1e-5)
    with pytest.raises(ValueError, match="label shape"):
        nn.CrossEntropyLoss()(x, pycoll.to_tensor(labels[:3]))
    with pytest.raises(IndexError, match=r"label ids must lie in \[0, 4\)"):  # paddle's and torch's type
        nn.CrossEntropyLoss()(x, pycoll.to_tensor(labels + 1))
    # paddle 3.3.1 takes float ids as its kernel casts them (truncation; see test_api_batch3_nn)
    assert float(nn.CrossEntropyLoss()(x, pycoll.to_tensor(labels.astype(np.float32)))) == pytest.approx(
        ref.mean(), rel=1e-5)


def test_sequential_and_layer_list():
    seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    assert len(seq) == 3 and isinstance(seq[0], nn.Linear) and isinstance(seq[1:], nn.Sequential)
    assert seq(pycoll.ones([5, 3])).shape == [5, 2]
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    named = nn.Sequential(("first", nn.Linear(2, 2)))
    assert named["first"] is named[0]

    layers = nn.LayerList([nn.Linear(2, 2)])
    layers.append(nn.Linear(2, 3))
    layers.insert(0, nn.Tanh())
    assert [type(layer).__name__ for layer in layers] == ["Tanh", "Linear", "Linear"]
    assert len(layers.parameters()) == 4
    layers[0] = nn.ReLU()
    assert isinstance(layers[0], nn.ReLU) and len(layers) == 3
    assert [n for n, _ in layers.named_parameters()] == ["1.weight", "1.bias", "2.weight", "2.bias"]


# ---- the seed examples, single process ---------------------------------------------------

def test_ex1_flow_adam_step_changes_parameters():
    layer = LinearNet()
    before = [p.numpy().copy() for p in layer.parameters()]
    adam = opt.Adam(learning_rate=0.001, parameters=layer.parameters())
    outputs = layer(pycoll.randn([10, 10], "float32"))
    loss = nn.MSELoss()(outputs, pycoll.randn([10, 1], "float32"))
    loss.backward()
    adam.step()
    adam.clear_grad()
    assert isinstance(float(loss.numpy()), float)
    for b, p in zip(before, layer.parameters()):
        assert np.abs(p.numpy() - b).max() == pytest.approx(0.001, rel=1e-3)  # Adam's first step is lr
        assert np.all(p.grad.numpy() == 0)


class cus_tanh(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = pycoll.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        y, = ctx.saved_tensor()
        grad = dy * (1 - pycoll.square(y))
        return grad


def test_ex2_flow_pylayer_with_sgd():
    class SimpleNet(pycoll.nn.Layer):
        def __init__(self):
            super().__init__()
            self.linear = pycoll.nn.Linear(2, 2)

        def forward(self, inputs):
            return self.linear(cus_tanh.apply(inputs))

    model = SimpleNet()
    sgd = pycoll.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
    for _ in range(10):
        x_data = np.random.randn(2, 2).astype(np.float32)
        x = pycoll.to_tensor(x_data)
        x.stop_gradient = False
        loss = model(x).mean()
        loss.backward()
        w = model.linear.weight.numpy()
        expected_x_grad = (1 - np.tanh(x_data) ** 2) * (w.sum(1) / 4)
        np.testing.assert_allclose(x.grad.numpy(), expected_x_grad, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(model.linear.weight.grad.numpy(),
                                   np.tanh(x_data).sum(0)[:, None].repeat(2, 1) / 4, rtol=1e-5)
        sgd.step()
        sgd.clear_grad()


def test_ex3_flow_gradients_accumulate_across_two_backwards():
    class SimpleNet(nn.Layer):
        def __init__(self):
            super().__init__()
            self._linear = nn.Linear(10, 1)

        def forward(self, x):
            return self._linear(x)

    model = SimpleNet()
    inputs_1 = pycoll.randn([10, 10], "float32")
    model(inputs_1).backward()
    model(pycoll.ones([10, 10], "float32")).backward()
    expected = inputs_1.numpy().astype(np.float64).sum(0) + 10.0
    np.testing.assert_allclose(model._linear.weight.grad.numpy().reshape(-1), expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(model._linear.bias.grad.numpy(), [20.0])


def test_ex4_flow_embedding_state_dict_save_load(tmp_path):
    emb = pycoll.nn.Embedding(10, 10)
    state_dict = emb.state_dict()
    path = tmp_path / "paddle_dy.pdparams"
    pycoll.save(state_dict, str(path))
    para_state_dict = pycoll.load(str(path))
    emb.set_state_dict(para_state_dict)
    after = emb.state_dict()
    assert set(after) == set(state_dict) == {"weight"}
    for k in after:
        a = np.asarray(pycoll.to_tensor(after[k]).numpy())
        b = np.asarray(pycoll.to_tensor(state_dict[k]).numpy())
        assert np.array_equal(a, b)


def test_forward_hooks_see_and_may_replace_inputs_and_outputs_and_can_be_removed():
    layer = nn.Linear(2, 2)
    calls = []
    pre = layer.register_forward_pre_hook(lambda l, inputs: (inputs[0] * 0.0,))
    post = layer.register_forward_post_hook(lambda l, inputs, out: calls.append(float(inputs[0].sum())) or out + 1.0)
    x = pycoll.ones([1, 2])
    np.testing.assert_allclose(layer(x).numpy(), layer.bias.numpy()[None] + 1.0, rtol=1e-6)
    assert calls == [0.0]  # the post hook saw the replaced input
    pre.remove()
    post.remove()
    np.testing.assert_allclose(layer(x).numpy(), (x.numpy() @ layer.weight.numpy()) + layer.bias.numpy(), rtol=1e-6)
    assert calls == [0.0]
    with pytest.raises(TypeError, match="hook must be callable"):
        layer.register_forward_pre_hook(None)


def test_forward_hooks_take_paddles_options():
    """with_kwargs, prepend and always_call, as paddle 3.3.1's hooks."""
    class Scaled(nn.Layer):
        def forward(self, x, scale=1.0):
            if scale < 0:
                raise ValueError("negative scale")
            return x * scale
    layer, order = Scaled(), []
    layer.register_forward_pre_hook(lambda l, args, kwargs: (args, {**kwargs, "scale": 3.0}), with_kwargs=True)
    layer.register_forward_post_hook(lambda l, args, kwargs, out: order.append(("kwargs", kwargs["scale"])),
                                     with_kwargs=True)
    layer.register_forward_post_hook(lambda l, args, out: order.append("first") or out + 1.0, prepend=True)
    assert layer(pycoll.ones([2]), scale=2.0).numpy().tolist() == [4.0, 4.0]
    assert order == ["first", ("kwargs", 3.0)]
    seen = []
    layer.register_forward_post_hook(lambda l, args, out: seen.append(out), always_call=True)
    layer._forward_pre_hooks.clear()
    with pytest.raises(ValueError, match="negative scale"):
        layer(pycoll.ones([2]), scale=-1.0)
    assert seen == [None]  # it ran although forward raised (the others did not)
    relu = nn.ReLU()
    relu.register_forward_pre_hook(lambda l, args, kwargs: args[0], with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"must return None or a \(args, kwargs\) pair, got Tensor"):
        relu(pycoll.ones([1]))


def test_train_takes_a_mode_and_layers_create_tensors_to_assign_to():
    model = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    assert model.train(False) is model and not any(l.training for l in model.sublayers(include_self=True))
    model.train()
    assert all(l.training for l in model.sublayers(include_self=True))
    with pytest.raises(ValueError, match="train: mode must be a bool, got str"):
        model.train("eval")
    holder = nn.Linear(2, 2)
    back = holder.create_tensor(name="tmp")
    assert back.name == f"{holder.full_name()}.tmp" and back.shape == [] and not back.persistable
    pycoll.assign(pycoll.ones([4, 2]), back)
    assert back.shape == [4, 2]
    made = holder.create_variable(persistable=True)
    assert made.persistable and made.name == f"{holder.full_name()}._generated_var_0"  # paddle's name
    param = holder.create_parameter([3], device="cpu")
    assert isinstance(param, nn.Parameter) and param.shape == [3]


def test_image_layers_print_their_arguments_as_paddles():
    """paddle 3.3.1's reprs."""
    assert repr(nn.LocalResponseNorm(3, name="n")) == "LocalResponseNorm(size=3, alpha=0.0001, beta=0.75, k=1.0, name=n)"
    assert repr(nn.ChannelShuffle(2, "NHWC")) == "ChannelShuffle(groups=2, data_format=NHWC)"
    assert repr(nn.Unfold([2, 3], dilations=2, paddings=1, strides=[1, 2])) == \
        "Unfold(kernel_size=[2, 3], dilation=2, padding=1, stride=[1, 2])"
    assert repr(nn.Fold([4, 5], 2)) == "Fold(kernel_size=2, dilation=1, padding=0, stride=1)"
