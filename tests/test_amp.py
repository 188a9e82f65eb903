"""pycoll.amp: on the CPU paddle's AMP "makes no effect" (it warns, computes in float32 and its
GradScaler passes every call to the optimizer), and so does pycoll's; the GradScaler's dynamic loss
scaling itself is checked by letting it act on the host arrays (as it would on a GPU), and across
two ranks whose gradients disagree on inf (tests/ranks/amp_scaler.py)."""
import importlib

import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
from conftest import assert_ok, launch
from pycoll.amp import grad_scaler

precision = importlib.import_module("pycoll.amp.auto_cast")  # the module (pycoll.amp.auto_cast is the class)


def model_and_optimizer():
    pycoll.seed(0)
    model = nn.Linear(3, 2)
    return model, pycoll.optimizer.SGD(learning_rate=0.5, parameters=model.parameters())


def test_on_the_cpu_auto_cast_and_the_scaler_make_no_effect_as_paddle():
    model, opt = model_and_optimizer()
    with pytest.warns(UserWarning, match="AmpScaler can only be enabled on CUDAPlace.*Place\\(cpu\\), so it makes no effect"):
        scaler = pycoll.amp.GradScaler(init_loss_scaling=1024)
    x = pycoll.ones([4, 3])
    with pytest.warns(UserWarning, match="amp_guard can only be enabled.*so it makes no effect"):
        with pycoll.amp.auto_cast(dtype="bfloat16"):
            assert not pycoll.amp.is_autocast_enabled()
            loss = model(x).mean()
    assert loss.dtype == pycoll.float32 and pycoll.amp.get_autocast_dtype() == "float16"
    assert scaler.scale(loss) is loss
    assert (scaler.is_enable(), scaler.is_use_dynamic_loss_scaling(), scaler.get_init_loss_scaling()) == (False, False, 1.0)
    before = model.weight.numpy().copy()
    loss.backward()
    grad = model.weight.grad.numpy().copy()
    scaler.step(opt)
    scaler.update()
    np.testing.assert_allclose(model.weight.numpy(), before - 0.5 * grad, rtol=1e-6)
    assert scaler.state_dict() == {}
    assert pycoll.amp.decorate(models=model, optimizers=opt, level="O2") == (model, opt)
    assert pycoll.amp.decorate(model) is model


def test_bad_levels_and_dtypes_are_refused_by_name():
    with pytest.raises(ValueError, match="level must be one of"):
        pycoll.amp.auto_cast(level="O3")
    with pytest.raises(ValueError, match="dtype only supports 'float16' or 'bfloat16', got 'float8'"):
        pycoll.amp.decorate(nn.Linear(2, 2), dtype="float8")
    # decorate checks as paddle's dygraph one does: its level and dtype exactly as spelt
    for level in ("O0", "OD", "o2"):
        with pytest.raises(ValueError, match=f"level should be O1 or O2.*got '{level}'"):
            pycoll.amp.decorate(nn.Linear(2, 2), level=level)
    with pytest.raises(ValueError, match="got 'BFLOAT16'"):
        pycoll.amp.decorate(nn.Linear(2, 2), dtype="BFLOAT16")
    with pytest.raises(TypeError, match="models must be either a single model or a list of models"):
        pycoll.amp.decorate(123)
    with pytest.raises(TypeError, match="optimizers must be either a single optimizer"):
        pycoll.amp.decorate(nn.Linear(2, 2), optimizers=[nn.Linear(2, 2)])
    with pytest.raises(ValueError, match="save_dtype can only be .* got 'int8'"):
        pycoll.amp.decorate(nn.Linear(2, 2), level="O2", save_dtype="int8")
    with pytest.raises(ValueError, match="device must be a str"):
        pycoll.amp.is_float16_supported(3)
    with pytest.raises(ValueError, match="both name \\['matmul'\\]"):
        pycoll.amp.auto_cast(custom_white_list={"matmul"}, custom_black_list={"matmul"})


@pytest.fixture
def acting(monkeypatch):
    """The scaler acts here as it does on a GPU (its arrays are the host's)."""
    monkeypatch.setattr(grad_scaler, "on_accelerator", lambda: True)
    monkeypatch.setattr(precision, "on_accelerator", lambda: True)
    monkeypatch.setattr(precision, "_last_amp_dtype", "float16")  # process-wide, as paddle's tracer keeps it


def test_decorate_s_save_dtype_casts_the_saved_state_at_o2_on_an_accelerator(acting):
    model = nn.Sequential(nn.Linear(2, 2), nn.LayerNorm(2))
    model.register_buffer("steps", pycoll.to_tensor([3], dtype="int64"))
    assert pycoll.amp.decorate(model, level="O2", save_dtype="float16") is model
    state = model.state_dict()
    assert {v.dtype for k, v in state.items() if k != "steps"} == {pycoll.float16}, state
    assert state["steps"].dtype == pycoll.int64 and state["0.weight"].name == model[0].weight.name
    assert model[0].weight.dtype == pycoll.float32, "the parameters themselves keep their dtype"


def test_the_scaler_turns_itself_off_unless_the_last_auto_cast_was_float16(monkeypatch):
    """paddle's amp state keeps the dtype of the last auto_cast entered, enabled or not, on any
    place; float32 before any: dynamic scaling of anything else is turned off at scale()."""
    monkeypatch.setattr(grad_scaler, "on_accelerator", lambda: True)
    monkeypatch.setattr(precision, "_last_amp_dtype", "float32")
    with pytest.warns(UserWarning, match="dynamic loss scaling for float32"):
        scaler = pycoll.amp.GradScaler()
        scaler.scale(pycoll.to_tensor(1.0))
    assert not scaler.is_enable()
    with pycoll.amp.auto_cast(enable=False, dtype="bfloat16"):
        pass
    assert precision.last_autocast_dtype() == "bfloat16"
    with pycoll.amp.auto_cast(enable=False):
        pass
    scaler = pycoll.amp.GradScaler()
    assert float(scaler.scale(pycoll.to_tensor(1.0))) == 65536.0 and scaler.is_enable()


