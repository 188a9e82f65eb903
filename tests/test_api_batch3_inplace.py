"""paddle 3.3.1's in-place forms and Tensor attributes that pycoll lacked: the random fills
(exponential_, bernoulli_, log_normal_, random_; log_normal), cast_, transpose_, t_, where_,
fill_diagonal_tensor(_), the module-level squeeze_/unsqueeze_/reshape_/flatten_, Tensor.data,
data_ptr(), strides / get_strides() / stride(), persistable, device, unfold and
split_with_sizes. Numbers marked "paddle" were measured on paddle 3.3.1 (CPU) with the same
inputs; random fills are checked by their moments (4000 draws, bounds of several standard errors)."""
import numpy as np
import pytest

import pycoll


def T(v, dtype="float32", grad=False):
    return pycoll.to_tensor(np.asarray(v, dtype=dtype), stop_gradient=not grad)


N = 4000


def test_exponential_fill_moments_and_checks():
    pycoll.seed(3)
    x = pycoll.zeros([N])
    assert x.exponential_(2.0) is x
    a = x.numpy()
    assert x.dtype == np.float32 and (a >= 0).all()
    assert abs(a.mean() - 0.5) < 0.03 and abs(a.std() - 0.5) < 0.03  # mean = std = 1 / lam
    with pytest.raises(TypeError, match="floating-point"):
        pycoll.zeros([3], dtype="int64").exponential_()
    with pytest.raises(ValueError, match="lam must be > 0"):
        pycoll.zeros([3]).exponential_(0.0)


