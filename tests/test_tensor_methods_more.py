"""paddle 3.3.1's Tensor methods pycoll added in inplace_logic, inplace_distributions,
tensor_kind, tensor_method_aliases and strided_views. Expected values were measured on paddle
3.3.1's CPU build with the same calls unless a test computes them with NumPy."""
import numpy as np
import pytest

import pycoll


def T(v, dtype=None, grad=False):
    t = pycoll.to_tensor(v, dtype=dtype)
    t.stop_gradient = not grad
    return t


def test_in_place_comparisons_take_a_bool_result_as_paddle():
    x = T([1., 2., 3.])
    assert x.equal_(T([1., 5., 3.])) is x
    assert x.dtype == pycoll.bool and x.numpy().tolist() == [True, False, True]
    assert T([1, 2, 3]).less_than_(T([2, 2, 2])).numpy().tolist() == [True, False, False]  # paddle's
    assert T([1., 0., 3.]).logical_not_().numpy().tolist() == [False, True, False]  # paddle's
    assert T([True, False]).logical_and_(T([True, True])).numpy().tolist() == [True, False]
    assert T([1., 0., 3.]).logical_or_(T([0., 0., 0.])).numpy().tolist() == [True, False, True]
    a, b = np.array([1., 4., 2.]), np.array([2., 4., 1.])
    for name, ref in (("not_equal_", a != b), ("less_", a < b), ("less_equal_", a <= b), ("greater_than_", a > b),
                      ("greater_equal_", a >= b), ("logical_xor_", np.logical_xor(a, b))):
        assert getattr(T(a), name)(T(b)).numpy().tolist() == ref.tolist(), name
        assert getattr(pycoll, name)(T(a), T(b)).numpy().tolist() == ref.tolist(), name
    with pytest.raises(ValueError, match="shape"):  # paddle: ValueError, broadcast past the in-place tensor
        T([1., 2.]).equal_(T([[1., 2.], [1., 1.]]))
    leaf = T([1., 2., 3.], grad=True)  # paddle allows it (the result takes no gradient), flag unchanged
    leaf.equal_(T([1., 5., 3.]))
    assert leaf.dtype == pycoll.bool and leaf.stop_gradient is False


def test_in_place_bit_ops_equal_paddles():
    assert T([1, -8, 3], "int32").bitwise_left_shift_(T([1, 1, 2], "int32")).numpy().tolist() == [2, -16, 12]
    assert (T([1, -8, 3], "int32").bitwise_right_shift_(T([1, 1, 2], "int32"), False).numpy().tolist()
            == [0, 2147483644, 0])
    assert T([1, -8, 3], "int32").bitwise_invert_().numpy().tolist() == [-2, 7, -4]


def test_addmm_and_masked_scatter_in_place_with_gradients():
    i = T(np.ones((2, 2), np.float32))
    m = T([[1., 2.], [3., 4.]])
    assert i.addmm_(m, m, beta=0.5, alpha=2.).numpy().tolist() == [[14.5, 20.5], [30.5, 44.5]]  # paddle's
    x = T(np.zeros((2, 3), np.float32))
    out = x.masked_scatter_(T([True, False, True]), T(np.arange(6, dtype=np.float32).reshape(2, 3)))
    assert out.numpy().tolist() == [[0., 0., 1.], [2., 0., 3.]]  # paddle's
    w = T(np.arange(4, dtype=np.float32).reshape(2, 2), grad=True)
    y = T(np.eye(2, dtype=np.float32), grad=True)
    h = w * 1.0
    h.addmm_(y, y, beta=3.0, alpha=2.0)
    h.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), np.full((2, 2), 3.0))  # d(3w)/dw
    np.testing.assert_allclose(y.grad.numpy(), 2.0 * (np.ones((2, 2)) @ np.eye(2) + np.eye(2) @ np.ones((2, 2))))
    with pytest.raises(ValueError, match="leaf"):
        T([[1., 2.]], grad=True).addmm_(m[:1], m)