def test_the_scaler_unscales_before_the_step_and_moves_the_scale(acting):
    model, opt = model_and_optimizer()
    scaler = pycoll.amp.GradScaler(init_loss_scaling=8.0, incr_every_n_steps=2, decr_every_n_nan_or_inf=1)
    x = pycoll.ones([4, 3])
    ref, _ = model_and_optimizer()
    ref(x).mean().backward()
    scaled = scaler.scale(model(x).mean())
    scaled.backward()
    np.testing.assert_allclose(model.weight.grad.numpy(), 8.0 * ref.weight.grad.numpy(), rtol=1e-6)
    before = model.weight.numpy().copy()
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called since the last update"):
        scaler.step(opt)
    scaler.update()
    np.testing.assert_allclose(model.weight.numpy(), before - 0.5 * ref.weight.grad.numpy(), rtol=1e-6)
    opt.clear_grad()
    scaler.minimize(opt, scaler.scale(model(x).mean()))  # the second clean step doubles the scale
    assert scaler.state_dict()["scale"].tolist() == [16.0]
    assert isinstance(scaler.state_dict()["scale"], np.ndarray)  # paddle's: its scale tensor's .numpy()

    # an inf gradient: the step is skipped and the scale halves
    opt.clear_grad()
    scaler.scale(model(x).mean()).backward()
    model.weight.grad.array[0, 0] = np.inf
    kept = model.weight.numpy().copy()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    np.testing.assert_array_equal(model.weight.numpy(), kept)
    state = scaler.state_dict()
    assert state["scale"].tolist() == [8.0] and (state["incr_count"], state["decr_count"]) == (0, 0)

    again = pycoll.amp.GradScaler()
    again.load_state_dict(state)
    assert again.state_dict()["scale"].tolist() == [8.0] and again.get_incr_every_n_steps() == 2


def test_a_bfloat16_auto_cast_turns_dynamic_scaling_off_as_paddle(acting):
    scaler = pycoll.amp.GradScaler()
    loss = pycoll.ones([1]).sum()
    with pytest.warns(UserWarning, match="no float16/bfloat16 op lists yet"):
        with pycoll.amp.auto_cast(dtype="bfloat16"):
            assert pycoll.amp.is_autocast_enabled() and pycoll.amp.get_autocast_dtype() == "bfloat16"
            with pytest.warns(UserWarning, match="dynamic loss scaling for bfloat16"):
                assert scaler.scale(loss) is loss
    assert not scaler.is_enable() and pycoll.amp.get_autocast_dtype() == "float16"


def test_a_loss_scaled_after_a_bfloat16_auto_cast_block_turns_scaling_off_too(acting):
    """paddle's documented pattern: the block computes the loss, scale() comes after it."""
    scaler = pycoll.amp.GradScaler()
    with pytest.warns(UserWarning, match="no float16/bfloat16 op lists yet"):
        with pycoll.amp.auto_cast(level="o1", dtype="BFLOAT16"):  # paddle's spelling is free
            loss = pycoll.ones([1]).sum()
    with pytest.warns(UserWarning, match="dynamic loss scaling for bfloat16"):
        assert scaler.scale(loss) is loss
    assert not scaler.is_enable() and scaler.state_dict() == {}


def test_ranks_skip_together_when_one_rank_finds_inf():
    assert_ok(launch(2, "amp_scaler.py", timeout=60), expect_lines=2)


@pytest.mark.gpu
def test_on_a_gpu_the_scaler_acts_on_cupy_gradients_and_auto_cast_says_it_stays_float32():
    pycoll.set_device("gpu")
    try:
        model, opt = model_and_optimizer()
        scaler = pycoll.amp.GradScaler(init_loss_scaling=4.0)
        assert scaler.is_enable()
        with pytest.warns(UserWarning, match="no float16/bfloat16 op lists yet"):
            with pycoll.amp.auto_cast():
                loss = model(pycoll.ones([2, 3])).mean()
        assert loss.dtype == pycoll.float32
        scaler.scale(loss).backward()
        model.weight.grad.array[0, 0] = float("inf")
        kept = model.weight.numpy().copy()
        scaler.step(opt)
        scaler.update()
        np.testing.assert_array_equal(model.weight.numpy(), kept)
        assert scaler.state_dict()["scale"].tolist() == [2.0]
    finally:
        pycoll.set_device("cpu")


def test_which_low_precision_paddle_says_the_cpu_supports():
    # paddle 3.3.1's CPU build: is_bfloat16_supported() True, is_float16_supported() False
    assert pycoll.amp.is_bfloat16_supported() and pycoll.amp.is_bfloat16_supported("cpu")
    assert not pycoll.amp.is_float16_supported() and not pycoll.amp.is_float16_supported("cpu")
    assert pycoll.amp.is_bfloat16_supported(pycoll.CPUPlace())  # a Place too, as paddle's
    assert not pycoll.amp.is_float16_supported(pycoll.CPUPlace())
    assert not pycoll.amp.is_bfloat16_supported("gpu:0")  # no low-precision op lists yet
    for check in (pycoll.amp.is_bfloat16_supported, pycoll.amp.is_float16_supported):
        with pytest.raises(ValueError, match="place"):
            check("tpu")
