"""fleet.utils.mix_precision_utils: MixPrecisionLayer's float32 main_grad, MixPrecisionOptimizer
stepping with it, MixPrecisionScaler. Reference numbers are paddle 3.3.1's CPU build (float32
parameters; its CPU kernels multiply bfloat16 but have no float16 multiply, no bfloat16 add and no
bfloat16 SGD/AdamW update), or NumPy. The 2-rank case (main_grad under the sequence-parallel
all-reduce hooks) is in tests/ranks/sequence_parallel.py."""
import numpy as np
import pytest

import pycoll
from pycoll.distributed.fleet.utils import mix_precision_utils as mpu

W0 = np.array([0.5, -1.25, 2.0, 0.75], "float32")
B0 = np.array([0.1, 0.2, 0.3, 0.4], "float32")
XS = np.random.RandomState(1).uniform(-1, 1, (3, 5, 4)).astype("float32")


class Scale(pycoll.nn.Layer):
    """y = x * w (+ b)."""

    def __init__(self, bias=True):
        super().__init__()
        self.w = self.create_parameter([4])
        self.w.set_value(W0)
        self.b = None
        if bias:
            self.b = self.create_parameter([4], is_bias=True)
            self.b.set_value(B0)

    def forward(self, x):
        return x * self.w + self.b if self.b is not None else x * self.w


def loss_of(model, x):
    return model(x).astype("float32").square().mean()


def test_float32_training_equals_paddles():
    # paddle 3.3.1 CPU, same script: two backwards, step (SGD 0.5), clear_grad, a third backward
    inner = Scale()
    model = mpu.MixPrecisionLayer(inner)
    opt = mpu.MixPrecisionOptimizer(pycoll.optimizer.SGD(learning_rate=0.5, parameters=inner.parameters()))
    for step in range(3):
        loss_of(model, pycoll.to_tensor(XS[step])).backward()
        assert inner.w.grad is None and inner.b.grad is None  # moved into main_grad
        if step == 1:
            np.testing.assert_allclose(inner.w.main_grad.numpy(), [0.16588996350765228, -0.42096850275993347,
                                                                    0.894594669342041, 0.1245025023818016], rtol=1e-6)
            opt.step()
            opt.clear_grad()
            assert inner.w.main_grad.numpy().tolist() == [0, 0, 0, 0]
    np.testing.assert_allclose(inner.w.numpy(), [0.41705501079559326, -1.039515733718872, 1.5527026653289795,
                                                 0.6877487301826477], rtol=1e-6)
    np.testing.assert_allclose(inner.b.numpy(), [0.04631715267896652, 0.33713608980178833, 0.7539352178573608,
                                                 0.24351298809051514], rtol=1e-6)
    np.testing.assert_allclose(inner.w.main_grad.numpy(), [0.08533570170402527, -0.20975613594055176,
                                                           0.250328004360199, 0.11011605709791183], rtol=1e-6)
    assert inner.w.main_grad.name == f"main_grad@{inner.w.name}"
    opt.clear_grad(set_to_zero=False)
    assert inner.w.main_grad is None and inner.b.main_grad is None


def test_apply_gradients_and_minimize_step_with_the_main_grads():
    inner = Scale()
    model = mpu.MixPrecisionLayer(inner)
    outside = pycoll.create_parameter([1], "float32")  # no main_grad: a plain parameter
    opt = mpu.MixPrecisionOptimizer(pycoll.optimizer.SGD(learning_rate=0.5,
                                                         parameters=inner.parameters() + [outside]))
    loss_of(model, pycoll.to_tensor(XS[0])).backward()
    pairs = opt.backward(None)
    assert [(p is q, g is q.main_grad) for (p, g), q in zip(pairs, [inner.w, inner.b])] == [(True, True)] * 2
    main_w = inner.w.main_grad.numpy().copy()
    opt.apply_gradients([(inner.w, inner.w.main_grad)])
    np.testing.assert_allclose(inner.w.numpy(), W0 - 0.5 * main_w, rtol=1e-6)
    assert inner.b.numpy().tolist() == B0.tolist() and not hasattr(outside, "main_grad")
    opt.minimize(None, parameters=[inner.b])
    assert inner.w.numpy().tolist() != W0.tolist() and inner.b.numpy().tolist() != B0.tolist()
    opt.zero_grad()
    assert inner.w.main_grad is None


