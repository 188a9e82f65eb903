"""Tensor creation, properties, interop, forward values of the ops, devices and seeding."""
import importlib.util

import sys

import numpy as np
import pytest

import pycoll

HAS_CUPY = importlib.util.find_spec("cupy") is not None


# ---- creation ----------------------------------------------------------------------------

def test_to_tensor_dtypes_follow_paddle():
    assert pycoll.to_tensor([1.0, 2.0]).dtype == np.float32
    assert pycoll.to_tensor(3.5).dtype == "float32"
    assert pycoll.to_tensor([1, 2]).dtype == np.int64
    assert pycoll.to_tensor([True]).dtype == np.bool_
    assert pycoll.to_tensor(np.zeros(2)).dtype == np.float64
    assert pycoll.to_tensor([1, 2], dtype="float64").dtype == np.float64
    assert pycoll.to_tensor(np.float64(2.0)).dtype == np.float64


def test_to_tensor_copies_arrays_and_tensors():
    """paddle's to_tensor (and torch.tensor) copy: a collective or in-place op on the tensor
    leaves the caller's array alone, and one buffer filled for several calls gives several
    tensors (from_numpy and from_dlpack share memory instead)."""
    a = np.arange(4, dtype=np.float32)
    t = pycoll.to_tensor(a)
    assert not np.shares_memory(t.array, a)
    pycoll.to_tensor(a).add_(pycoll.ones([4]))
    assert a.tolist() == [0.0, 1.0, 2.0, 3.0]
    buf = np.zeros(2, np.float32)
    made = []
    for i in range(3):
        buf[:] = i
        made.append(pycoll.to_tensor(buf))
    assert [m.tolist() for m in made] == [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]  # paddle's
    assert np.shares_memory(pycoll.from_numpy(a).numpy(), a)
    u = pycoll.to_tensor(t, stop_gradient=False)  # paddle: "copy will be performed"
    assert u.array is not a and not u.stop_gradient and t.stop_gradient
    np.testing.assert_array_equal(u.numpy(), a)
    assert pycoll.to_tensor(a, dtype="float64").array is not a


def test_tensor_constructor_copies_unless_zero_copy_as_paddles():
    """paddle.Tensor(value, place, persistable, zero_copy=False, name, stop_gradient): a copy (a
    probe's t = Tensor(a) then a[:] = 10 changed t's gradient from [2, 4] to [20, 20])."""
    a = np.array([1.0, 2.0], np.float32)
    t = pycoll.Tensor(a)
    a[0] = 9
    assert t.tolist() == [1.0, 2.0]
    t.zero_()
    assert a.tolist() == [9.0, 2.0]
    shared = pycoll.Tensor(a, zero_copy=True)
    a[1] = 7
    assert shared.tolist() == [9.0, 7.0]
    named = pycoll.Tensor(value=a, place=pycoll.CPUPlace(), persistable=True, name="t", stop_gradient=False)
    assert (named.tolist(), named.name, named.persistable, named.stop_gradient) == ([9.0, 7.0], "t", True, False)
    assert not np.shares_memory(named.array, a)
    with pytest.raises(TypeError, match="unexpected keyword argument 'dims'"):
        pycoll.Tensor(a, dims=[2])


def test_copy_copy_of_a_tensor_copies_its_values():
    import copy

    x = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    y = copy.copy(x)
    x.detach().add_(pycoll.ones([2]))
    assert y.tolist() == [1.0, 2.0] and y.stop_gradient is False and y.is_leaf
    z = copy.copy(x * 2)  # an op's result: a leaf copy, as deepcopy's
    assert z.is_leaf and z.tolist() == [4.0, 6.0]


def test_assign_of_a_lone_number_has_shape_1_as_paddles():
    for value, dtype in [(3.0, "float64"), (3, "int64"), (True, "bool"), (np.float32(2), "float32")]:
        out = pycoll.assign(value)
        assert (out.shape, str(out.dtype)) == ([1], dtype), value
    assert pycoll.assign(np.array(2.0)).shape == []  # a 0-d array keeps its shape


