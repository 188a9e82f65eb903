"""Tensor's bit operators, assignment into tensors in the autograd graph, and the convenience
methods of paddle 3.3.1 (pycoll/bit_operators.py, inplace_ops.setitem, pycoll/tensor_methods.py).
Numbers marked "paddle" were measured on paddle 3.3.1 (CPU) with the same code."""
import numpy as np
import pytest

import pycoll


def t(values, dtype=None, grad=False):
    return pycoll.to_tensor(values, dtype=dtype, stop_gradient=not grad)


# ---- bit operators ----------------------------------------------------------------------------

def test_bit_operators_match_paddle():
    b = t([True, False, True])
    i = t([5, -6, 7], "int32")
    u = t([5, 250, 7], "uint8")
    cases = [  # (result, paddle's values, paddle's dtype)
        (~b, [False, True, False], "bool"), (~i, [-6, 5, -8], "int32"), (~u, [250, 5, 248], "uint8"),
        (b & t([True, True, False]), [True, False, False], "bool"), (b | t([False] * 3), [True, False, True], "bool"),
        (b ^ b, [False] * 3, "bool"), (3 & i, [1, 2, 3], "int32"), (3 | i, [7, -5, 7], "int32"),
        (3 ^ i, [6, -7, 4], "int32"), (True & b, [True, False, True], "bool"), (1 ^ b, [False, True, False], "bool"),
        (i & 3, [1, 2, 3], "int32"), (i ^ np.array([1, 1, 1], "int32"), [4, -5, 6], "int32"),
        (np.array([1, 1, 1], "int32") | i, [5, -5, 7], "int32"),
        (i << 2, [20, -24, 28], "int32"), (i >> 1, [2, -3, 3], "int32"), (1 << t([1, 2, 3], "int32"), [2, 4, 8], "int32"),
        (u << 1, [10, 244, 14], "uint8"), (u >> 1, [2, 125, 3], "uint8"),
        (i << 40, [0, 0, 0], "int32"), (i >> 40, [0, -1, 0], "int32"), (i >> -1, [0, -1, 0], "int32"),
        (i.bitwise_right_shift(t([1, 1, 1], "int32"), is_arithmetic=False), [2, 2147483645, 3], "int32"),
        (i.bitwise_right_shift(t([40, 0, 31], "int32"), is_arithmetic=False), [0, -6, 0], "int32"),
    ]
    for got, want, dtype in cases:
        assert got.dtype == np.dtype(dtype) and got.numpy().tolist() == want


def test_bit_operators_refuse_floats_naming_the_dtype():
    f = t([1.0, 2.0])
    for op in (lambda: ~f, lambda: f & f, lambda: f | t([True, False]), lambda: f << 1, lambda: t([True]) >> 1):
        with pytest.raises(TypeError, match="float32|bool"):
            op()
    with pytest.raises(TypeError, match="'Tensor' and 'float'"):
        t([1], "int32") & 1.5


# ---- assignment into tensors in the graph ------------------------------------------------------

X = np.random.default_rng(0).standard_normal((3, 4))
W = np.random.default_rng(1).standard_normal((3, 4))

PATTERNS = {  # index, value (shape or number)
    "slice, number": ((slice(None), 0), 0.0),
    "bool mask, number": ("mask", 0.0),
    "int list, value of full shape": ([0, 2], (2, 4)),
    "int list, broadcast row": ([0, 2], (1, 4)),
    "slice, broadcast over rows": ((slice(1, None), slice(None)), (4,)),
    "one element, 0-d value": ((1, 2), ()),
    "bool mask, broadcast value": ("mask", (1,)),
    "row and int list": ((0, [1, 3]), (2,)),
}


