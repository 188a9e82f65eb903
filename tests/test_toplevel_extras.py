"""paddle 3.3.1's top-level names: LazyGuard, as_tensor, autocast & co, the functional aliases, ger,
uint16, batch, check_shape, disable_signal_handler, Generator."""
import importlib.util
import inspect
import warnings

import numpy as np
import pytest

import pycoll
import pycoll.nn.functional as F


def test_lazy_guard_defers_initialisation_to_initialize():
    pycoll.seed(1)
    with pycoll.LazyGuard():
        lazy = pycoll.nn.Linear(3, 2)
    assert not lazy.weight.numpy().any()  # not filled (paddle's holds no memory yet)
    pycoll.seed(1)
    eager = pycoll.nn.Linear(3, 2)
    pycoll.seed(1)  # paddle draws at initialize(), not when the layer is built
    for p in lazy.parameters():
        p.initialize()
    np.testing.assert_array_equal(lazy.weight.numpy(), eager.weight.numpy())
    np.testing.assert_array_equal(lazy.bias.numpy(), np.zeros(2, np.float32))
    with pytest.raises(AssertionError, match="no pending initializer"):  # paddle asserts, once done
        lazy.weight.initialize()
    with pytest.raises(RuntimeError, match="linear"):  # and for a parameter built eagerly
        eager.weight.initialize()


def test_a_layer_refuses_to_run_on_lazy_parameters_not_initialised():
    """paddle 3.3.1 raises in forward before initialize() (its parameters hold no memory); pycoll's
    hold zeros, so the layer refuses rather than compute on them silently."""
    with pycoll.LazyGuard():
        net = pycoll.nn.Sequential(pycoll.nn.Linear(3, 2), pycoll.nn.Linear(2, 1))
    with pytest.raises(RuntimeError, match="LazyGuard.*initialize"):
        net(pycoll.ones([1, 3]))
    for p in net[0].parameters():
        p.initialize()
    net[0](pycoll.ones([1, 3]))  # this one is ready
    with pytest.raises(RuntimeError, match="LazyGuard"):
        net[1](pycoll.ones([1, 2]))
    net[1].weight.initialize()
    net[1].bias.set_value(np.ones(1, np.float32))  # a loaded value counts as initialised
    assert net(pycoll.ones([1, 3])).shape == [1, 1]


def test_lazy_guard_state_dict_loads_and_mode_ends_on_exit():
    with pycoll.LazyGuard():
        net = pycoll.nn.Sequential(pycoll.nn.Linear(3, 2), pycoll.nn.LayerNorm(2))
    state = {"0.weight": np.arange(6, dtype=np.float32).reshape(3, 2), "0.bias": np.ones(2, np.float32),
             "1.weight": np.full(2, 3.0, np.float32), "1.bias": np.zeros(2, np.float32)}
    assert net.set_state_dict(state) == ([], [])
    np.testing.assert_array_equal(net[0].weight.numpy(), state["0.weight"])
    out = net(pycoll.ones([1, 3])).numpy()
    h = np.ones((1, 3), np.float32) @ state["0.weight"] + 1
    ref = 3 * (h - h.mean()) / np.sqrt(h.var() + 1e-5)
    np.testing.assert_allclose(out, ref, rtol=1e-5)
    assert np.abs(pycoll.nn.Linear(4, 4).weight.numpy()).sum() > 0  # built after the guard: initialised


def test_as_tensor():
    src = pycoll.to_tensor([1.0, 2.0])
    t = pycoll.as_tensor(src, dtype="float64", requires_grad=True)
    assert t is not src and t.dtype == pycoll.float64 and t.stop_gradient is False
    src[0] = 5.0
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])  # a Tensor is copied, as paddle's
    assert pycoll.as_tensor([1, 2]).dtype == pycoll.int64 and pycoll.as_tensor([1, 2]).stop_gradient
    assert list(inspect.signature(pycoll.as_tensor).parameters) == ["data", "dtype", "device", "requires_grad",
                                                                    "pin_memory"]
    with pytest.raises(RuntimeError, match="pinning memory"):  # paddle 3.3.1 refuses it on the CPU too
        pycoll.as_tensor([1.0], device="cpu", pin_memory=True)


def test_autocast_names_report_amp_state():
    assert not pycoll.is_autocast_enabled() and pycoll.get_autocast_dtype() == "float16"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pycoll.autocast("cpu", dtype="bfloat16"):  # paddle 3.3.1 on the CPU: False, 'float16'
            assert pycoll.is_autocast_enabled("cpu") is False
            assert pycoll.get_autocast_cpu_dtype() == pycoll.get_autocast_gpu_dtype() == "float16"
    with pytest.raises(ValueError, match="dtype"):
        pycoll.autocast(None, dtype="int8")
    with pytest.raises(TypeError):
        pycoll.autocast()  # device_type is required, as paddle's