@pytest.mark.parametrize("dtype", [object, str, "float128", np.longdouble, "V8"])
def test_dtypes_no_tensor_holds_are_refused_naming_them(dtype):
    for make in (lambda: pycoll.zeros([2], dtype=dtype), lambda: pycoll.ones([2]).astype(dtype),
                 lambda: pycoll.to_tensor([1, 2], dtype=dtype), lambda: pycoll.cast(pycoll.ones([2]), dtype)):
        with pytest.raises(TypeError, match="is no tensor dtype"):
            make()


def test_to_tensor_rejects_non_numeric_data():
    with pytest.raises(TypeError, match="data must be numbers"):
        pycoll.to_tensor("abc")
    with pytest.raises(TypeError, match="dtype"):
        pycoll.to_tensor([1.0], dtype="not-a-dtype")
    with pytest.raises(ValueError, match="place"):
        pycoll.to_tensor([1.0], place="tpu")


def test_to_tensor_accepts_dlpack_objects():
    class Exporter:
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, *args, **kwargs):
            return self.a.__dlpack__(*args, **kwargs)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    a = np.arange(3.0)
    t = pycoll.to_tensor(Exporter(a))
    assert t.tolist() == [0.0, 1.0, 2.0] and not np.shares_memory(t.array, a)  # copied, as an array is
    assert np.shares_memory(pycoll.from_dlpack(Exporter(a)).numpy(), a)  # from_dlpack shares


def test_creation_functions():
    assert pycoll.ones([2, 3]).shape == [2, 3] and pycoll.ones([2, 3]).dtype == np.float32
    assert np.all(pycoll.zeros(4, "int64").numpy() == 0) and pycoll.zeros(4, "int64").dtype == np.int64
    assert np.all(pycoll.full([2], 7.0).numpy() == 7.0)
    np.testing.assert_array_equal(pycoll.arange(5).numpy(), np.arange(5))
    assert pycoll.arange(5).dtype == np.int64
    assert pycoll.arange(0, 1, 0.25).dtype == np.float32
    x = pycoll.randn([3], "float64")
    assert pycoll.zeros_like(x).dtype == np.float64 and pycoll.ones_like(x).shape == [3]
    assert pycoll.creation.full_like(x, 2.0).numpy().tolist() == [2.0, 2.0, 2.0]
    r = pycoll.rand([1000])
    assert r.dtype == np.float32 and 0 <= r.numpy().min() and r.numpy().max() < 1
    assert pycoll.empty([2, 3]).shape == [2, 3] and pycoll.empty([2], "int32").dtype == np.int32
    assert pycoll.empty_like(x).dtype == np.float64 and pycoll.empty_like(x, "int64").shape == [3]
    drawn = pycoll.randint(-3, 4, [2000]).numpy()
    assert drawn.dtype == np.int64 and drawn.min() == -3 and drawn.max() == 3
    assert set(pycoll.randint(2, shape=[200], dtype="int32").numpy().tolist()) == {0, 1}


def test_creation_rejects_bad_shapes_and_dtypes():
    with pytest.raises(ValueError, match="shape"):
        pycoll.ones([2, -1])
    with pytest.raises(ValueError, match="shape"):
        pycoll.zeros("3")
    with pytest.raises(TypeError, match="float"):
        pycoll.randn([2], "int64")
    with pytest.raises(ValueError, match="high \\(2\\) must be greater than low \\(5\\)"):
        pycoll.randint(5, 2)
    with pytest.raises(TypeError, match="integer tensors"):
        pycoll.randint(0, 5, [2], "float32")


def test_seed_makes_random_values_reproducible():
    pycoll.seed(123)
    a = pycoll.randn([10, 10], "float32").numpy().copy()
    b = pycoll.rand([5]).numpy().copy()
    pycoll.seed(123)
    np.testing.assert_array_equal(pycoll.randn([10, 10], "float32").numpy(), a)
    np.testing.assert_array_equal(pycoll.rand([5]).numpy(), b)
    pycoll.seed(124)
    assert not np.array_equal(pycoll.randn([10, 10], "float32").numpy(), a)
    with pytest.raises(ValueError, match="seed"):
        pycoll.seed(-1)


