"""The module paths and names paddle 3.3.1's own docstring examples use: ``paddle.base`` (set_flags),
``paddle.tensor(...)`` called as a function, ``paddle.nn.functional.<submodule>``, the whole of
``paddle.nn.loss``, ``paddle.tensor.manipulation.tensor_array_to_tensor``,
``paddle.tensor.random.gaussian_`` and ``paddle.MmapStorage``. Expected values were measured on
paddle 3.3.1's CPU build (said so where they are)."""
import importlib

import numpy as np
import pytest

import pycoll
import pycoll.base
import pycoll.nn.functional as F


# ---- paddle.base ----

def test_base_set_flags_is_the_docstring_examples_call_and_get_flags_reads_it_back():
    pycoll.base.set_flags({"FLAGS_use_stride_kernel": True})
    assert pycoll.base.get_flags("FLAGS_use_stride_kernel") == {"FLAGS_use_stride_kernel": True}
    assert pycoll.get_flags(["FLAGS_use_stride_kernel"]) == {"FLAGS_use_stride_kernel": True}
    # the docstring's next line, as paddle 3.3.1 prints it: [[0., 1.], [4., 5.]]
    assert pycoll.arange(9.0).unfold(0, 2, 4).numpy().tolist() == [[0.0, 1.0], [4.0, 5.0]]


def test_base_is_importable_and_answers_paddles_shared_names():
    assert importlib.import_module("pycoll.base") is pycoll.base
    from pycoll.base import CPUPlace, set_flags
    assert CPUPlace is pycoll.CPUPlace and set_flags is pycoll.set_flags  # paddle.base.X is paddle.X there
    assert pycoll.base.Tensor is pycoll.Tensor and pycoll.base.ParamAttr is pycoll.ParamAttr
    assert pycoll.base.in_dygraph_mode() is True  # paddle.base.in_dygraph_mode is paddle.in_dynamic_mode
    assert pycoll.base.in_pir_mode() is False
    assert pycoll.base.set_global_initializer is pycoll.nn.initializer.set_global_initializer
    assert "set_flags" in dir(pycoll.base) and "CUDAPlace" in dir(pycoll.base)


def test_base_dygraph_serves_older_scripts_guard_and_no_grad():
    """paddle 3.3.1's paddle.base.dygraph: guard() (and guard(place)), no_grad, grad, enabled()."""
    dygraph = importlib.import_module("pycoll.base.dygraph")
    assert pycoll.base.dygraph is dygraph and dygraph.grad is pycoll.grad and dygraph.enabled() is True
    x = pycoll.to_tensor([3.0], stop_gradient=False)
    with dygraph.guard():
        with dygraph.no_grad():
            assert (x * 2).stop_gradient
        assert not (x * 2).stop_gradient
    with dygraph.guard(pycoll.CPUPlace()):
        assert pycoll.get_device() == "cpu"
    assert pycoll.get_device() == "cpu"
    assert "dygraph" in dir(pycoll.base)


def test_base_framework_and_static_variable_serve_type_checks():
    """Code written for both of paddle's modes checks ``isinstance(x, (paddle.Tensor,
    paddle.static.Variable))`` and ``isinstance(p, paddle.base.framework.EagerParamBase)``."""
    framework = importlib.import_module("pycoll.base.framework")
    assert pycoll.base.framework is framework and framework.in_dygraph_mode() is True
    weight = pycoll.nn.Linear(2, 1).weight
    assert isinstance(weight, framework.EagerParamBase) and not isinstance(pycoll.ones([1]), framework.EagerParamBase)
    assert framework.Variable is pycoll.static.Variable and isinstance(weight, pycoll.static.Variable)
    assert isinstance(pycoll.ones([1]), pycoll.static.Variable) and not isinstance(1.0, pycoll.static.Variable)
    with pytest.raises(TypeError, match="static.Variable: pycoll runs eagerly"):
        pycoll.static.Variable()
    assert "framework" in dir(pycoll.base)


def test_base_names_pycoll_lacks_raise_attribute_error_naming_the_module():
    with pytest.raises(AttributeError, match="'pycoll.base' has no attribute 'Executor'"):
        pycoll.base.Executor
    with pytest.raises(AttributeError, match="'pycoll.base' has no attribute 'io'"):  # paddle.base.io is not paddle.io
        pycoll.base.io


# ---- paddle.tensor(...) ----

