"""paddle 3.3's torch-style call forms (sizes one by one, ``transpose(x, 0, 1)``, ``Tensor(2, 3)``),
``y[i] = t`` with a one-element t, and ``arange`` of Tensors. Shapes, dtypes and values are paddle
3.3.1's, measured on its CPU build for the same calls (``paddle`` read as ``pycoll``); the list
forms pycoll took before are checked to mean what they meant."""
import numpy as np
import pytest

import pycoll


def _vals(t):
    return t.shape, str(t.dtype), t.tolist()


@pytest.mark.parametrize("make", ["zeros", "ones"])
def test_creation_takes_sizes_one_by_one(make):
    fn = getattr(pycoll, make)
    fill = 0.0 if make == "zeros" else 1.0
    assert _vals(fn(2, 3)) == ([2, 3], "float32", [[fill] * 3] * 2)
    assert _vals(fn(2, 3, dtype="int64")) == ([2, 3], "int64", [[int(fill)] * 3] * 2)
    assert fn(2).shape == [2] and fn(size=2).shape == [2] and fn(shape=2).shape == [2]
    assert fn(np.int64(2), 3).shape == [2, 3] and fn(size=[2, 3]).shape == [2, 3]
    assert fn([2, 3], "int64").dtype == np.int64 and fn(()).shape == []
    assert fn(4, "int64").shape == [4]  # pycoll's shape-and-dtype form stays (paddle refuses it)
    with pytest.raises(ValueError, match="shape must be a list or tuple of non-negative ints, got \\[-1\\]"):
        fn(-1)
    with pytest.raises(TypeError, match="dtype must be a dtype name"):
        fn(2, 3.0)


def test_random_and_empty_take_sizes_one_by_one():
    assert pycoll.empty(2, 3).shape == [2, 3] and pycoll.empty(2, 3, dtype="int32").dtype == np.int32
    assert pycoll.rand(2, 3, dtype="float64").dtype == np.float64
    pycoll.seed(5)
    one_by_one = pycoll.randn(2, 3)
    pycoll.seed(5)
    np.testing.assert_array_equal(one_by_one.numpy(), pycoll.randn([2, 3]).numpy())
    pycoll.seed(5)
    uniform = pycoll.rand(4)
    pycoll.seed(5)
    np.testing.assert_array_equal(uniform.numpy(), pycoll.rand([4]).numpy())


def test_tensor_constructor_forms():
    t = pycoll.Tensor(2, 3)  # paddle: uninitialised, float32
    assert t.shape == [2, 3] and t.dtype == np.float32 and t.stop_gradient
    assert pycoll.Tensor(2, 0).shape == [2, 0] and pycoll.Tensor(0).shape == [0]
    assert pycoll.Tensor(1, 2, 3, 4, 5).shape == [1, 2, 3, 4, 5]
    assert _vals(pycoll.Tensor()) == ([0], "float32", [])
    assert _vals(pycoll.Tensor([1, 2])) == ([2], "float32", [1.0, 2.0])  # lists take the default float
    assert _vals(pycoll.Tensor([True, False])) == ([2], "float32", [1.0, 0.0])
    assert _vals(pycoll.Tensor((1, 2))) == ([2], "float32", [1.0, 2.0])
    assert _vals(pycoll.Tensor(np.array([1, 2]))) == ([2], "int64", [1, 2])  # arrays keep theirs
    assert pycoll.Tensor(np.ones(2), stop_gradient=False).stop_gradient is False
    assert pycoll.Tensor(np.ones(2), "float32").dtype == np.float32  # pycoll's positional dtype stays
    assert pycoll.Tensor(2, 3, dtype="int64").dtype == np.int64
    assert pycoll.nn.Parameter(np.ones(2), "float64").dtype == np.float64
    with pytest.raises(ValueError, match="sizes must be >= 0, got \\[-1\\]"):
        pycoll.Tensor(-1)
    with pytest.raises(TypeError, match="got the number 2.5"):
        pycoll.Tensor(2.5)
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        pycoll.Tensor([1.0], foo=1)
    with pytest.raises(TypeError, match="at most 4 arguments"):
        pycoll.Tensor(np.ones(2), "float32", "cpu", True, 5)