def test_cauchy_and_geometric_fill_by_their_distributions():
    pycoll.seed(5)
    c = pycoll.zeros([20000]).cauchy_(loc=1.0, scale=2.0).numpy()
    q25, q50, q75 = np.quantile(c, [0.25, 0.5, 0.75])  # Cauchy quartiles: loc -/+ scale
    assert abs(q50 - 1.0) < 0.1 and abs(q25 + 1.0) < 0.15 and abs(q75 - 3.0) < 0.15
    g = pycoll.geometric_(pycoll.zeros([20000]), 0.3).numpy()
    assert g.min() > 0 and abs(g.mean() + 1 / np.log(0.7)) < 0.1  # paddle's log(u)/log1p(-p): mean -1/log(1-p)
    with pytest.raises(ValueError, match="probs"):
        pycoll.zeros([2]).geometric_(1.5)
    with pytest.raises(ValueError, match="scale"):
        pycoll.zeros([2]).cauchy_(0, -1)


def test_a_dense_tensor_answers_as_paddles():
    x = T([[1., 2.], [3., 4.]])
    assert (x.layout, x.num_shard, x.offset, x.dense_dim(), x.sparse_dim()) == ("NCHW", None, 0, 2, 0)
    assert x.is_dense() and not (x.is_sparse() or x.is_sparse_coo() or x.is_sparse_csr())
    assert str(x.type) == "VarType.DENSE_TENSOR" and int(x.type) == 7 and x.get_device() == -1
    assert x[1].offset == 8  # paddle's: bytes, 2 float32 elements in
    assert x.value() is x and x.pin_memory().numpy().tolist() == x.numpy().tolist()
    for sparse_only in (x.nnz, x.values):
        with pytest.raises(TypeError, match="sparse"):
            sparse_only()
    w = T([1., 2.], grad=True)
    y = w * 3
    assert x.grad_fn is None and y.grad_fn is y.grad_node is not None
    y.sum().backward()
    assert w.grad_.numpy().tolist() == [3., 3.]
    w.grad_ = T([5., 5.])
    assert w.grad.numpy().tolist() == [5., 5.]


def test_apply_and_apply_():
    assert T([[1., 2.], [3., 4.]]).apply(lambda t: t * 2).numpy().tolist() == [[2., 4.], [6., 8.]]
    x = T([1., 2.])
    assert x.apply_(lambda t: t + 1) is x and x.numpy().tolist() == [2., 3.]
    with pytest.raises(RuntimeError, match="gradient"):  # paddle: RuntimeError
        T([1., 2.], grad=True).apply(lambda t: t * 2)


def test_aliases_are_pycolls_functions():
    x = T([[1., 2.], [3., 4.]])
    assert x.reverse(0).numpy().tolist() == [[3., 4.], [1., 2.]]  # paddle's
    assert pycoll.reverse(x, [0, 1]).numpy().tolist() == [[4., 3.], [2., 1.]]
    c = pycoll.view_as_complex(x)
    assert c.dtype == pycoll.complex64 and c.numpy().tolist() == [1 + 2j, 3 + 4j]
    assert c.view_as_real().numpy().tolist() == x.numpy().tolist()
    assert pycoll.Tensor.concat([x, x], axis=1).numpy().tolist() == [[1., 2., 1., 2.], [3., 4., 3., 4.]]
    assert pycoll.Tensor.stack([x, x], axis=0).shape == [2, 2, 2]
    assert x.take_along_dim(T([[1], [0]], "int64"), 1).numpy().tolist() == [[2.], [3.]]
    assert x.matrix_transpose().numpy().tolist() == [[1., 3.], [2., 4.]]
    assert pycoll.Tensor.broadcast_shape([2, 1], [3]) == [2, 3] and x.is_tensor()
    assert x.argwhere().shape == [4, 2] and T([1, 2, 3]).combinations().shape == [3, 2]
    assert pycoll.Tensor.block_diag([x, x]).shape == [4, 4]
    t = pycoll.Tensor.create_tensor("float32")
    assert t.shape == [] and t.dtype == pycoll.float32 and t.persistable is False  # paddle's