def test_tensor_is_called_as_paddle_33s_creation_function():
    # paddle 3.3.1: paddle.tensor(1) is an int64 0-D tensor with stop_gradient=True
    one = pycoll.tensor(1)
    assert isinstance(one, pycoll.Tensor) and one.shape == [] and one.dtype == pycoll.int64 and one.stop_gradient
    pair = pycoll.tensor([1.5, 2.0], dtype="float32")
    assert pair.dtype == pycoll.float32 and pair.numpy().tolist() == [1.5, 2.0]
    made = pycoll.tensor([0.1, 0.2], device="cpu", requires_grad=True)
    assert made.dtype == pycoll.float32 and made.stop_gradient is False and made.place == "cpu"
    assert pycoll.tensor(1, "float64").dtype == pycoll.float64


def test_tensor_of_a_tensor_is_a_detached_copy():
    x = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    y = pycoll.tensor(x)
    assert y.stop_gradient and y is not x
    y[0] = 5.0
    assert x.numpy().tolist() == [1.0, 2.0]


def test_tensor_pin_memory_on_the_cpu_is_refused_as_paddle_does():
    with pytest.raises(RuntimeError, match=r"Pinning memory is not supported for Place\(cpu\)"):
        pycoll.tensor(1, device="cpu", pin_memory=True)


def test_tensor_module_keeps_its_class_and_paths():
    from pycoll.tensor import Tensor, to_tensor
    import pycoll.tensor.math as tensor_math

    assert Tensor is pycoll.Tensor and to_tensor is pycoll.to_tensor
    assert tensor_math.matmul is pycoll.matmul and pycoll.tensor.manipulation.reshape is pycoll.reshape


# ---- paddle.nn.functional's and paddle.nn.layer's submodules, paddle.nn.loss ----

@pytest.mark.parametrize("path, name", [("loss", "mse_loss"), ("conv", "conv2d"), ("activation", "relu"),
                                        ("common", "linear"), ("norm", "layer_norm"), ("pooling", "max_pool2d"),
                                        ("vision", "pixel_shuffle"), ("distance", "pairwise_distance"),
                                        ("input", "one_hot"), ("extension", "diag_embed")])
def test_functional_submodules_answer_with_pycolls_functions(path, name):
    module = importlib.import_module(f"pycoll.nn.functional.{path}")
    assert getattr(module, name) is getattr(F, name)
    assert getattr(getattr(F, path), name) is getattr(F, name)  # F.loss.mse_loss


def test_functional_submodule_import_from_and_a_missing_name():
    from pycoll.nn.functional.loss import cross_entropy
    assert cross_entropy is F.cross_entropy
    with pytest.raises(AttributeError, match="'pycoll.nn.functional.loss' has no attribute 'no_such_loss'"):
        F.loss.no_such_loss
    assert F.sparse_attention is not F.loss and callable(F.sparse_attention)  # paddle's F.sparse_attention: the function


def test_optimizer_and_amp_modules_are_paddles_paths():
    from pycoll.amp.auto_cast import auto_cast, decorate
    from pycoll.optimizer.adamw import AdamW
    assert AdamW is pycoll.optimizer.AdamW and auto_cast is pycoll.amp.auto_cast and decorate is pycoll.amp.decorate


def test_layer_submodules_are_paddles_paths():
    from pycoll.nn.layer.common import Linear
    from pycoll.nn.layer.loss import MSELoss
    assert Linear is pycoll.nn.Linear and MSELoss is pycoll.nn.MSELoss


LOSSES_ELSEWHERE = ["PoissonNLLLoss", "CTCLoss", "GaussianNLLLoss", "HSigmoidLoss", "MultiLabelSoftMarginLoss",
                    "MultiMarginLoss", "SoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
                    "AdaptiveLogSoftmaxWithLoss"]


@pytest.mark.parametrize("name", LOSSES_ELSEWHERE)
def test_nn_loss_holds_every_loss_class(name):
    import pycoll.nn.loss as loss_module
    assert getattr(loss_module, name) is getattr(pycoll.nn, name)


def test_nn_loss_poisson_nll_loss_value():
    inp = pycoll.to_tensor([[0.5, -1.0], [1.5, 0.2]])
    lab = pycoll.to_tensor([[1.0, 0.0], [2.0, 1.0]])
    # paddle 3.3.1 prints 1.0049231052398682 for both paths
    assert pycoll.nn.loss.PoissonNLLLoss()(inp, lab).item() == pytest.approx(1.0049231052398682, rel=1e-6)


# ---- paddle.tensor.manipulation.tensor_array_to_tensor ----