def test_view_reshape_and_expand_take_sizes_one_by_one():
    x = pycoll.arange(6)
    rows = [[0, 1, 2], [3, 4, 5]]
    for y in (x.view(-1, 3), x.view([-1, 3]), x.view((2, 3)), pycoll.view(x, 2, 3), x.view(pycoll.to_tensor(2), 3),
              x.reshape(2, 3), x.reshape((2, 3)), pycoll.reshape(x, 2, 3), pycoll.reshape(input=x, shape=[2, 3]),
              x.reshape(pycoll.to_tensor(2), 3), x.reshape(pycoll.to_tensor([2, 3]))):
        assert _vals(y) == ([2, 3], "int64", rows)
    assert x.view(6).shape == [6] and x.reshape(-1).shape == [6] and x.view(size=[3, 2]).shape == [3, 2]
    assert _vals(x.view("int32"))[:2] == ([12], "int32") and x.view(dtype="float32").shape == [12]
    assert x.view(pycoll.float32).dtype == np.float32
    shared = x.view(2, 3)
    shared[0, 0] = 7
    assert x[0].item() == 7  # a view shares x's memory, as paddle's
    # paddle's op outputs are contiguous: a view of one made from a transposed tensor works (pycoll's
    # keep the transposed layout, so its view copies there)
    assert (x.reshape([2, 3]).t() + 1).view([6]).numpy().tolist() == [8, 4, 2, 5, 3, 6]
    with pytest.raises(TypeError, match="reshape: shape must be a list, tuple or Tensor of ints, got int"):
        x.reshape(2, 3.0)
    ones = pycoll.ones([1, 3])
    for y in (ones.expand(2, 3), ones.expand([2, 3]), ones.expand(2, -1), ones.expand(size=[2, 3]),
              pycoll.expand(ones, 2, 3), pycoll.ones([3]).expand(2, 3)):
        assert _vals(y) == ([2, 3], "float32", [[1.0] * 3] * 2)
    with pytest.raises(ValueError, match="fewer dimensions"):
        ones.expand(3)