# ---- properties and interop ------------------------------------------------------------

def test_properties():
    t = pycoll.to_tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert t.shape == [2, 3] and isinstance(t.shape, list)
    assert t.ndim == 2 and t.size == 6 and len(t) == 2 and t.dtype == np.float32
    assert t.place == "cpu" and t.is_leaf
    assert pycoll.to_tensor(2.5).item() == 2.5 and float(pycoll.to_tensor([2.5])) == 2.5
    assert int(pycoll.to_tensor(3)) == 3 and bool(pycoll.to_tensor([1]))
    assert [row.shape for row in t] == [[3], [3]]
    assert "shape=[2, 3]" in repr(t) and "float32" in repr(t)
    with pytest.raises(TypeError):
        len(pycoll.to_tensor(1.0))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(t)


def test_numpy_interop_is_zero_copy_on_cpu():
    t = pycoll.zeros([3])
    assert t.numpy() is t.array
    assert np.asarray(t) is t.array
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    d = np.from_dlpack(t)
    assert np.shares_memory(d, t.array)
    assert t.__dlpack_device__()[0] == 1
    assert not hasattr(t, "__cuda_array_interface__")


def test_numpy_arrays_on_the_left_defer_to_tensor():
    t = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    out = np.array([3.0, 4.0], dtype=np.float32) * t
    assert isinstance(out, pycoll.Tensor) and not out.stop_gradient
    np.testing.assert_allclose(out.numpy(), [3.0, 8.0])


def test_deepcopy_copies_the_value_and_not_the_graph_nor_the_gradient():
    import copy
    t = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    (t * t).sum().backward()
    c = copy.deepcopy(t)
    c.array[0] = 9.0
    assert t.numpy()[0] == 1.0 and not c.stop_gradient and c.grad is None  # paddle's copy has no .grad
    loss = (t * 2).sum()
    kept = copy.deepcopy({"loss": loss, "step": 3})  # paddle copies an op's result as a leaf
    assert kept["loss"].item() == 6.0 and kept["loss"].is_leaf and not kept["loss"].stop_gradient
    assert kept["loss"].grad_node is None and loss.grad_node is not None
    net = pycoll.nn.Linear(2, 1)
    net.activation = net(t.reshape([1, 2]))  # a model that keeps an activation (an EMA/best-model snapshot)
    twin = copy.deepcopy(net)
    assert twin.activation.is_leaf and np.array_equal(twin.activation.numpy(), net.activation.numpy())


# ---- forward values of the ops ---------------------------------------------------------

A = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
B = np.array([0.5, -1.0, 2.0], dtype=np.float32)