def test_as_strided_reads_and_differentiates_as_paddle():
    x = pycoll.arange(12, dtype="float32")
    # paddle's offset counts bytes: 4 bytes is one float32
    assert pycoll.as_strided(x, [3, 2], [4, 1], 4).numpy().tolist() == [[1., 2.], [5., 6.], [9., 10.]]
    assert x.as_strided([2, 2], [1, 1]).numpy().tolist() == [[0., 1.], [1., 2.]]
    v = pycoll.as_strided(x, [2, 2], [1, 1])
    x[0] = 100.
    assert v.numpy().tolist() == [[100., 1.], [1., 2.]]  # a view, as paddle's
    xs = T(np.arange(12, dtype=np.float32), grad=True)
    (pycoll.as_strided(xs, [3, 2], [2, 1]) * T(np.arange(6, dtype=np.float32).reshape(3, 2))).sum().backward()
    assert xs.grad.numpy().tolist() == [0., 1., 2., 3., 4., 5., 0., 0., 0., 0., 0., 0.]  # paddle's
    xs.clear_gradient()
    pycoll.as_strided(xs, [2, 2], [1, 1]).sum().backward()  # overlapping reads add up
    assert xs.grad.numpy().tolist()[:4] == [1., 2., 1., 0.]
    with pytest.raises(ValueError, match="offset"):
        pycoll.as_strided(x, [2], [1], 2)
    with pytest.raises(ValueError, match="past"):
        pycoll.as_strided(x, [3, 2], [5, 1], 4)


def test_set_resize_and_reconstruct_from():
    r, s = T([1., 2., 3.]), T([[5., 6.], [7., 8.]])
    assert r.set_(s).numpy().tolist() == [[5., 6.], [7., 8.]]  # paddle's
    s[0, 0] = 9.
    assert r.numpy()[0, 0] == 9.  # shares source's memory
    e = T([1., 2., 3.]).set_()
    assert e.shape == [0] and e.dtype == pycoll.float32
    src = pycoll.arange(10, dtype="float32")
    assert T([1.]).set_(src, [2, 2], [3, 1], 8).numpy().tolist() == [[2., 3.], [5., 6.]]
    assert T([1., 2., 3., 4., 5., 6.]).resize_([2, 2]).numpy().tolist() == [[1., 2.], [3., 4.]]  # paddle's
    assert T([1., 2., 3.]).resize_([2, 3], fill_zero=True).numpy().tolist() == [[1., 2., 3.], [0., 0., 0.]]
    a, b = T([1., 2.], grad=True), T([[3., 4.]])
    assert a.reconstruct_from_(b) is None and a.stop_gradient  # paddle's: returns None, takes b's stop_gradient
    b[0, 0] = 9.
    assert a.numpy().tolist() == [[9., 4.]]  # paddle's: memory shared
    w = T([1., 2., 3.], grad=True)
    h = w * 2
    h.resize_([2])
    h.sum().backward()
    assert w.grad.numpy().tolist() == [2., 2., 0.]


def test_is_shared_buffer_with_tells_views_of_one_memory_from_copies():
    # paddle's set_ example ends with x._is_shared_buffer_with(src): True, measured on paddle 3.3.1
    src = pycoll.to_tensor([11., 22., 33., 44., 55., 66.])
    x = pycoll.to_tensor([1., 2., 3., 4., 5.])
    assert not x._is_shared_buffer_with(src)
    x.set_(src, shape=[5], offset=4)
    assert x._is_shared_buffer_with(src) and src._is_shared_buffer_with(x)
    assert src[:2]._is_shared_buffer_with(src[4:])  # one memory, elements apart
    assert not src.clone()._is_shared_buffer_with(src)
    with pytest.raises(TypeError, match="other must be a Tensor"):
        src._is_shared_buffer_with(np.ones(3))


def test_get_tensor_reads_and_loads_the_storage_as_older_paddle_code_does():
    lin = pycoll.nn.Linear(2, 3)
    storage = lin.weight.value().get_tensor()  # paddle's idiom for loading a weight
    storage.set(np.arange(6, dtype="float32").reshape(2, 3), pycoll.CPUPlace())
    assert lin.weight.numpy().tolist() == [[0., 1., 2.], [3., 4., 5.]] and not lin.weight.stop_gradient
    assert storage.shape() == [2, 3] and storage._dtype() == pycoll.float32 and storage._numel() == 6
    copied = np.array(storage)
    copied[0, 0] = 9.
    assert lin.weight.numpy()[0, 0] == 0.  # np.array copies (paddle's)
    storage.set([1, 2])  # a new shape and dtype, where the tensor is
    assert lin.weight.shape == [2] and lin.weight.dtype == pycoll.int64
    assert "  - shape: [2]\n  - layout: NCHW\n  - place: Place(cpu)\n  - dtype: int64\n  - data: [1 2]" == str(storage)