def test_tensor_array_to_tensor_concats_the_docstring_array():
    x0 = pycoll.to_tensor([[1., 2.], [3., 4.]])
    x1 = pycoll.to_tensor([[5., 6.], [7., 8.]])
    i = pycoll.full(shape=[1], dtype="int64", fill_value=0)
    array = pycoll.tensor.array.create_array(dtype="float32")
    pycoll.tensor.array.array_write(x0, i, array)
    pycoll.tensor.array.array_write(x1, i + 1, array)
    output, index = pycoll.tensor.manipulation.tensor_array_to_tensor(input=array)
    # paddle 3.3.1: [[1, 2, 5, 6], [3, 4, 7, 8]] and [2, 2]
    assert output.numpy().tolist() == [[1.0, 2.0, 5.0, 6.0], [3.0, 4.0, 7.0, 8.0]]
    assert index.numpy().tolist() == [2, 2] and index.dtype == pycoll.int64


def test_tensor_array_to_tensor_passes_the_gradient_to_each_input():
    x0 = pycoll.to_tensor([[1., 2.], [3., 4.]], stop_gradient=False)
    x1 = pycoll.to_tensor([[5., 6., 9.], [7., 8., 10.]], stop_gradient=False)
    output, index = pycoll.tensor.manipulation.tensor_array_to_tensor([x0, x1])
    assert output.shape == [2, 5] and index.numpy().tolist() == [2, 3] and not output.stop_gradient
    (output * pycoll.arange(5, dtype="float32")).sum().backward()
    # paddle 3.3.1: x0.grad [[0, 1], [0, 1]], x1.grad [[2, 3, 4], [2, 3, 4]]
    assert x0.grad.numpy().tolist() == [[0.0, 1.0], [0.0, 1.0]]
    assert x1.grad.numpy().tolist() == [[2.0, 3.0, 4.0], [2.0, 3.0, 4.0]]


def test_tensor_array_to_tensor_stacks_with_use_stack():
    a, b = pycoll.ones([2, 3]), pycoll.zeros([2, 3])
    join = pycoll.tensor.manipulation.tensor_array_to_tensor
    out, index = join([a, b], axis=0, use_stack=True)  # paddle 3.3.1: [2, 2, 3] and [2, 2]
    assert out.shape == [2, 2, 3] and index.numpy().tolist() == [2, 2]
    out, index = join([a, b], axis=-1, use_stack=True)  # paddle 3.3.1: [2, 3, 2] and [3, 3]
    assert out.shape == [2, 3, 2] and index.numpy().tolist() == [3, 3]
    np.testing.assert_array_equal(out.numpy()[..., 0], np.ones([2, 3]))


def test_tensor_array_to_tensor_refuses_what_paddle_refuses():
    a, b = pycoll.ones([2, 3]), pycoll.zeros([2, 3])
    join = pycoll.tensor.manipulation.tensor_array_to_tensor
    with pytest.raises(AssertionError, match="input must be a list"):  # paddle 3.3.1 asserts on a tuple
        join((a, b))
    with pytest.raises(IndexError, match="axis=2"):  # paddle 3.3.1: IndexError (stacked, then no size there)
        join([a, b], axis=2, use_stack=True)
    with pytest.raises(TypeError, match=r"input\[1\] must be a Tensor"):
        join([a, 1])
    with pytest.raises(ValueError):  # paddle 3.3.1: ValueError, shapes differ off the axis
        join([a, pycoll.ones([3, 3])])


# ---- paddle.tensor.random.gaussian_ ----

def test_gaussian_fills_x_in_place_with_normal_draws():
    x = pycoll.zeros([20000])
    returned = pycoll.tensor.random.gaussian_(x, mean=2.0, std=3.0)
    assert returned is x and x.dtype == pycoll.float32
    # paddle 3.3.1 (another draw): mean 1.97, std 2.99
    assert abs(float(x.mean()) - 2.0) < 0.1 and abs(float(x.std()) - 3.0) < 0.1
    y = pycoll.randn([3, 4], dtype="float64")
    pycoll.tensor.random.gaussian_(y)
    assert y.shape == [3, 4] and y.dtype == pycoll.float64


def test_gaussian_seed_repeats_and_complex_x_splits_the_variance():
    a, b = pycoll.zeros([4]), pycoll.zeros([4])
    pycoll.tensor.random.gaussian_(a, seed=7)
    pycoll.tensor.random.gaussian_(b, seed=7)
    assert a.numpy().tolist() == b.numpy().tolist()  # paddle 3.3.1: equal too
    z = pycoll.zeros([40000], dtype="complex64")
    pycoll.tensor.random.gaussian_(z, mean=1 + 1j, std=2.0)
    # paddle 3.3.1: mean (1.01+1.00j), real and imaginary std 1.41 and 1.42 (std / sqrt(2) each)
    values = z.numpy()
    assert abs(values.mean() - (1 + 1j)) < 0.05
    assert abs(values.real.std() - np.sqrt(2)) < 0.05 and abs(values.imag.std() - np.sqrt(2)) < 0.05


