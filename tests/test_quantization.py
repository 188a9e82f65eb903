"""pycoll.quantization and pycoll.nn.quant: values checked against NumPy computed here."""
import numpy as np
import pytest

import pycoll
from pycoll import nn
from pycoll.nn.quant import Stub, llm_int8_linear, weight_dequantize, weight_only_linear, weight_quantize
from pycoll.nn.quant.format import LinearDequanter, LinearQuanter
from pycoll.nn.quant.qat import QuantedLinear
from pycoll.quantization import PTQ, QAT, ObserveWrapper, QuantConfig
from pycoll.quantization.observers import AbsmaxObserver, GroupWiseWeightObserver
from pycoll.quantization.quanters import FakeQuanterWithAbsMaxObserver


def _fake_quant(x, scale, bits=8):
    r = 2 ** (bits - 1) - 1
    v = np.clip(x, -scale, scale) * (r / scale)
    return np.sign(v) * np.floor(np.abs(v) + 0.5) * scale / r


def test_served_lazily_as_attributes():
    assert pycoll.quantization.QAT is QAT and pycoll.nn.quant.Stub is Stub


def test_config_prints_paddles_global_config():
    # the text paddle 3.3.1 prints for print(QuantConfig(activation=q, weight=q)) (its QuantConfig docstring)
    q = FakeQuanterWithAbsMaxObserver(moving_rate=0.9)
    assert str(QuantConfig(activation=q, weight=q)) == (
        "Global config:\nactivation: FakeQuanterWithAbsMaxObserver(name=None,moving_rate=0.9,bit_length=8,"
        "dtype=float32)\nweight: FakeQuanterWithAbsMaxObserver(name=None,moving_rate=0.9,bit_length=8,dtype=float32)\n")


def test_qat_swaps_layers_and_fake_quantizes_with_moving_average_scale():
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    q = FakeQuanterWithAbsMaxObserver(moving_rate=0.9)
    qm = QAT(QuantConfig(activation=q, weight=q)).quantize(model)
    assert isinstance(qm[0], QuantedLinear) and isinstance(qm[1], ObserveWrapper)
    assert isinstance(model[0], nn.Linear)  # inplace=False leaves the model alone
    x = np.array([[1.0, -2.0, 0.3]], dtype="float32")
    xt = pycoll.to_tensor(x, stop_gradient=False)
    y = qm[0](xt)
    scale = (0.9 * 1 + 2.0) / (0.9 * 1 + 1)  # accum / state from paddle's initial 1, 1
    assert np.allclose(qm[0].activation_quanter.scales().numpy(), [scale])
    w = qm[0].weight.numpy()
    ws = (0.9 + np.abs(w).max()) / 1.9
    want = _fake_quant(x, scale) @ _fake_quant(w, ws) + qm[0].bias.numpy()
    assert np.allclose(y.numpy(), want, atol=1e-6)
    y.sum().backward()  # straight-through: d/dx = row sums of the quantized weight
    assert np.allclose(xt.grad.numpy(), _fake_quant(w, ws).sum(1)[None], atol=1e-6)
    qm.eval()
    qm[0](pycoll.to_tensor(x * 10))
    assert np.allclose(qm[0].activation_quanter.scales().numpy(), [scale])  # eval does not update


def test_ptq_observes_running_abs_max_and_convert_stores_integer_weights():
    model = nn.Sequential(nn.Linear(4, 2))
    model.eval()
    o = AbsmaxObserver()
    ptq = PTQ(QuantConfig(activation=o, weight=o))
    pm = ptq.quantize(model)
    x = np.arange(8, dtype="float32").reshape(2, 4) - 4
    pm(pycoll.to_tensor(x))
    pm(pycoll.to_tensor(x / 2))
    assert float(pm[0].activation_quanter.scales()) == 4.0
    w = model[0].weight.numpy()
    cm = ptq.convert(pm)
    assert np.array_equal(cm[0].weight.numpy(), np.clip(np.round(w / np.abs(w).max() * 127), -128, 127))
    xq = np.round(x / 4 * 127) * 4 / 127
    want = xq @ (cm[0].weight.numpy() * np.abs(w).max() / 127) + model[0].bias.numpy()
    assert np.allclose(cm(pycoll.to_tensor(x)).numpy(), want, atol=1e-5)


def test_linear_quanter_rounds_halves_to_even_and_clips():
    q, d = LinearQuanter([127.0]), LinearDequanter([127.0])
    out = q(pycoll.to_tensor([0.5, 1.5, 2.5, -2.5, 300.0, -300.0]))
    assert out.numpy().tolist() == [0.0, 2.0, 2.0, -2.0, 127.0, -128.0]
    assert np.allclose(d(out).numpy(), out.numpy())


