"""paddle's further shape ops (pycoll.reshape_ops) and diagonals and grids (pycoll.diag_ops):
values measured on paddle 3.3.1 (said where) or NumPy's, gradients against finite differences."""
import numpy as np
import pytest

import pycoll
from test_gradcheck import gradcheck

X = np.arange(6, dtype=np.float32).reshape(2, 3)
A = np.random.default_rng(7).standard_normal((2, 3, 4))


def _v(t):
    return t.numpy().tolist()


def test_flip_roll_rot90_repeat_interleave():
    # paddle 3.3.1
    x = pycoll.to_tensor(X)
    assert _v(pycoll.flip(x, [0])) == [[3.0, 4.0, 5.0], [0.0, 1.0, 2.0]]
    assert _v(pycoll.roll(x, 1)) == [[5.0, 0.0, 1.0], [2.0, 3.0, 4.0]]
    assert _v(x.roll([1, -1], [0, 1])) == [[4.0, 5.0, 3.0], [1.0, 2.0, 0.0]]
    assert _v(pycoll.rot90(x)) == [[2.0, 5.0], [1.0, 4.0], [0.0, 3.0]]
    assert _v(pycoll.rot90(x, k=-1)) == [[3.0, 0.0], [4.0, 1.0], [5.0, 2.0]]
    assert _v(pycoll.repeat_interleave(x, 2, axis=1)) == [[0.0, 0.0, 1.0, 1.0, 2.0, 2.0], [3.0, 3.0, 4.0, 4.0, 5.0, 5.0]]
    assert _v(x.repeat_interleave(pycoll.to_tensor([1, 2]), axis=0)) == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0],
                                                                          [3.0, 4.0, 5.0]]
    assert pycoll.repeat_interleave(x, 2).shape == [12]
    for fn in (lambda t: pycoll.flip(t, [0, 2]), lambda t: pycoll.roll(t, [2, -1], [2, 0]), lambda t: pycoll.roll(t, 5),
               lambda t: pycoll.rot90(t, 3, [1, 2]),
               lambda t: pycoll.repeat_interleave(t, pycoll.to_tensor([2, 0, 1]), axis=1)):
        gradcheck(fn, [A])


def test_splitting_and_unbinding():
    # paddle 3.3.1
    x = pycoll.to_tensor(X)
    assert [_v(p) for p in pycoll.unbind(x, 1)] == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    assert [_v(p) for p in x.unstack()] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    with pytest.raises(ValueError, match="num"):
        pycoll.unstack(x, num=3)
    r = pycoll.arange(7)
    assert [_v(p) for p in pycoll.tensor_split(r, 3)] == [[0, 1, 2], [3, 4], [5, 6]]
    assert [_v(p) for p in pycoll.tensor_split(r, [2, 5])] == [[0, 1], [2, 3, 4], [5, 6]]
    # negative indices count from the end, as NumPy's array_split and paddle 3.3.1 take them
    assert [_v(p) for p in pycoll.tensor_split(r, [-1])] == [[0, 1, 2, 3, 4, 5], [6]]
    assert [_v(p) for p in pycoll.tensor_split(r, [1, -2])] == [[0], [1, 2, 3, 4], [5, 6]]
    assert [_v(p) for p in pycoll.tensor_split(r, [5, 2])] == [[0, 1, 2, 3, 4], [], [2, 3, 4, 5, 6]]
    assert [_v(p) for p in pycoll.hsplit(x, 3)] == [[[0.0], [3.0]], [[1.0], [4.0]], [[2.0], [5.0]]]
    assert [_v(p) for p in pycoll.vsplit(x, 2)] == [[[0.0, 1.0, 2.0]], [[3.0, 4.0, 5.0]]]
    assert [p.shape for p in pycoll.dsplit(pycoll.to_tensor(A), [1])] == [[2, 3, 1], [2, 3, 3]]
    gradcheck(lambda t: pycoll.tensor_split(t, 3, axis=2)[1] * 2 + pycoll.unbind(t, 2)[0].unsqueeze(2), [A])