@pytest.mark.parametrize("op, expected", [
    (lambda a, b: a + b, A + B),
    (lambda a, b: a - b, A - B),
    (lambda a, b: a * b, A * B),
    (lambda a, b: a / b, A / B),
    (lambda a, b: 2 - a, 2 - A),
    (lambda a, b: 6 / a, 6 / A),
    (lambda a, b: a ** 2, A ** 2),
    (lambda a, b: 2 ** b, 2 ** B),
    (lambda a, b: -a, -A),
    (lambda a, b: a @ b, A @ B),
    (lambda a, b: pycoll.matmul(a, a, transpose_y=True), A @ A.T),
    (lambda a, b: a.sum(), A.sum()),
    (lambda a, b: a.sum(axis=0, keepdim=True), A.sum(0, keepdims=True)),
    (lambda a, b: pycoll.mean(a, axis=1), A.mean(1)),
    (lambda a, b: a.max(), A.max()),
    (lambda a, b: pycoll.min(a, axis=1), A.min(1)),
    (lambda a, b: pycoll.argmax(a, axis=1), A.argmax(1)),
    (lambda a, b: a.reshape([3, -1]), A.reshape(3, 2)),
    (lambda a, b: a.T, A.T),
    (lambda a, b: a.transpose([1, 0]), A.T),
    (lambda a, b: a.flatten(), A.ravel()),
    (lambda a, b: a.unsqueeze(1).shape and a.unsqueeze(1), A[:, None]),
    (lambda a, b: pycoll.squeeze(a.unsqueeze(0)), A),
    (lambda a, b: pycoll.concat([a, a], axis=0), np.concatenate([A, A])),
    (lambda a, b: pycoll.stack([b, b]), np.stack([B, B])),
    (lambda a, b: a[:, 1], A[:, 1]),
    (lambda a, b: a[[1, 0, 1]], A[[1, 0, 1]]),
    (lambda a, b: pycoll.tanh(b), np.tanh(B)),
    (lambda a, b: pycoll.exp(b), np.exp(B)),
    (lambda a, b: pycoll.log(a), np.log(A)),
    (lambda a, b: pycoll.sqrt(a), np.sqrt(A)),
    (lambda a, b: pycoll.square(b), B ** 2),
    (lambda a, b: pycoll.abs(b), np.abs(B)),
    (lambda a, b: pycoll.relu(b), np.maximum(B, 0)),
    (lambda a, b: pycoll.sigmoid(b), 1 / (1 + np.exp(-B))),
    (lambda a, b: pycoll.clip(a, 2, 4), np.clip(A, 2, 4)),
    (lambda a, b: a.astype("int32"), A.astype(np.int32)),
    (lambda a, b: pycoll.cast(a, "float64"), A.astype(np.float64)),
    (lambda a, b: a > 3, A > 3),
    (lambda a, b: a == a, A == A),
    (lambda a, b: b != 0.5, B != 0.5),
    (lambda a, b: a <= 2.0, A <= 2.0),
])
def test_op_values_match_numpy(op, expected):
    out = op(pycoll.to_tensor(A), pycoll.to_tensor(B))
    assert isinstance(out, pycoll.Tensor)
    assert out.dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


def test_float32_stays_float32_with_python_scalars():
    t = pycoll.ones([2])
    for out in (t * 2.5, 1.5 - t, t / 3, t ** 2, 2.0 ** t, t + np.float64(1.0)):
        assert out.dtype == np.float32


def test_abs_and_format_behave_as_paddle_s():
    t = pycoll.to_tensor([-1.5, 2.0], stop_gradient=False)
    magnitude = abs(t)
    assert magnitude.numpy().tolist() == [1.5, 2.0]
    magnitude.sum().backward()
    assert t.grad.numpy().tolist() == [-1.0, 1.0]
    assert f"{pycoll.to_tensor(3.14159):.2f}" == "3.14" and f"{pycoll.to_tensor(7)}" == "7"  # 0-d: the number
    assert f"{t}" == str(t)
    with pytest.raises(TypeError):
        f"{t:.2f}"


def test_comparisons_have_no_grad_and_tensors_stay_hashable():
    x = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    assert (x > 1).stop_gradient and (x > 1).dtype == np.bool_
    assert len({x, x}) == 1
    assert (x == None) is False  # noqa: E711 - falls back to identity


def test_sigmoid_is_stable_for_large_inputs():
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        out = pycoll.sigmoid(pycoll.to_tensor([-1000.0, 0.0, 1000.0])).numpy()
    np.testing.assert_allclose(out, [0.0, 0.5, 1.0])


def test_setitem_writes_in_place():
    t = pycoll.zeros([2, 3])
    t[0] = pycoll.ones([3])
    t[1, [0, 2]] = [5.0, 6.0]
    np.testing.assert_array_equal(t.numpy(), [[1, 1, 1], [5, 0, 6]])