def test_gaussian_refuses_what_paddle_refuses():
    with pytest.raises(ValueError, match="equal real and imaginary parts"):  # paddle 3.3.1: ValueError
        pycoll.tensor.random.gaussian_(pycoll.zeros([3], dtype="complex64"), mean=1 + 2j)
    with pytest.raises(TypeError, match="complex64 or complex128"):  # paddle 3.3.1: TypeError
        pycoll.tensor.random.gaussian_(pycoll.zeros([3]), mean=1 + 1j)
    with pytest.raises(TypeError, match="floating-point"):  # paddle 3.3.1: no int32 kernel
        pycoll.tensor.random.gaussian_(pycoll.zeros([3], dtype="int32"))
    leaf = pycoll.zeros([3])
    leaf.stop_gradient = False
    with pytest.raises(ValueError, match="leaf"):  # paddle 3.3.1: ValueError, leaf that takes a gradient
        pycoll.tensor.random.gaussian_(leaf)


# ---- paddle.MmapStorage ----

@pytest.fixture
def float_file(tmp_path):
    path = tmp_path / "f.pp"
    np.arange(10, dtype=np.float32).tofile(path)
    return str(path)


def test_mmap_storage_docstring_example(tmp_path):
    a = pycoll.arange(4 * 5).reshape([4, 5]).astype(pycoll.float32)
    path = str(tmp_path / "test.pp")
    a.numpy().tofile(path)
    storage = pycoll.MmapStorage(path, a.size * a.element_size())
    got = storage.get_slice(dtype=pycoll.float32, start=0, stop=a.size).reshape([4, 5])
    assert got.place == "cpu" and got.numpy().tolist() == a.numpy().tolist()


def test_mmap_storage_get_slice_reads_as_paddle_does(float_file):
    storage = pycoll.MmapStorage(float_file, 40)
    # measured on paddle 3.3.1: start is a byte offset, len(range(start, stop, step)) the count
    assert storage.get_slice("float32", 4, 6).numpy().tolist() == [1.0, 2.0]
    assert storage.get_slice("float32", 0, 10, 3).numpy().tolist() == [0.0, 1.0, 2.0, 3.0]
    assert storage.get_slice("float32", 4, 12, 2).numpy().tolist() == [1.0, 2.0, 3.0, 4.0]
    assert storage.get_slice("float32", 5, 2).shape == [0]
    assert storage.get_slice("uint8", 0, 8).numpy().tolist() == [0, 0, 0, 0, 0, 0, 128, 63]
    as_double = storage.get_slice(None, 0, 3)
    assert as_double.dtype == pycoll.float64
    assert as_double.numpy().tolist() == [0.0078125, 32.00000762939453, 2048.0004920959473]
    assert storage.get_slice("float32", 8).numpy().tolist() == [2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]


def test_mmap_storage_sees_the_file_and_keeps_writes_to_itself(float_file):
    storage = pycoll.MmapStorage(float_file, 40)
    view = storage.get_slice("float32", 0, 10)
    with open(float_file, "r+b") as file:  # paddle 3.3.1: a rewrite of the file shows in the tensor
        file.write(np.full(10, 7, np.float32).tobytes())
    assert view.numpy().tolist() == [7.0] * 10
    view[0] = 5.0  # paddle 3.3.1: the file keeps 7
    assert np.fromfile(float_file, dtype=np.float32)[0] == 7.0


def test_mmap_storage_refuses_bad_input(float_file, tmp_path):
    with pytest.raises(RuntimeError, match="unable to open file"):  # paddle 3.3.1: RuntimeError
        pycoll.MmapStorage(str(tmp_path / "missing.pp"), 4)
    with pytest.raises(RuntimeError, match="smaller than the required mapping size <400>"):  # paddle's too
        pycoll.MmapStorage(float_file, 400)
    with pytest.raises(TypeError, match="filename"):  # paddle 3.3.1: TypeError
        pycoll.MmapStorage(1, 4)
    storage = pycoll.MmapStorage(float_file, 40)
    with pytest.raises(ValueError, match="past the map's 40 bytes"):  # paddle reads past its map here
        storage.get_slice("float32", 8, 20)
    with pytest.raises(ValueError, match="step must be > 0"):  # paddle dies of SIGFPE here
        storage.get_slice("float32", step=0)
    with pytest.raises(ValueError, match="start must be >= 0"):  # paddle dies of SIGSEGV here
        storage.get_slice("float32", start=-3, stop=-1)