def test_unbind_in_an_rnn_loop_gives_each_slice_its_gradient():
    x = pycoll.to_tensor(A, stop_gradient=False)  # [2, 3, 4]
    h = pycoll.zeros([2, 4])
    steps = pycoll.unbind(x, axis=1)
    for t, xt in enumerate(steps[:2]):  # the last slice unused: its gradient stays zero
        h = pycoll.tanh(h + xt * (t + 1))
    h.sum().backward()
    h0 = np.tanh(A[:, 0] * 1)
    want = np.zeros_like(A)
    g1 = 1 - np.tanh(h0 + A[:, 1] * 2) ** 2
    want[:, 1] = 2 * g1
    want[:, 0] = g1 * (1 - h0 ** 2)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5)
    assert len(steps) == 3 and steps[2].shape == [2, 4]
    view = pycoll.unbind(pycoll.to_tensor(X), 0)[1]
    view[0] = 9.0  # a slice is a view, as paddle's unbind gives
    assert view.numpy().tolist() == [9.0, 4.0, 5.0]
    assert pycoll.unbind(pycoll.zeros([2, 0]), 1) == []
    # differentiable again (paddle 3.3.1: g [[6, 16], [1, 2]], then x.grad [[7, 13], [1, 1]])
    x = pycoll.to_tensor([[1.0, 2.0], [3.0, 4.0]], stop_gradient=False)
    a, b = pycoll.unbind(x, 0)
    g, = pycoll.grad((a ** 3).sum() + (a * b).sum(), x, create_graph=True)
    assert g.numpy().tolist() == [[6.0, 16.0], [1.0, 2.0]]
    g.sum().backward()
    assert x.grad.numpy().tolist() == [[7.0, 13.0], [1.0, 1.0]]


def test_axes_and_broadcasting():
    x = pycoll.to_tensor(A)
    assert pycoll.moveaxis(x, 0, 2).shape == [3, 4, 2] and pycoll.moveaxis(x, [0, 1], [2, 0]).shape == [3, 4, 2]
    np.testing.assert_array_equal(pycoll.moveaxis(x, [0, 1], [-1, 0]).numpy(), np.moveaxis(A, [0, 1], [-1, 0]))
    with pytest.raises(ValueError, match=r"each axis of source must be unique, got \[0, 0\]"):
        pycoll.moveaxis(x, [0, 0], [1, 0])  # paddle: "Each element of 'source' must be unique!"
    with pytest.raises(ValueError, match=r"last dimension \(3\) must be a multiple of 2 to view float32 as float64"):
        pycoll.to_tensor(np.ones((3, 3), np.float32)).view("float64")  # paddle's words, nearly
    assert pycoll.to_tensor(np.ones((3, 4), np.float32)).view("float64").shape == [3, 2]
    assert pycoll.swapaxes(x, 0, 2).shape == [4, 3, 2] and pycoll.swapdims(x, [2, 0, 1]).shape == [4, 2, 3]
    assert pycoll.permute(x, [2, 0, 1]).shape == [4, 2, 3]
    assert _v(pycoll.t(pycoll.to_tensor(X))) == X.T.tolist() and pycoll.t(pycoll.to_tensor([1.0, 2.0])).shape == [2]
    with pytest.raises(ValueError, match="at most 2"):
        pycoll.t(x)
    v = pycoll.to_tensor([1.0, 2.0, 3.0])
    assert _v(pycoll.broadcast_to(v, [2, 3])) == [[1.0, 2.0, 3.0]] * 2 == _v(v.expand_as(pycoll.to_tensor(X)))
    assert [t.shape for t in pycoll.broadcast_tensors([pycoll.ones([2, 1]), pycoll.ones([3])])] == [[2, 3], [2, 3]]
    assert pycoll.broadcast_shape([2, 1], [3]) == [2, 3]
    with pytest.raises(ValueError, match="do not broadcast"):
        pycoll.broadcast_shape([2], [3])
    assert pycoll.atleast_1d(pycoll.to_tensor(1.0)).shape == [1]
    assert pycoll.atleast_2d(v).shape == [1, 3] and pycoll.atleast_3d(pycoll.to_tensor(X)).shape == [2, 3, 1]
    assert [t.shape for t in pycoll.atleast_2d(pycoll.to_tensor(1.0), pycoll.to_tensor(X))] == [[1, 1], [2, 3]]
    assert pycoll.atleast_3d(v).shape == [1, 3, 1]
    gradcheck(lambda t: pycoll.moveaxis(t, [0, 1], [-1, 0]) * pycoll.arange(24.0).reshape([3, 4, 2]), [A])
    gradcheck(lambda t: pycoll.broadcast_tensors([t, pycoll.ones([5, 2, 3, 4])])[0], [A])