def test_op_argument_errors():
    with pytest.raises(ValueError, match="axis"):
        pycoll.sum(pycoll.ones([2, 2]), axis=2)
    with pytest.raises(ValueError, match="perm"):
        pycoll.transpose(pycoll.ones([2, 2]), [0, 0])
    with pytest.raises(ValueError, match="reshape"):
        pycoll.reshape(pycoll.ones([2, 2]), [3])
    with pytest.raises(TypeError, match="operand"):
        pycoll.ones([2]) + "x"
    with pytest.raises(TypeError, match="Tensor"):
        pycoll.tanh("x")
    with pytest.raises(ValueError, match="max must be greater than or equal to min"):
        pycoll.clip(pycoll.ones([2]), 3, 1)


# ---- devices -----------------------------------------------------------------------------

def test_set_and_get_device_cpu():
    assert pycoll.set_device("cpu") == "cpu"
    assert pycoll.get_device() == "cpu"
    with pytest.raises(ValueError, match="'cpu', 'gpu'"):
        pycoll.set_device("tpu:0")
    with pytest.raises(TypeError):
        pycoll.set_device(0)


def test_gpu_without_cupy_says_what_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` fails, as without CuPy
    with pytest.raises(RuntimeError, match="CuPy"):
        pycoll.set_device("gpu")
    assert pycoll.get_device() == "cpu"


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUPY, reason="needs CuPy and a GPU")
def test_gpu_tensors_match_cpu_with_the_same_seed():
    import cupy
    pycoll.set_device("cpu")
    pycoll.seed(5)
    host = pycoll.randn([4, 4]).numpy().copy()
    try:
        assert pycoll.set_device("gpu:0") == "gpu:0"
        pycoll.seed(5)
        dev = pycoll.randn([4, 4])
        assert isinstance(dev.array, cupy.ndarray) and dev.place == "gpu:0"
        np.testing.assert_array_equal(dev.numpy(), host)
        assert "data" in dev.__cuda_array_interface__
        assert pycoll.to_tensor(host).place == "gpu:0"
        w = pycoll.to_tensor(host, stop_gradient=False)
        (w * w).sum().backward()
        assert isinstance(w.grad.array, cupy.ndarray)
        np.testing.assert_allclose(w.grad.numpy(), 2 * host, rtol=1e-6)
        back = dev.cpu()
        assert isinstance(back.array, np.ndarray)
    finally:
        pycoll.set_device("cpu")


def test_an_op_result_pickles_without_its_graph_as_paddles_does():
    import pickle
    x = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    x.register_hook(lambda g: g * 2)  # a closure: not pickled
    (x * 3).sum().backward()
    y = pickle.loads(pickle.dumps(x * 2))
    assert y.numpy().tolist() == [2.0, 4.0] and not y.stop_gradient and y.grad_node is None
    back = pickle.loads(pickle.dumps(x))
    assert back.grad is None and "_grad_hooks" not in back.__dict__  # paddle's and torch's drop .grad
    big = pycoll.ones([1000, 1000])
    column = big[:, 0]  # a view pickles as its own elements, not with the tensor it views
    assert len(pickle.dumps(column)) < 10_000 and pickle.loads(pickle.dumps(column)).numpy().tolist() == [1.0] * 1000
    weight = pycoll.nn.Linear(2, 2).weight
    copy = pickle.loads(pickle.dumps(weight))
    assert type(copy) is type(weight) and copy.name == weight.name and copy.trainable


def test_paddles_dtype_names_are_there_bfloat16_included():
    for name in ("int8", "int16", "uint8", "complex64", "complex128", "bfloat16"):
        assert getattr(pycoll, name) == np.dtype(name)
        assert pycoll.to_tensor([1, 0], dtype=name).dtype == np.dtype(name)
    assert pycoll.to_tensor([1.5], dtype=pycoll.bfloat16).numpy().astype(np.float32).tolist() == [1.5]


def test_numpy_reductions_of_a_tensor_give_tensors_as_paddle():
    """np.sum/np.mean/np.prod/np.all/np.any call the Tensor's own method with ``out=None`` (paddle
    3.3 takes ``out`` there); the ``out`` tensor, when given, receives the result."""
    t = pycoll.to_tensor([[1.0, 2.0], [3.0, 5.0]])
    assert isinstance(np.sum(t), pycoll.Tensor) and float(np.sum(t)) == 11.0
    assert np.sum(t, axis=0).numpy().tolist() == [4.0, 7.0]
    assert float(np.mean(t)) == 2.75 and float(np.prod(t)) == 30.0
    assert bool(np.all(t)) and bool(np.any(t))
    out = pycoll.zeros([2])
    assert pycoll.sum(t, axis=1, out=out).numpy().tolist() == [3.0, 8.0] == out.numpy().tolist()
    pycoll.mean(t, axis=0, out=out)
    assert out.numpy().tolist() == [2.0, 3.5]
    pycoll.prod(t, 1, False, None, out)
    assert out.numpy().tolist() == [2.0, 15.0]
    pycoll.amax(t, axis=1, out=out)
    assert out.numpy().tolist() == [2.0, 5.0]
    flags = pycoll.zeros([2], "bool")
    pycoll.all(t > 1.5, axis=1, out=flags)
    assert flags.numpy().tolist() == [False, True]


def test_a_sequence_times_a_0d_int_tensor_repeats_as_pythons():
    n = pycoll.to_tensor(3)
    assert [1, 2] * n == [1, 2, 1, 2, 1, 2] and n * [0] == [0, 0, 0]  # paddle's, through __index__
    assert (1, 2) * n == (1, 2, 1, 2, 1, 2) and "ab" * n == "ababab"
    x = pycoll.to_tensor([1.0, 2.0])
    assert (x * [3.0, 4.0]).tolist() == [3.0, 8.0] and ([3.0, 4.0] * x).tolist() == [3.0, 8.0]  # elementwise
    assert (n * 2).item() == 6 and (2 * n).item() == 6
    with pytest.raises(TypeError, match="only integer tensors of one element can be used as an index"):
        x * "a"


def test_a_one_element_integer_tensor_bounds_a_slice_as_paddles():
    """paddle 3.3.1 takes x[t:] with t of shape [1] (argmax(keepdim=True)'s), for get and set."""
    x, t = pycoll.arange(10), pycoll.to_tensor([2])
    assert x[t:].tolist() == list(range(2, 10)) and x[:t].tolist() == [0, 1] and x[::t].tolist() == [0, 2, 4, 6, 8]
    assert x[pycoll.argmax(x, keepdim=True):].tolist() == [9] and [1, 2, 3][t] == 3
    y = pycoll.arange(5)
    y[pycoll.to_tensor([1]):pycoll.to_tensor([3])] = 0
    assert y.tolist() == [0, 0, 0, 3, 4]
    with pytest.raises(IndexError, match="integer tensors of one element .* shape \\[2\\]"):
        x[pycoll.to_tensor([1, 2]):]


def test_to_tensor_refuses_arrays_of_no_tensor_dtype_naming_the_dtype():
    ragged = np.array([np.array([1, 2]), np.array([3])], dtype=object)  # a dataset's ragged labels
    with pytest.raises(TypeError, match="data must be numbers .* got ndarray of dtype object"):
        pycoll.to_tensor(ragged)
    with pytest.raises(TypeError, match=r"dtype float128 \(cast it to float64 first\)"):
        pycoll.to_tensor(np.array([1.5], dtype=np.longdouble))
    with pytest.raises(TypeError, match="dtype <U1"):
        pycoll.to_tensor(np.array(["a"]))


def test_a_bfloat16_tensor_with_a_complex_number_computes_in_complex64_as_paddles():
    b = pycoll.to_tensor([1.0, 2.0], dtype="bfloat16")
    for out, want in ((b + 1j, [1 + 1j, 2 + 1j]), (1j * b, [1j, 2j]), (b - 1j, [1 - 1j, 2 - 1j])):
        assert out.dtype == pycoll.complex64 and out.numpy().tolist() == want