def test_functional_aliases_are_paddles_objects():
    # paddle 3.3.1: paddle.conv1d is paddle.nn.functional.conv1d, and so on
    for name in ("conv1d", "conv2d", "conv3d", "layer_norm", "group_norm", "adaptive_avg_pool1d"):
        assert getattr(pycoll, name) is getattr(F, name)
    x = pycoll.to_tensor(np.arange(8, dtype=np.float32).reshape(1, 2, 4))
    np.testing.assert_allclose(pycoll.adaptive_avg_pool1d(x, 2).numpy(), [[[0.5, 2.5], [4.5, 6.5]]])


def test_ger_is_outer_with_out():
    x, y = pycoll.to_tensor([1.0, 2.0]), pycoll.to_tensor([3.0, 4.0, 5.0])
    np.testing.assert_array_equal(pycoll.ger(x, y).numpy(), np.outer([1.0, 2.0], [3.0, 4.0, 5.0]))
    out = pycoll.zeros([2, 3])
    pycoll.ger(x, y, out=out)
    np.testing.assert_array_equal(out.numpy(), [[3, 4, 5], [6, 8, 10]])


def test_uint16():
    t = pycoll.to_tensor([1, 65535], dtype=pycoll.uint16)
    assert t.dtype == pycoll.uint16 and t.numpy().tolist() == [1, 65535]


def test_batch_reader():
    def reader():
        yield from range(7)

    assert list(pycoll.batch(reader, 3)()) == [[0, 1, 2], [3, 4, 5], [6]]
    assert list(pycoll.batch(reader, "3", drop_last=True)()) == [[0, 1, 2], [3, 4, 5]]
    assert list(pycoll.batch(reader, 3)()) == list(pycoll.batch(reader, 3)())  # a reader can be read again
    with pytest.raises(ValueError, match="batch_size=0"):
        pycoll.batch(reader, 0)
    with pytest.raises(TypeError, match="reader"):
        pycoll.batch(range(3), 2)


def test_check_shape_and_signal_handler_are_dygraph_noops():
    # paddle 3.3.1 skips check_shape in dynamic mode (even for a wrong shape) and returns None
    assert pycoll.check_shape("not a shape", "reshape") is None
    assert pycoll.disable_signal_handler() is None


def test_generator_controls_the_one_generator():
    g = pycoll.Generator()
    assert g.manual_seed(5) is g and g.initial_seed() == 5
    a = pycoll.rand([4]).numpy()
    pycoll.seed(5)
    np.testing.assert_array_equal(pycoll.rand([4]).numpy(), a)  # the same stream as pycoll.seed's
    state = pycoll.Generator("cpu").get_state()
    b = pycoll.randn([3]).numpy()
    g.set_state(state)
    np.testing.assert_array_equal(pycoll.randn([3]).numpy(), b)
    fresh = g.seed()
    assert isinstance(fresh, int) and fresh >= 0 and g.initial_seed() == fresh
    assert 0 <= g.random() < 2 ** 64
    with pytest.raises(ValueError):
        pycoll.Generator("foo")
    with pytest.raises(ValueError, match=r"seed must be an int in \[0, 2\*\*64\)"):
        g.manual_seed(-1)


def test_autograd_function_is_pylayer():
    assert pycoll.autograd.Function is pycoll.autograd.PyLayer  # as in paddle 3.3.1

    class Cube(pycoll.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, dy):
            (x,) = ctx.saved_tensor()
            return 3 * x * x * dy

    x = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    Cube.apply(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 12.0])


def test_translated_layer_is_a_layer_nothing_builds():
    assert issubclass(pycoll.jit.TranslatedLayer, pycoll.nn.Layer)
    assert not isinstance(pycoll.nn.Linear(1, 1), pycoll.jit.TranslatedLayer)
    with pytest.raises(NotImplementedError, match="no static program"):
        pycoll.jit.TranslatedLayer({}, {})


@pytest.mark.skipif(importlib.util.find_spec("visualdl") is not None, reason="visualdl is installed")
def test_visualdl_needs_its_package_at_first_write(tmp_path):
    from pycoll.callbacks import VisualDL

    cb = VisualDL(log_dir=str(tmp_path))  # paddle's builds without visualdl, and imports it to write
    cb.set_params({"epochs": 1, "steps": 2, "metrics": ["loss"]})
    cb.on_train_begin()
    cb.on_epoch_begin(0)
    with pytest.raises(ImportError, match=r"Failed importing visualdl.*pip install visualdl"):
        cb.on_train_batch_end(0, {"loss": [0.5]})


@pytest.mark.skipif(importlib.util.find_spec("wandb") is not None, reason="wandb is installed")
def test_wandb_callback_needs_wandb():
    from pycoll.callbacks import WandbCallback

    # paddle 3.3.1's message, raised when the callback is built
    with pytest.raises(ImportError, match=r"^You want to use `wandb` which is not installed yet install it with "
                                          r"`pip install wandb`$"):
        WandbCallback(project="p")