def test_bernoulli_fill_with_number_and_tensor_probability():
    pycoll.seed(4)
    x = pycoll.zeros([N])
    assert pycoll.bernoulli_(x, 0.3) is x
    assert set(np.unique(x.numpy())) <= {0.0, 1.0} and abs(x.numpy().mean() - 0.3) < 0.03
    p = T(np.where(np.arange(N) < N // 2, 0.9, 0.1))
    x.bernoulli_(p)
    assert abs(x.numpy()[:N // 2].mean() - 0.9) < 0.03 and abs(x.numpy()[N // 2:].mean() - 0.1) < 0.03
    x.bernoulli_(T(np.where(np.arange(N) < N // 2, -0.5, 1.5)))  # outside [0, 1]: 0 below, 1 above (paddle's)
    assert x.numpy()[:N // 2].tolist() == [0.0] * (N // 2) and x.numpy()[N // 2:].tolist() == [1.0] * (N - N // 2)
    with pytest.raises(ValueError, match="p holds NaN"):
        x.bernoulli_(float("nan"))


def test_log_normal_fill_and_function():
    pycoll.seed(5)
    x = pycoll.zeros([N])
    pycoll.log_normal_(x, 0.5, 0.25)
    logs = np.log(x.numpy())
    assert abs(logs.mean() - 0.5) < 0.02 and abs(logs.std() - 0.25) < 0.02
    y = pycoll.log_normal(1.0, 0.5, [N])
    assert y.dtype == np.float32 and y.shape == [N]
    assert abs(np.log(y.numpy()).mean() - 1.0) < 0.04 and abs(np.log(y.numpy()).std() - 0.5) < 0.03
    z = pycoll.log_normal(T([0.0, 10.0]), T([0.01, 0.01]))  # one draw per element
    np.testing.assert_allclose(np.log(z.numpy()), [0.0, 10.0], atol=0.06)
    # a complex x: real and imaginary parts each N(mean, std ** 2 / 2) (paddle 3.3.1's normal_ on complex64:
    # mean ~1+1j, each part's std ~1.414 for normal_(1.0, 2.0)); log_normal_ takes exp of such draws
    c = pycoll.zeros([N], dtype="complex64").normal_(1.0, 2.0).numpy()
    assert abs(c.mean() - (1 + 1j)) < 0.05 and abs(c.real.std() - 2 ** 0.5) < 0.05 and abs(c.imag.std() - 2 ** 0.5) < 0.05
    e = np.log(pycoll.zeros([N], dtype="complex64").log_normal_(0.0, 0.5).numpy())
    assert abs(e.real.std() - 0.5 / 2 ** 0.5) < 0.02 and abs(e.imag.std() - 0.5 / 2 ** 0.5) < 0.02


def test_random_fill_ranges_by_dtype():
    pycoll.seed(6)
    # paddle: without bounds float32 draws integers in [0, 2**24), float16 in [0, 2**11), int32 up to its max
    for dtype, top in (("float32", 2 ** 24), ("float16", 2 ** 11), ("float64", 2 ** 53),
                       ("int32", 2 ** 31 - 1), ("int64", 2 ** 63 - 1)):
        x = pycoll.zeros([N], dtype=dtype)
        a = x.random_().numpy().astype(np.float64)
        assert (a == np.floor(a)).all() and a.min() >= 0 and a.max() < top, dtype
        assert a.max() > top / 2, dtype  # the whole range is used
    x = pycoll.zeros([N])
    np.testing.assert_array_equal(np.unique(x.random_(5).numpy()), [0, 1, 2, 3, 4])  # paddle: [0, from_)
    np.testing.assert_array_equal(np.unique(x.random_(-3, to=2).numpy()), [-3, -2, -1, 0, 1])  # paddle
    with pytest.raises(ValueError, match="from=5 >= to=3"):  # paddle's message
        x.random_(5, 3)
    with pytest.raises(TypeError, match="from_ must be an int"):
        x.random_(1.5)


def test_random_fills_refuse_a_leaf_and_pass_zero_gradient():
    w = T([1.0, 2.0], grad=True)
    with pytest.raises(ValueError, match="exponential_"):
        w.exponential_()
    y = w * 2
    y.random_(3)
    y.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [0, 0])  # paddle: exponential_'s gradient is 0 too


def test_cast_transpose_t_in_place():
    x = T([[1.5, 2.0], [3.0, -4.7]])
    assert pycoll.cast_(x, "int32") is x
    assert x.dtype == np.int32
    np.testing.assert_array_equal(x.numpy(), [[1, 2], [3, -4]])  # paddle
    w = T([1.5, 2.0], grad=True)
    y = w * 3
    y.cast_("float64")
    (y * T([1.0, 2.0], "float64")).sum().backward()
    assert y.dtype == np.float64
    np.testing.assert_array_equal(w.grad.numpy(), [3, 6])
    x = pycoll.arange(6).reshape([2, 3]).astype("float32")
    assert x.transpose_([1, 0]) is x
    np.testing.assert_array_equal(x.numpy(), [[0, 3], [1, 4], [2, 5]])  # paddle
    assert pycoll.t_(x) is x and x.shape == [2, 3]
    v = T([1.0, 2.0])
    assert v.t_().shape == [2]
    with pytest.raises(ValueError, match="at most 2 dimensions"):
        pycoll.zeros([2, 2, 2]).t_()


def test_fill_diagonal_tensor_values_gradients_and_in_place():
    x = pycoll.zeros([3, 4])
    np.testing.assert_array_equal(x.fill_diagonal_tensor(T([1, 2, 3]), offset=1).numpy(),
                                  [[0, 1, 0, 0], [0, 0, 2, 0], [0, 0, 0, 3]])  # paddle
    np.testing.assert_array_equal(x.fill_diagonal_tensor(T([1, 2]), offset=-1).numpy(),
                                  [[0, 0, 0, 0], [1, 0, 0, 0], [0, 2, 0, 0]])  # paddle
    out = pycoll.zeros([2, 3, 3]).fill_diagonal_tensor(T(np.full([3, 2], 7.0)), dim1=0, dim2=1).numpy()
    expected = np.zeros([2, 3, 3])
    expected[0, 0], expected[1, 1] = 7, 7  # paddle: x[i, i, :] = 7
    np.testing.assert_array_equal(out, expected)
    with pytest.raises(ValueError, match="y must have shape"):
        x.fill_diagonal_tensor(T([1, 2]))
    a, b = T(np.ones([3, 3]), grad=True), T([1, 2, 3], grad=True)
    (a.fill_diagonal_tensor(b) * T(np.arange(9.0).reshape(3, 3))).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [[0, 1, 2], [3, 0, 5], [6, 7, 0]])  # paddle
    np.testing.assert_array_equal(b.grad.numpy(), [0, 4, 8])  # paddle 3.3.1 gives y no gradient
    z = pycoll.zeros([3, 4])
    assert z.fill_diagonal_tensor_(T([1, 2, 3])) is z
    np.testing.assert_array_equal(np.diag(z.numpy()), [1, 2, 3])


def test_where_in_place_and_module_level_shape_forms():
    c, a, b = pycoll.to_tensor([True, False, True]), T([1, 2, 3]), T([10, 20, 30])
    assert pycoll.where_(c, a, b) is a
    np.testing.assert_array_equal(a.numpy(), [1, 20, 3])  # paddle
    np.testing.assert_array_equal(b.numpy(), [10, 20, 30])
    with pytest.raises(ValueError, match="x and y"):
        pycoll.where_(c, a)
    q = pycoll.zeros([2, 3])
    assert pycoll.unsqueeze_(q, 0) is q and q.shape == [1, 2, 3]
    pycoll.squeeze_(q)
    pycoll.reshape_(q, [3, 2])
    assert q.shape == [3, 2]
    pycoll.flatten_(q)
    assert q.shape == [6]


def test_data_getter_and_setter():
    x = T([[1, 2, 3], [4, 5, 6]], grad=True)
    d = x.data
    assert d is not x and d.stop_gradient
    d[0, 0] = 100  # paddle: .data shares x's memory
    assert x.numpy()[0, 0] == 100
    x.data = pycoll.to_tensor([1, 2])  # paddle: x takes the value's shape and dtype, keeps stop_gradient
    assert x.shape == [2] and x.dtype == np.int64 and not x.stop_gradient
    with pytest.raises(TypeError, match="Tensor.data must be set to a Tensor"):
        x.data = np.ones(3)


def test_strides_data_ptr_persistable_device():
    y = pycoll.arange(12, dtype="float32").reshape([3, 4])
    # paddle: [4, 1], transposed [1, 4], y[::2] [8, 1], 0-d []
    assert y.strides == [4, 1] and y.get_strides() == [4, 1] and y.stride() == [4, 1]
    assert y.stride(0) == 4 and y.stride(-1) == 1
    assert y.t().strides == [1, 4] and y[::2].strides == [8, 1] and pycoll.to_tensor(3.0).strides == []
    assert isinstance(y.data_ptr(), int) and y[1].data_ptr() - y.data_ptr() == 16  # paddle: 16
    assert y.persistable is False
    assert pycoll.create_parameter([2], "float32").persistable is True  # paddle
    assert pycoll.nn.Linear(2, 2).weight.persistable is True
    assert pycoll.nn.Linear(2, 2).weight.is_distributed is False  # paddle's default
    y.persistable = True
    assert y.persistable is True
    assert y.device == "cpu"


def test_unfold_windows_and_gradient():
    z = pycoll.arange(10, dtype="float32")
    np.testing.assert_array_equal(z.unfold(0, 3, 2).numpy(),
                                  [[0, 1, 2], [2, 3, 4], [4, 5, 6], [6, 7, 8]])  # paddle
    m = pycoll.arange(12, dtype="float32").reshape([3, 4])
    u = pycoll.unfold(m, 0, 2, 1)
    assert u.shape == [2, 4, 2]  # paddle
    np.testing.assert_array_equal(u.numpy()[1], [[4, 8], [5, 9], [6, 10], [7, 11]])  # paddle
    assert m.unfold(1, 2, 1).shape == [3, 3, 2] and z.unfold(0, 0, 1).shape == [11, 0]  # paddle
    assert pycoll.to_tensor(1.5).unfold(0, 1, 1).shape == [1]  # paddle
    x = pycoll.arange(5, dtype="float32")
    x.stop_gradient = False
    (x.unfold(0, 2, 1) * pycoll.arange(8, dtype="float32").reshape([4, 2])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 3, 7, 11, 7])  # each window's share summed
    with pytest.raises(ValueError, match="size must be in"):
        z.unfold(0, 11, 1)
    with pytest.raises(ValueError, match="step must be greater than 0"):
        z.unfold(0, 3, 0)


def test_split_with_sizes():
    m = pycoll.arange(12, dtype="float32").reshape([3, 4])
    assert [t.shape for t in m.split_with_sizes([1, 2])] == [[1, 4], [2, 4]]  # paddle
    parts = m.split_with_sizes([1, 3], dim=1)
    np.testing.assert_array_equal(parts[0].numpy(), [[0], [4], [8]])  # paddle
    np.testing.assert_array_equal(parts[1].numpy(), [[1, 2, 3], [5, 6, 7], [9, 10, 11]])
    with pytest.raises(ValueError, match="Split sizes add up to 2 but got the tensor's size of 3"):  # paddle's
        m.split_with_sizes([1, 1])
    with pytest.raises(ValueError, match="non-negative"):
        m.split_with_sizes([4, -1])


def test_in_place_arithmetic_does_not_make_an_integer_tensor_floating():
    """paddle 3.3.1 refuses int64.add_(a float 0-d tensor) (its type promotion TypeError); pycoll
    did it and changed the caller's dtype. A float32 x keeps its dtype with a float64 0-d y."""
    x = pycoll.to_tensor([1, 2, 3])
    for call in (lambda: x.add_(pycoll.to_tensor(2.5)), lambda: x.multiply_(pycoll.to_tensor(2.5)),
                 lambda: x.subtract_(0.5)):
        with pytest.raises(TypeError, match="in-place op cannot make an integer tensor floating"):
            call()
    assert x.dtype == np.int64 and x.numpy().tolist() == [1, 2, 3]
    assert x.add_(pycoll.to_tensor(2)).numpy().tolist() == [3, 4, 5]
    f = pycoll.to_tensor([1.0, 2.0]).add_(pycoll.to_tensor(1.0, dtype="float64"))
    assert f.dtype == np.float32 and f.numpy().tolist() == [2.0, 3.0]