def test_stub_becomes_quanter_stub():
    class M(nn.Layer):
        def __init__(self):
            super().__init__()
            self.stub = Stub()

        def forward(self, x):
            return self.stub(x)

    q = FakeQuanterWithAbsMaxObserver()
    qm = QAT(QuantConfig(activation=q, weight=None)).quantize(M())
    assert type(qm.stub).__name__ == "QuanterStub" and qm.stub._observer is not None


def test_weight_quantize_is_per_channel_abs_max_int8():
    w = np.random.RandomState(0).randn(8, 3).astype("float32")
    q, s = weight_quantize(pycoll.to_tensor(w), algo="llm.int8")
    scale = np.abs(w).max(0) / 127
    assert q.shape == [3, 8] and q.numpy().dtype == np.int8
    assert np.allclose(s.numpy(), scale)
    assert np.array_equal(q.numpy(), np.round(w / scale).T.astype(np.int8))
    assert np.allclose(weight_dequantize(q, s, algo="llm.int8").numpy(), np.round(w / scale) * scale)


def test_weight_only_and_llm_int8_linear_compute_with_the_dequantized_weight():
    rng = np.random.RandomState(1)
    w, x, b = rng.randn(8, 3).astype("float32"), rng.randn(2, 8).astype("float32"), rng.randn(3).astype("float32")
    q, s = weight_quantize(pycoll.to_tensor(w))
    dequantized = q.numpy().T.astype(np.float32) * s.numpy()
    out = weight_only_linear(pycoll.to_tensor(x), q, pycoll.to_tensor(b), weight_scale=s)
    np.testing.assert_allclose(out.numpy(), x @ dequantized + b, rtol=1e-5, atol=1e-6)
    # LLM.int8 without outliers: the rows of x quantized by their abs-max too, multiplied in integers
    q8, s8 = weight_quantize(pycoll.to_tensor(w), algo="llm.int8")
    row_scale = np.abs(x).max(1, keepdims=True) / 127
    x_int = np.round(x / row_scale)
    want = (x_int @ q8.numpy().T.astype(np.float32)) * row_scale * s8.numpy()
    np.testing.assert_allclose(llm_int8_linear(pycoll.to_tensor(x), q8, weight_scale=s8, threshold=100.0).numpy(),
                               want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match=r"weight must be the int8 \[out_features, in_features\] Tensor"):
        weight_only_linear(pycoll.to_tensor(x), pycoll.to_tensor(w), weight_scale=s)  # not quantized
    with pytest.raises(ValueError, match=r"x's last dimension must be the weight's in_features \(8"):
        weight_only_linear(pycoll.ones([2, 3]), q, weight_scale=s)
    with pytest.raises(NotImplementedError, match="pycoll implements 'int8' only"):
        weight_only_linear(pycoll.to_tensor(x), q, weight_scale=s, weight_dtype="int4")


def test_bad_arguments_name_the_argument():
    with pytest.raises(TypeError, match="activation"):
        QuantConfig(activation="abs_max", weight=None)
    with pytest.raises(ValueError, match="moving_rate"):
        FakeQuanterWithAbsMaxObserver(moving_rate=2)
    with pytest.raises(NotImplementedError, match="'weight_only_int4' is paddle's but not implemented in pycoll"):
        weight_quantize(pycoll.ones([4, 4]), algo="weight_only_int4")
    with pytest.raises(ValueError, match=r"algo must be one of \['weight_only_int8', 'llm.int8'\] \(paddle's"):
        weight_quantize(pycoll.ones([4, 4]), algo="int3")
    with pytest.raises(ValueError, match="group_size"):
        weight_quantize(pycoll.ones([4, 4]), group_size=32)
    model = nn.Linear(2, 2)
    model.eval()
    with pytest.raises(AssertionError, match="training mode"):
        QAT(QuantConfig(activation=None, weight=None)).quantize(model)


@pytest.mark.parametrize("group_size", [64, 128])
def test_a_group_wise_ptq_converts_with_its_group_size(group_size):
    pycoll.seed(2)
    model = nn.Sequential(nn.Linear(128, 4))
    model.eval()
    config = QuantConfig(activation=None, weight=None)
    config.add_type_config(nn.Linear, weight=GroupWiseWeightObserver(quant_bits=8, group_size=group_size))
    ptq = PTQ(config)
    prepared = ptq.quantize(model)
    x = pycoll.randn([3, 128])
    prepared(x)  # calibration
    converted = ptq.convert(prepared)
    w, b = model[0].weight.numpy(), model[0].bias.numpy()
    scale = np.abs(w.reshape(128 // group_size, group_size, 4)).max(axis=1)  # [groups, out]
    rows = np.repeat(scale, group_size, axis=0)
    dequantized = np.clip(np.round(w / rows * 127), -128, 127) * rows / 127
    np.testing.assert_allclose(converted(x).numpy(), x.numpy() @ dequantized + b, rtol=1e-5, atol=1e-5)