def test_views_and_slices():
    # paddle 3.3.1
    x = pycoll.to_tensor(X)
    assert _v(pycoll.ravel(x)) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    assert _v(pycoll.view(x, [3, 2])) == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]
    assert x.view("int32").shape == [2, 3] and x.view("int32").numpy().tolist()[0][1] == 1065353216  # 1.0's bits
    assert pycoll.view_as(x, pycoll.ones([6])).shape == [6]
    assert _v(pycoll.narrow(x, 1, 1, 2)) == [[1.0, 2.0], [4.0, 5.0]] == _v(pycoll.slice(x, [1], [1], [3]))
    assert _v(pycoll.slice(x, [0, 1], [1, -2], [2, 10])) == [[4.0, 5.0]]
    assert _v(pycoll.strided_slice(x, [1], [0], [3], [2])) == [[0.0, 2.0], [3.0, 5.0]]
    assert _v(pycoll.strided_slice(x, [1], [2], [-4], [-1])) == [[2.0, 1.0, 0.0], [5.0, 4.0, 3.0]]
    assert _v(pycoll.crop(x, [1, 2], [1, 1])) == [[4.0, 5.0]]
    assert _v(pycoll.crop(x, [-1, 2])) == [[0.0, 1.0], [3.0, 4.0]]
    with pytest.raises(ValueError, match="within"):
        pycoll.crop(x, [2, 2], [1, 0])
    assert _v(pycoll.shape(x)) == [2, 3] and pycoll.shape(x).dtype == np.int64
    assert pycoll.rank(x).item() == 2 and pycoll.rank(x).dtype == np.int32
    gradcheck(lambda t: pycoll.strided_slice(t, [0, 2], [1, 3], [-3, 0], [-1, -2]), [A])
    gradcheck(lambda t: pycoll.crop(t, [1, -1, 2], [1, 1, 1]), [A])


def test_diagonals():
    # paddle 3.3.1
    x = pycoll.to_tensor(X)
    y = pycoll.arange(24, dtype="float32").reshape([2, 3, 4])
    assert _v(pycoll.diagonal(x)) == [0.0, 4.0]
    assert _v(pycoll.diagonal(y, offset=1, axis1=1, axis2=2)) == [[1.0, 6.0, 11.0], [13.0, 18.0, 23.0]]
    assert _v(pycoll.diag(pycoll.to_tensor([1.0, 2.0]))) == [[1.0, 0.0], [0.0, 2.0]]
    assert _v(pycoll.diag(x)) == [0.0, 4.0] and _v(x.diag(1)) == [1.0, 5.0]
    assert _v(pycoll.diag(pycoll.to_tensor([1.0, 2.0]), offset=-1, padding_value=9)) == [
        [9.0, 9.0, 9.0], [1.0, 9.0, 9.0], [9.0, 2.0, 9.0]]
    assert _v(pycoll.diagflat(x)) == np.diag(X.reshape(-1)).tolist()
    assert _v(pycoll.diag_embed(pycoll.to_tensor([1.0, 2.0]), offset=1)) == [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0],
                                                                               [0.0, 0.0, 0.0]]
    np.testing.assert_array_equal(pycoll.diag_embed(pycoll.to_tensor(A), -1, 0, 2).numpy(), _diag_embed_ref(A, -1, 0, 2))
    assert pycoll.trace(x).item() == 4.0 and pycoll.trace(pycoll.to_tensor(A), 1, 1, 2).shape == [2]
    np.testing.assert_allclose(pycoll.trace(pycoll.to_tensor(A), 1, 1, 2).numpy(), np.trace(A, 1, 1, 2))
    for fn in (lambda t: pycoll.diagonal(t, -1, 2, 1), lambda t: pycoll.trace(t, 1, 0, 2),
               lambda t: pycoll.diag_embed(t, 1, 0, 2), lambda t: pycoll.diagflat(t[0], -2)):
        gradcheck(fn, [A])
    gradcheck(lambda t: pycoll.diag(t[0, 0], 1, padding_value=3.0), [A])


def _diag_embed_ref(a, offset, dim1, dim2):
    """NumPy's diag_embed: a's last dimension on diagonal `offset` of new [n, n] matrices whose
    two axes become dim1 and dim2 of the result."""
    n = a.shape[-1] + abs(offset)
    out = np.zeros(a.shape[:-1] + (n, n))
    for idx in np.ndindex(a.shape[:-1]):
        out[idx] = np.diag(a[idx], offset)
    return np.moveaxis(out, [-2, -1], [dim1, dim2])