def test_transpose_swaps_two_axes():
    y = pycoll.arange(6).reshape([2, 3]).astype("float32")
    cols = [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    for t in (y.transpose(0, 1), y.transpose(1, 0), y.transpose(-1, 0), y.transpose([1, 0]), y.transpose((1, 0)),
              pycoll.transpose(y, 0, 1), pycoll.transpose(y, dim0=0, dim1=1), pycoll.transpose(y, [1, 0]),
              pycoll.transpose(input=y, dim0=0, dim1=1), y.transpose(0, dim1=1), y.transpose(perm=[1, 0]),
              pycoll.transpose(x=y, axis0=1, axis1=0), pycoll.swapaxes(y, 0, 1), y.swapdims(0, 1)):
        assert _vals(t) == ([3, 2], "float32", cols)
    assert y.transpose(0, 0).tolist() == y.tolist()
    z = pycoll.arange(24).reshape([2, 3, 4])
    np.testing.assert_array_equal(z.transpose(0, 2).numpy(), np.swapaxes(np.arange(24).reshape(2, 3, 4), 0, 2))
    w = pycoll.to_tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], stop_gradient=False)
    (w.transpose(0, 1) * pycoll.to_tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
    assert w.grad.tolist() == [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]
    with pytest.raises(ValueError, match="dim0 and dim1 must be axes in \\[-2, 2\\), got 0 and 5"):
        y.transpose(0, 5)
    with pytest.raises(TypeError, match="takes two ints, dim0 and dim1"):
        y.transpose(0)
    with pytest.raises(TypeError, match="perm must be a list or tuple of ints, got str"):
        y.transpose("01")


def test_permute_and_repeat_take_ints_one_by_one():
    y = pycoll.arange(6).reshape([2, 3])
    for t in (y.permute(1, 0), y.permute([1, 0]), y.permute((1, 0)), pycoll.permute(y, 1, 0), y.permute(dims=[1, 0])):
        assert t.tolist() == [[0, 3], [1, 4], [2, 5]]
    with pytest.raises(ValueError, match="permutation"):
        y.permute(0, 0)
    a = np.arange(6).reshape(2, 3)
    assert y.repeat(2, 2).tolist() == np.tile(a, (2, 2)).tolist() and y.repeat([2, 2]).shape == [4, 6]
    assert y.repeat(2).shape == [2, 6] and y.repeat(2, 1, 1).shape == [2, 2, 3]  # paddle's (tile's) shapes
    assert y.repeat(repeats=[2, 1]).tolist() == np.tile(a, (2, 1)).tolist()
    assert pycoll.arange(6).repeat(2).shape == [12] and pycoll.arange(6).repeat(2, 2).shape == [2, 12]
    with pytest.raises(ValueError, match="must be >= 0"):
        y.repeat(-1)


@pytest.mark.parametrize("value", [pycoll.to_tensor([3.0]), pycoll.to_tensor([[3.0]]), np.array([3.0]), [3.0], 3.0])
def test_a_one_element_value_goes_into_one_element(value):
    y = pycoll.zeros([3])
    y[1] = value
    assert y.tolist() == [0.0, 3.0, 0.0]
    m = pycoll.zeros([3, 2])
    m[1, 0] = value
    assert m.tolist() == [[0.0, 0.0], [3.0, 0.0], [0.0, 0.0]]


def test_one_element_writes_keep_broadcasting_and_casting():
    y = pycoll.zeros([3])
    y[pycoll.to_tensor([True, False, True])] = pycoll.to_tensor([7.0])
    assert y.tolist() == [7.0, 0.0, 7.0]
    y[0:1] = pycoll.to_tensor(5.0)
    y[[1, 2]] = pycoll.to_tensor([3.0])
    assert y.tolist() == [5.0, 3.0, 3.0]
    k = pycoll.zeros([3], dtype="int64")
    k[1] = pycoll.to_tensor([3.7])
    assert k.tolist() == [0, 3, 0]
    y[pycoll.to_tensor(1)] = pycoll.to_tensor([9.0])
    assert y.tolist() == [5.0, 9.0, 3.0]
    with pytest.raises(ValueError):
        y[1] = pycoll.to_tensor([1.0, 2.0])


def test_a_one_element_value_gets_its_gradient():
    w = pycoll.to_tensor([2.0], stop_gradient=False)
    y = pycoll.zeros([3])
    y[1] = w * 3
    assert y.tolist() == [0.0, 6.0, 0.0] and not y.stop_gradient
    y.sum().backward()
    assert w.grad.shape == [1] and w.grad.tolist() == [3.0]  # paddle: [3.]
    w = pycoll.to_tensor([2.0], stop_gradient=False)
    y = pycoll.zeros([3, 2])
    y[1, 0] = w * 3
    y.sum().backward()
    assert w.grad.tolist() == [3.0]
    w = pycoll.to_tensor([[2.0]], stop_gradient=False)  # broadcast over a row: paddle's grad [[21.]]
    y = pycoll.zeros([3, 2])
    y[1] = w * 3
    (y * pycoll.to_tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])).sum().backward()
    assert y.tolist() == [[0.0, 0.0], [6.0, 6.0], [0.0, 0.0]] and w.grad.tolist() == [[21.0]]
    w = pycoll.to_tensor([2.0], stop_gradient=False)
    y = pycoll.zeros([3])
    y[1] = w * 3
    (y * pycoll.to_tensor([1.0, 2.0, 3.0])).sum().backward()
    assert w.grad.tolist() == [6.0]


@pytest.mark.parametrize("args, dtype, values", [
    ((pycoll.to_tensor(4),), "int64", [0, 1, 2, 3]),
    ((pycoll.to_tensor(4.0),), "float32", [0.0, 1.0, 2.0, 3.0]),
    ((pycoll.to_tensor(1), 4), "int64", [1, 2, 3]),
    ((pycoll.to_tensor(1), 4.0), "float32", [1.0, 2.0, 3.0]),
    ((0, pycoll.to_tensor(4)), "int64", [0, 1, 2, 3]),
    ((pycoll.to_tensor(4, dtype="int32"),), "int64", [0, 1, 2, 3]),
    ((pycoll.to_tensor([4]),), "int64", [0, 1, 2, 3]),
    ((1, pycoll.to_tensor(7), 2), "int64", [1, 3, 5]),
    ((pycoll.to_tensor(1.0), 4), "float32", [1.0, 2.0, 3.0]),
])
def test_arange_of_tensors_takes_their_kind(args, dtype, values):
    out = pycoll.arange(*args)
    assert str(out.dtype) == dtype and out.tolist() == values


def test_arange_of_tensors_with_dtype_and_bad_bounds():
    assert pycoll.arange(pycoll.to_tensor(4), dtype="float32").dtype == np.float32
    idx = pycoll.arange(pycoll.to_tensor(3))
    assert (pycoll.arange(10) * 10)[idx].tolist() == [0, 10, 20]
    with pytest.raises(ValueError, match="arange: start must be a number or a Tensor of one element, got shape \\[2\\]"):
        pycoll.arange(pycoll.to_tensor([1, 2]))