def _assigned(index, value, dtype="float64"):
    """y = x * 1; y[index] = value; loss = sum(y * y * W), with x (and a Tensor value) leaves."""
    x = t(X, dtype, grad=True)
    v = value if isinstance(value, float) else t(np.linspace(1, 2, int(np.prod(value))).reshape(value), dtype, True)
    y = x * 1
    y[y > 0 if index == "mask" else index] = v
    (y * y * t(W, dtype)).sum().backward()
    return x, v, y


@pytest.mark.parametrize("name", PATTERNS)
def test_assignment_records_the_gradients(name):
    index, value = PATTERNS[name]
    x, v, y = _assigned(index, value)
    written = np.zeros(X.shape, bool)  # the places written, found by numpy's own assignment
    written[X > 0 if index == "mask" else index] = True
    want_y = np.where(written, 0, X)
    want_y[written if index == "mask" else index] = value if isinstance(value, float) else v.numpy()
    np.testing.assert_allclose(y.numpy(), want_y)
    dy = 2 * want_y * W
    np.testing.assert_allclose(x.grad.numpy(), np.where(written, 0, dy))
    if isinstance(v, pycoll.Tensor):
        def loss(values):  # the loss as a function of the value, for central differences
            z = X.copy()
            z[written if index == "mask" else index] = values
            return (z * z * W).sum()
        fd = np.zeros(v.shape)
        for k in np.ndindex(*fd.shape):
            e = np.zeros(v.shape)
            e[k] = 1e-6
            fd[k] = (loss(v.numpy() + e) - loss(v.numpy() - e)) / 2e-6
        np.testing.assert_allclose(v.grad.numpy(), fd, rtol=1e-6, atol=1e-6)