def test_main_grad_sums_in_float32_what_float16_would_lose():
    # each backward's float16 gradient is exact; their float16 sum is not: 1024 + 0.25 rounds to 1024
    inner = Scale(bias=False).to(dtype="float16")
    mpu.MixPrecisionLayer(inner, dtype="float16")
    for scale in (1024.0, 0.25, 0.25, 0.25, 0.25):
        (inner.w * pycoll.to_tensor(np.full(4, scale, "float16"))).sum().backward()
    assert inner.w.main_grad.dtype == pycoll.float32 and inner.w.dtype == pycoll.float16
    assert inner.w.main_grad.numpy().tolist() == [1025.0] * 4
    assert inner.w.grad is None


def test_bfloat16_main_grad_steps_a_float32_master_copy():
    inner = Scale(bias=False).to(dtype="bfloat16")
    plain = Scale(bias=False).to(dtype="bfloat16")  # the same model without main grads: each backward's grad
    model = mpu.MixPrecisionLayer(inner, dtype="bfloat16")
    opt = mpu.MixPrecisionOptimizer(pycoll.optimizer.SGD(learning_rate=0.5, parameters=inner.parameters(),
                                                         multi_precision=True))
    expected = np.zeros(4, "float32")
    for step in range(2):
        x = pycoll.to_tensor(XS[step]).astype("bfloat16")
        loss_of(model, x).backward()
        loss_of(plain, x).backward()
        expected += plain.w.grad.numpy().astype("float32")
        plain.w.clear_gradient(set_to_zero=False)
    np.testing.assert_array_equal(inner.w.main_grad.numpy(), expected)
    # paddle 3.3.1 CPU's main_grad for this script (its bfloat16 reduction rounds differently: within 2^-8)
    np.testing.assert_allclose(expected, [0.1640625, -0.4990234375, 1.078125, 0.17138671875], rtol=2 ** -8)
    opt.step()
    master = W0.astype(pycoll.bfloat16).astype("float32") - 0.5 * expected
    np.testing.assert_array_equal(inner.w.numpy().astype("float32"), master.astype(pycoll.bfloat16).astype("float32"))
    assert inner.w.dtype == pycoll.bfloat16


def test_state_dict_is_the_inner_layers_and_optimizer_attributes_pass_through():
    inner = Scale()
    model = mpu.MixPrecisionLayer(inner)
    assert list(model.state_dict()) == ["w", "b"]
    model.set_state_dict({"w": np.ones(4, "float32"), "b": np.zeros(4, "float32")})
    assert inner.w.numpy().tolist() == [1, 1, 1, 1]
    sgd = pycoll.optimizer.SGD(learning_rate=0.25, parameters=inner.parameters())
    opt = mpu.MixPrecisionOptimizer(sgd)
    assert opt.get_lr() == 0.25 and opt._parameter_list == sgd._parameter_list
    assert opt.step_grads() == []  # no main grad yet: nothing to step or unscale
    loss_of(model, pycoll.to_tensor(XS[0])).backward()
    assert [g is p.main_grad.array for g, p in zip(opt.step_grads(), inner.parameters())] == [True, True]


def test_a_parameter_outside_the_layer_keeps_its_grad():
    inner, other = Scale(), pycoll.nn.Linear(4, 4)
    mpu.MixPrecisionLayer(inner)
    opt = mpu.MixPrecisionOptimizer(pycoll.optimizer.SGD(learning_rate=0.5, parameters=inner.parameters()
                                                         + other.parameters()))
    (other(inner(pycoll.to_tensor(XS[0])))).sum().backward()
    before = other.weight.numpy().copy()
    opt.step()  # paddle's: only main grads step; other's .grad is left as it is
    np.testing.assert_array_equal(other.weight.numpy(), before)
    assert other.weight.grad is not None
    opt.clear_grad()
    assert other.weight.grad.numpy().tolist() == np.zeros([4, 4]).tolist()


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="dtype='float32'; it must be 'float16' or 'bfloat16'"):
        mpu.MixPrecisionLayer(Scale(), dtype="float32")
    with pytest.raises(TypeError, match="layers must be a pycoll.nn.Layer, got list"):
        mpu.MixPrecisionLayer([Scale()])
    with pytest.raises(TypeError, match="optimizer must be a pycoll optimizer, got int"):
        mpu.MixPrecisionOptimizer(3)


def test_mix_precision_scaler_is_deprecated_and_passes_through():
    with pytest.warns(UserWarning, match="makes no effect"):  # paddle's GradScaler on the CPU
        scaler = pycoll.amp.GradScaler()
    with pytest.warns(FutureWarning, match="MixPrecisionScaler\" is deprecated since 2.5.0"):
        wrapped = mpu.MixPrecisionScaler(scaler)
    assert wrapped._inner_scaler is scaler and wrapped.is_enable() is False