def test_index_grids():
    # paddle 3.3.1
    assert _v(pycoll.tril_indices(3, 3)) == [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    assert _v(pycoll.triu_indices(3, 4, 1)) == [[0, 0, 0, 1, 1, 2], [1, 2, 3, 2, 3, 3]]
    assert _v(pycoll.tril_indices(3, 2, -1)) == [[1, 2, 2], [0, 0, 1]]
    assert pycoll.tril_indices(2, 2, dtype="int32").dtype == np.int32
    a, b = pycoll.meshgrid(pycoll.to_tensor([1, 2]), pycoll.to_tensor([3, 4, 5]))
    assert _v(a) == [[1, 1, 1], [2, 2, 2]] and _v(b) == [[3, 4, 5], [3, 4, 5]]
    assert [_v(t) for t in pycoll.meshgrid([pycoll.to_tensor([1, 2]), pycoll.to_tensor([3, 4, 5])])] == [_v(a), _v(b)]
    gradcheck(lambda u, w: pycoll.meshgrid(u, w)[0] * pycoll.meshgrid(u, w)[1], [A[0, 0], A[1, 1, :3]])
    for indexing in ("ij", "xy"):  # paddle 3.3's indexing=, NumPy's meaning
        grids = pycoll.meshgrid(pycoll.arange(2), pycoll.arange(3), pycoll.arange(4), indexing=indexing)
        want = np.meshgrid(np.arange(2), np.arange(3), np.arange(4), indexing=indexing)
        assert all(np.array_equal(g.numpy(), w) for g, w in zip(grids, want))
    with pytest.raises(ValueError, match="meshgrid: indexing must be 'ij' or 'xy', got 'zz'"):
        pycoll.meshgrid(pycoll.arange(2), indexing="zz")


def test_concat_and_stack_refuse_a_single_tensor_or_none():
    # paddle 3.3.1: "concat(): argument 'x' (position 0) must be list of Tensors, but got Tensor";
    # iterating the tensor would have joined its rows silently
    t = pycoll.ones([2, 3])
    for call in (lambda: t.concat(dim=0), lambda: pycoll.concat(t), lambda: t.stack(), lambda: pycoll.stack(t)):
        with pytest.raises(ValueError, match="x must be a list or tuple of Tensors, got a single Tensor"):
            call()
    with pytest.raises(ValueError, match="at least one Tensor"):
        pycoll.concat([])
    assert pycoll.Tensor.concat([t, t], dim=1).shape == [2, 6] and pycoll.stack((t, t), axis=1).shape == [2, 2, 3]
    # paddle 3.3.1 refuses mixed dtypes ("The data_type of input tensor in list isn't consistent") and
    # shapes that do not fit ("The 1-th dimension of input[0] and input[1] is expected to be equal")
    with pytest.raises(ValueError, match=r"x\[0\] has dtype float32 and x\[1\] int32"):
        pycoll.concat([t, pycoll.ones([2, 3], "int32")])
    with pytest.raises(ValueError, match=r"x\[0\] has shape \[2, 3\] and x\[1\] \[1, 4\]; .* except along axis 0"):
        pycoll.concat([t, pycoll.ones([1, 4])])
    with pytest.raises(ValueError, match=r"stack: x\[0\] has shape \[2, 3\] and x\[1\] \[1, 3\]"):
        pycoll.stack([t, pycoll.ones([1, 3])])
    assert pycoll.concat([t, pycoll.ones([5, 3])]).shape == [7, 3]


@pytest.mark.parametrize("shape, target, expected", [  # paddle 3.3.1's results
    ([0, 3], [3, 0], [3, 0]), ([2, 0], [0, 5], [0, 5]), ([0, 6], [0, 2, -1], [0, 2, 3]), ([2, 0, 6], [-1, 0], [12, 0]),
    ([0, 6], [-1], [0]), ([0, 6], [3, -1], [3, 0]), ([2, 3], [0, 3], [2, 3]),
])
def test_reshape_of_a_tensor_of_no_elements_takes_a_zero_as_a_zero(shape, target, expected):
    assert pycoll.zeros(shape).reshape(target).shape == expected


def test_unsqueeze_squeeze_and_flatten_keep_empty_dimensions_in_place():
    # the empty cache of a TransformerDecoder [batch, heads, 0, head_dim] into beam search
    assert pycoll.zeros([2, 4, 0, 8]).unsqueeze(1).shape == [2, 1, 4, 0, 8]
    assert pycoll.zeros([0, 5, 0]).unsqueeze(0).shape == [1, 0, 5, 0]
    assert pycoll.zeros([2, 1, 0, 3]).squeeze(1).shape == [2, 0, 3]
    assert pycoll.zeros([2, 0, 3]).flatten(1).shape == [2, 0]