def test_assignment_matches_paddle():
    # paddle: y = zeros([2, 2]); y[0] = v (v requires grad) -> y takes part, v.grad = [1, 2]
    v = t([7.0, 8.0], grad=True)
    y = pycoll.zeros([2, 2])
    y[0] = v
    assert not y.stop_gradient
    (y * t([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert v.grad.numpy().tolist() == [1.0, 2.0]
    # paddle: a float64 value written into float32 keeps y float32 and gets a float64 gradient
    v = t([7.0], "float64", grad=True)
    x = t([1.0, 2.0], grad=True)
    y = x * 2
    y[1:] = v
    (y * y).sum().backward()
    assert y.dtype == np.float32 and v.grad.dtype == np.float64
    assert v.grad.numpy().tolist() == [14.0] and x.grad.numpy().tolist() == [8.0, 0.0]
    # paddle: an int tensor truncates a float value
    n = t([1, 2, 3])
    n[0] = 2.7
    assert n.numpy().tolist() == [2, 2, 3]


def test_assignment_keeps_the_values_earlier_ops_saw():
    # y * y saved y's old values; its gradient stays 2 * x (paddle raises a version error instead)
    x = t([1.0, 2.0, 3.0], grad=True)
    y = x * 1
    z = y * y
    y[0] = 0.0
    z.sum().backward()
    assert x.grad.numpy().tolist() == [2.0, 4.0, 6.0]


def test_assignment_into_a_parameter_is_refused_outside_no_grad():
    w = pycoll.create_parameter([2], "float32")
    with pytest.raises(ValueError, match="no_grad"):  # paddle: ValueError "Leaf Tensor ... can't use inplace"
        w[0] = 3.0
    with pycoll.no_grad():
        w[0] = 3.0
    assert w.numpy()[0] == 3.0 and w.is_leaf


def test_assignment_without_gradients_writes_the_memory():
    a = np.zeros(3, "float32")
    x = pycoll.from_numpy(a)
    x[t([True, False, True])] = t([5.0, 6.0])
    assert a.tolist() == [5.0, 0.0, 6.0]


# ---- methods ------------------------------------------------------------------------------------

def test_shape_and_dtype_methods_match_paddle():
    x = t([[1.5, -2.0], [3.0, 4.0]], grad=True)
    assert x.dim() == x.ndimension() == 2
    assert pycoll.ones([2, 3, 4]).mT.shape == [2, 4, 3] and x.mT.numpy().tolist() == [[1.5, 3.0], [-2.0, 4.0]]
    with pytest.raises(ValueError, match="at least 2"):
        t([1.0]).mT
    conversions = {"bool": "bool", "float": "float32", "double": "float64", "int": "int32", "long": "int64",
                   "half": "float16", "byte": "uint8", "char": "int8", "short": "int16", "cdouble": "complex128"}
    for method, dtype in conversions.items():
        y = getattr(x, method)()
        assert y.dtype == np.dtype(dtype) and not y.stop_gradient  # paddle: the cast stays in the graph
    assert x.int().numpy().tolist() == [[1, -2], [3, 4]] and x.float() is x
    assert x.requires_grad and not t([1.0]).requires_grad and t([1.0]).requires_grad_().requires_grad
    assert x.element_size() == x.itemsize == 4 and not x.is_cuda
    assert [1, 2, 3][t(1)] == 2 and complex(t(1.5)) == 1.5 + 0j


def test_new_tensors_match_paddle():
    x = t([[1.5, -2.0]], grad=True)
    for y, shape, dtype, value in [(x.new_full([2], 3), [2], "float32", 3.0),
                                   (x.new_full([2, 1], 3.5, dtype="int64"), [2, 1], "int64", 3),
                                   (x.new_zeros(2, 3), [2, 3], "float32", 0.0),
                                   (x.new_ones([2], dtype="float64"), [2], "float64", 1.0),
                                   (x.new_ones(3), [3], "float32", 1.0)]:
        assert y.shape == shape and y.dtype == np.dtype(dtype) and y.stop_gradient
        assert (y.numpy() == value).all()
    assert x.new_empty([4]).shape == [4] and not x.new_zeros([1], requires_grad=True).stop_gradient


def test_in_place_methods_and_gradient_match_paddle():
    x = t([[1.5, -2.0], [3.0, 4.0]], grad=True)
    assert x.gradient() is None
    y = x * 2
    y.masked_fill_(y > 3, 0.5)
    (y * y).sum().backward()
    assert y.numpy().tolist() == [[3.0, -4.0], [0.5, 0.5]]
    g = x.gradient()  # paddle: [[12, -16], [0, 0]], a NumPy copy
    assert isinstance(g, np.ndarray) and g.tolist() == [[12.0, -16.0], [0.0, 0.0]]
    x.clear_grad()
    y = x * 2
    y.unsqueeze_(0)
    assert y.shape == [1, 2, 2]
    y.squeeze_(0)
    (y * y).sum().backward()
    assert y.shape == [2, 2] and x.grad.numpy().tolist() == [[12.0, -16.0], [24.0, 32.0]]  # paddle's
    with pytest.raises(ValueError, match="no_grad"):  # paddle: a leaf that takes a gradient
        x.unsqueeze_(0)
    z = x * 1
    z.tanh_()
    np.testing.assert_allclose(z.numpy(), np.tanh(x.numpy()))
    assert (x.mul(x) == x * x).all() and x.lt(0).numpy().tolist() == [[False, True], [False, False]]
    assert x.repeat(2).shape == [2, 4] and x.type_as(t([1])).dtype == np.int64


def test_python_complex_numbers_make_complex_tensors_as_paddle():
    """paddle 3.3.1: complex64 (complex128 with float64 as the default dtype)."""
    import pycoll
    assert pycoll.to_tensor([[1, -2j], [2j, 5]]).dtype == np.complex64
    assert pycoll.to_tensor(1j).dtype == np.complex64
    before = pycoll.get_default_dtype()
    pycoll.set_default_dtype("float64")
    try:
        assert pycoll.to_tensor([1j, 2]).dtype == np.complex128
    finally:
        pycoll.set_default_dtype(before)
    with pytest.raises(TypeError, match="data must be numbers"):
        pycoll.to_tensor(["a"])
