"""pycoll.sparse: COO/CSR tensors, their conversions and ops. Values marked "paddle" were measured
on paddle 3.3.1's CPU build with the same calls (loss: sum(values * [1, 2, ...]) unless said);
the products, which paddle's CPU build lacks, are checked against NumPy computed by hand."""
import numpy as np
import pytest

import pycoll
import pycoll.sparse as sp
import pycoll.sparse.nn.functional as SF

X = np.array([[0, 1, 0, 2], [3, 0, 0, 4], [0, 5, 6, 0]], "float32")
Y = np.array([[7, 0, 0, 8], [0, 0, 0, 9], [0, 1, 0, 0]], "float32")
X_IDX = [[0, 0, 1, 1, 2, 2], [1, 3, 0, 3, 1, 2]]
Y_IDX = [[0, 0, 1, 2], [0, 3, 3, 1]]
UNION = [[0, 0, 0, 1, 1, 2, 2], [0, 1, 3, 0, 3, 1, 2]]


def coo(a, grad=True):
    t = pycoll.to_tensor(a).to_sparse_coo(2)
    t.stop_gradient = not grad
    return t


def weighted_backward(z):
    n = z.nnz()
    (z.values() * pycoll.to_tensor(np.arange(1, n + 1, dtype="float32"))).sum().backward()


def check_coo(t, shape, indices, values, atol=1e-6):
    assert t.is_sparse_coo() and list(t.shape) == shape
    np.testing.assert_array_equal(t.indices().numpy(), indices)
    np.testing.assert_allclose(t.values().numpy(), values, rtol=1e-5, atol=atol)


def check_csr(t, shape, crows, cols, values):
    assert t.is_sparse_csr() and list(t.shape) == shape
    np.testing.assert_array_equal(t.crows().numpy(), crows)
    np.testing.assert_array_equal(t.cols().numpy(), cols)
    np.testing.assert_allclose(t.values().numpy(), values, rtol=1e-5, atol=1e-6)


BINARY = {  # paddle: result (indices, values), x.grad values (x's pattern), y.grad values (y's pattern)
    "add": (UNION, [7, 1, 10, 3, 13, 6, 6], [2, 3, 4, 5, 6, 7], [1, 3, 5, 6]),
    "multiply": (UNION, [0, 0, 16, 0, 36, 5, 0], [0, 24, 0, 45, 6, 0], [0, 6, 20, 30]),
    "divide": ([[0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2], [0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]],
               [0, np.inf, np.nan, .25, np.inf, np.nan, np.nan, 4 / 9, np.nan, 5, np.inf, np.nan],
               [np.inf, .5, np.inf, 8 / 9, 10, np.inf], [0, -.125, -32 / 81, -50]),
}


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_ops_on_different_patterns_equal_paddles(op):
    x, y = coo(X), coo(Y)
    z = getattr(sp, op)(x, y)
    indices, values, xg, yg = BINARY[op]
    check_coo(z, [3, 4], indices, values)
    weighted_backward(z)
    check_coo(x.grad, [3, 4], X_IDX, xg)
    check_coo(y.grad, [3, 4], Y_IDX, yg)


def test_subtract_and_scalar_forms():
    x, y = coo(X), coo(Y)
    z = sp.subtract(x, y)
    check_coo(z, [3, 4], UNION, [-7, 1, -6, 3, -5, 4, 6])  # paddle
    weighted_backward(z)  # paddle 3.3.1's y gradient here is wrong (it crashes or misplaces it): by hand
    np.testing.assert_allclose(y.grad.values().numpy(), [-1, -3, -5, -6])
    check_coo(sp.multiply(coo(X), 2.5), [3, 4], X_IDX, 2.5 * X[X != 0])
    check_coo(sp.divide(coo(X), 2.0), [3, 4], X_IDX, X[X != 0] / 2)


def test_same_pattern_keeps_it_and_csr_round_trips():
    c = pycoll.to_tensor(X).to_sparse_csr()
    check_csr(c, [3, 4], [0, 2, 4, 6], X_IDX[1], [1, 2, 3, 4, 5, 6])  # paddle
    d = pycoll.to_tensor(X + 1) * pycoll.to_tensor((X != 0).astype("float32"))
    z = sp.add(c, d.to_sparse_csr())
    check_csr(z, [3, 4], [0, 2, 4, 6], X_IDX[1], 2 * X[X != 0] + 1)
    np.testing.assert_array_equal(z.to_dense().numpy(), 2 * X + (X != 0))
    assert c.to_sparse_coo(2).is_sparse_coo() and c.to_sparse_csr() is c and c.nnz() == 6


def test_batched_csr_equals_paddles():
    z = sp.sparse_csr_tensor([0, 2, 3, 0, 1, 2], [1, 3, 2, 0, 1], [1., 2., 3., 4., 5.])
    assert list(z.shape) == [2, 2, 4]  # paddle infers the batch from the restarting crows
    np.testing.assert_array_equal(z.to_dense().numpy(), [[[0, 1, 0, 2], [0, 0, 3, 0]],
                                                         [[4, 0, 0, 0], [0, 5, 0, 0]]])
    back = z.to_dense().to_sparse_csr()
    check_csr(back, [2, 2, 4], [0, 2, 3, 0, 1, 2], [1, 3, 2, 0, 1], [1, 2, 3, 4, 5])
    check_coo(z.to_sparse_coo(3), [2, 2, 4], [[0, 0, 0, 1, 1], [0, 0, 1, 0, 1], [1, 3, 2, 0, 1]], [1, 2, 3, 4, 5])


def test_shape_ops_equal_paddles():
    c = pycoll.to_tensor(X).to_sparse_csr()
    check_coo(sp.sum(coo(X), axis=0), [4], [[0, 1, 2, 3]], [3, 6, 6, 6])
    check_coo(sp.sum(coo(X), axis=1, keepdim=True), [3, 1], [[0, 1, 2], [0, 0, 0]], [3, 7, 11])
    check_csr(sp.sum(c, axis=-1), [3, 1], [0, 1, 2, 3], [0, 0, 0], [3, 7, 11])
    check_coo(sp.reshape(coo(X), [2, 6]), [2, 6], [[0, 0, 0, 1, 1, 1], [1, 3, 4, 1, 3, 4]], [1, 2, 3, 4, 5, 6])
    check_csr(sp.reshape(c, [6, 2]), [6, 2], [0, 1, 2, 3, 4, 5, 6], [1, 1, 0, 1, 1, 0], [1, 2, 3, 4, 5, 6])
    check_coo(sp.transpose(coo(X), [1, 0]), [4, 3], [[1, 3, 0, 3, 1, 2], [0, 0, 1, 1, 2, 2]], [1, 2, 3, 4, 5, 6])
    check_csr(sp.transpose(c, [1, 0]), [4, 3], [0, 1, 3, 4, 6], [1, 0, 2, 2, 0, 1], [3, 1, 5, 6, 2, 4])
    check_coo(sp.slice(coo(X), [0, 1], [1, 1], [3, 4]), [2, 3], [[0, 1, 1], [2, 0, 1]], [4, 5, 6])
    check_csr(sp.slice(c, [1], [-3], [3]), [3, 2], [0, 1, 1, 3], [0, 0, 1], [1, 5, 6])
    u = sp.sparse_coo_tensor([[2, 0, 2, 1], [1, 0, 1, 3]], [1., 2., 3., 4.], [3, 4])
    check_coo(sp.coalesce(u), [3, 4], [[0, 1, 2], [0, 3, 1]], [2, 4, 4])
    np.testing.assert_array_equal(u.to_dense().numpy(), sp.coalesce(u).to_dense().numpy())
    total = sp.sum(coo(X))
    assert list(total.shape) == [1] and float(total.values().numpy()[0]) == 21
    # paddle 3.3.1's docstring example: a COO tensor with one sparse dim keeps it (size 1) when
    # summed over it, and keepdim keeps its sparse and dense dims apart
    d = pycoll.to_tensor([[-2., 0.], [1., 2.]]).to_sparse_coo(1)
    for out in (sp.sum(d, axis=0), sp.sum(d, axis=0, keepdim=True)):
        assert list(out.shape) == [1, 2] and (out.sparse_dim(), out.dense_dim()) == (1, 1)
        np.testing.assert_array_equal(out.indices().numpy(), [[0]])
        np.testing.assert_array_equal(out.values().numpy(), [[-1., 2.]])
    whole = sp.sum(d, keepdim=True)
    assert list(whole.shape) == [1, 1] and (whole.sparse_dim(), whole.dense_dim()) == (1, 1)
    np.testing.assert_array_equal(whole.values().numpy(), [[1.]])


def test_shape_ops_carry_gradients():
    x = coo(X)
    y = sp.slice(sp.transpose(sp.reshape(x, [2, 6]), [1, 0]), [0], [2], [6])
    assert y.nnz() == 4
    weighted_backward(y)
    gy = np.zeros((4, 2), "float32")  # y's gradient, dense, taken back through the ops by hand
    gy[tuple(y.indices().numpy())] = np.arange(1, 5)
    full = np.zeros((6, 2), "float32")
    full[2:6] = gy
    np.testing.assert_array_equal(x.grad.to_dense().numpy(), full.T.reshape(3, 4))
    np.testing.assert_array_equal(x.grad.indices().numpy(), X_IDX)  # a leaf's gradient has its pattern


UNARY = {"sin": np.sin, "tan": np.tan, "asin": np.arcsin, "atan": np.arctan, "sinh": np.sinh, "tanh": np.tanh,
         "asinh": np.arcsinh, "atanh": np.arctanh, "sqrt": np.sqrt, "square": np.square, "log1p": np.log1p,
         "abs": np.abs, "neg": np.negative, "deg2rad": np.deg2rad, "rad2deg": np.rad2deg, "expm1": np.expm1}


@pytest.mark.parametrize("fmt", ["coo", "csr"])
def test_unary_ops_act_on_values_only(fmt):
    a = np.where(X != 0, X / 7, 0).astype("float32")
    for name, ref in UNARY.items():
        x = pycoll.to_tensor(a)
        x = x.to_sparse_coo(2) if fmt == "coo" else x.to_sparse_csr()
        y = getattr(sp, name)(x)
        assert y.nnz() == 6 and y.is_sparse_coo() == (fmt == "coo")
        np.testing.assert_allclose(y.to_dense().numpy(), np.where(a != 0, ref(a), 0), rtol=1e-5, err_msg=name)


def test_pow_cast_isnan_mask_as_equal_paddles():
    x = coo(X)
    y = sp.pow(x, 2.5)
    check_coo(y, [3, 4], X_IDX, [1, 5.656854, 15.588457, 32, 55.901699, 88.181633])
    sp.sum(y).backward()
    check_coo(x.grad, [3, 4], X_IDX, [2.5, 7.071068, 12.99038, 20, 27.950850, 36.742348])
    z = sp.cast(coo(X), "int32", "float64")
    assert z.indices().dtype == np.int32 and z.dtype == np.float64
    n = sp.isnan(sp.divide(coo(X), coo(Y)))
    assert n.dtype == np.bool_ and int(n.values().numpy().sum()) == 5
    m = sp.mask_as(pycoll.to_tensor(Y + 10), pycoll.to_tensor(X).to_sparse_csr())
    check_csr(m, [3, 4], [0, 2, 4, 6], X_IDX[1], [10, 18, 10, 19, 11, 10])


def test_softmax_and_activations_equal_paddles():
    x = coo(X)
    s = SF.softmax(x)
    check_coo(s, [3, 4], X_IDX, [0.268941, 0.731059] * 3)
    weighted_backward(s)
    check_coo(x.grad, [3, 4], X_IDX, [-0.196612, 0.196612] * 3)
    c = SF.softmax(pycoll.to_tensor(X * 100).to_sparse_csr())  # per-row shift: no overflow
    np.testing.assert_allclose(c.values().numpy(), [0, 1, 0, 1, 0, 1], atol=1e-6)
    v = np.array([-1., 2., 7., 4.], "float32")
    t = sp.sparse_coo_tensor([[0, 1, 1, 2], [1, 0, 2, 1]], v, [3, 4])
    np.testing.assert_allclose(sp.nn.ReLU6()(t).values().numpy(), [0, 2, 6, 4])  # paddle
    np.testing.assert_allclose(sp.nn.LeakyReLU(0.1)(t).values().numpy(), [-0.1, 2, 7, 4])  # paddle
    np.testing.assert_allclose(sp.nn.ReLU()(t).values().numpy(), [0, 2, 7, 4])


def test_coo_softmax_along_any_axis():
    # paddle 3.3.1 (probe p167): the columns of this matrix give [[0,1,0,.2689],[1,0,0,.7311],[0,0,1,0]]
    d = np.array([[0, 1.5, 0, -2], [3, 0, 0, -1], [0, 0, 7, 0]], "float32")
    x = pycoll.to_tensor(d).to_sparse_coo(2)
    x.stop_gradient = False
    s = SF.softmax(x, axis=0)
    np.testing.assert_allclose(s.to_dense().numpy(), [[0, 1, 0, 0.268941], [1, 0, 0, 0.731059], [0, 0, 1, 0]],
                               atol=1e-6)
    (s.values() * pycoll.to_tensor([1.0, 2.0, 3.0, 4.0, 5.0])).sum().backward()  # stored (0,1) (0,3) (1,0) (1,3) (2,2)
    p = np.array([0.268941, 0.731059])  # column 3's pair, weights 2 and 4: p * (w - p . w)
    np.testing.assert_allclose(x.grad.values().numpy()[[1, 3]], p * (np.array([2.0, 4.0]) - p @ [2.0, 4.0]),
                               atol=1e-6)
    cube = np.random.default_rng(0).standard_normal((2, 3, 4)) * (np.random.default_rng(1).random((2, 3, 4)) > 0.4)
    three = SF.softmax(pycoll.to_tensor(cube).to_sparse_coo(3), axis=-2).to_dense().numpy()
    stored = cube != 0
    e = np.where(stored, np.exp(cube), 0)
    np.testing.assert_allclose(three, np.where(stored, e / np.maximum(e.sum(1, keepdims=True), 1e-300), 0), atol=1e-12)
    hybrid_dense = np.random.default_rng(2).standard_normal((2, 3, 4))
    hybrid_dense[0, 1] = 0  # a row of the sparse [2, 3] not stored
    hybrid = pycoll.to_tensor(hybrid_dense).to_sparse_coo(2)  # values [5, 4]
    e = np.exp(hybrid_dense)  # along the dense axis: each stored vector's own softmax (paddle's)
    stored = np.abs(hybrid_dense).sum(-1) != 0
    np.testing.assert_allclose(SF.softmax(hybrid, axis=-1).values().numpy(),
                               (e / e.sum(-1, keepdims=True))[stored], atol=1e-12)
    masked = np.where(stored[..., None], e, 0)  # along sparse axis 0: among the stored rows
    np.testing.assert_allclose(SF.softmax(hybrid, axis=0).to_dense().numpy(),
                               masked / masked.sum(0, keepdims=True), atol=1e-12)
    with pytest.raises(ValueError, match="a CSR x takes the last axis only"):
        SF.softmax(pycoll.to_tensor(d).to_sparse_csr(), axis=0)
    with pytest.raises(ValueError, match=r"axis must be an int in \[-2, 2\), got 2"):
        SF.softmax(x, axis=2)


@pytest.mark.parametrize("fmt", ["coo", "csr"])
@pytest.mark.parametrize("batched", [False, True])
def test_matmul_mv_addmm_masked_matmul_against_numpy(fmt, batched):
    rng = np.random.default_rng(1)
    shape = (2, 4, 5) if batched else (4, 5)
    a = (rng.standard_normal(shape) * (rng.random(shape) < 0.5)).astype("float32")
    b = rng.standard_normal(shape[:-2] + (5, 3)).astype("float32")
    x = pycoll.to_tensor(a)
    x = x.to_sparse_coo(len(shape)) if fmt == "coo" else x.to_sparse_csr()
    x.stop_gradient = False
    y = pycoll.to_tensor(b, stop_gradient=False)
    out = sp.matmul(x, y)
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-5, atol=1e-5)
    w = rng.standard_normal(out.shape).astype("float32")
    (out * pycoll.to_tensor(w)).sum().backward()
    dense_xgrad = w @ np.swapaxes(b, -1, -2)
    np.testing.assert_allclose(x.grad.to_dense().numpy(), np.where(a != 0, dense_xgrad, 0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y.grad.numpy(), np.swapaxes(a, -1, -2) @ w, rtol=1e-5, atol=1e-5)
    # masked_matmul: (p @ q) at x's pattern, gradients by hand
    p = pycoll.to_tensor(rng.standard_normal(shape[:-1] + (3,)).astype("float32"), stop_gradient=False)
    q = pycoll.to_tensor(rng.standard_normal(shape[:-2] + (3, 5)).astype("float32"), stop_gradient=False)
    mm = sp.masked_matmul(p, q, x)
    assert mm.is_sparse_coo() == (fmt == "coo")
    mask = (a != 0).astype("float32")
    np.testing.assert_allclose(mm.to_dense().numpy(), (p.numpy() @ q.numpy()) * mask, rtol=1e-5, atol=1e-5)
    mm.to_dense().sum().backward()
    np.testing.assert_allclose(p.grad.numpy(), mask @ np.swapaxes(q.numpy(), -1, -2), rtol=1e-5, atol=1e-5)
    if not batched:
        v = rng.standard_normal(5).astype("float32")
        np.testing.assert_allclose(sp.mv(x, pycoll.to_tensor(v)).numpy(), a @ v, rtol=1e-5, atol=1e-5)
        inp = rng.standard_normal((4, 3)).astype("float32")
        r = sp.addmm(pycoll.to_tensor(inp), x, pycoll.to_tensor(b), beta=0.5, alpha=2.0)
        np.testing.assert_allclose(r.numpy(), 0.5 * inp + 2 * a @ b, rtol=1e-5, atol=1e-5)


def test_sparse_times_sparse_stores_what_the_patterns_reach():
    x = coo(X, grad=False)
    yt = coo(Y.T.copy(), grad=False)
    z = sp.matmul(x, yt)
    assert z.is_sparse_coo()
    np.testing.assert_allclose(z.to_dense().numpy(), X @ Y.T)
    reach = ((X != 0).astype(int) @ (Y.T != 0).astype(int)) != 0
    np.testing.assert_array_equal(np.sort(np.ravel_multi_index(z.indices().numpy(), (3, 3))), np.flatnonzero(reach))


def test_creation_and_methods():
    v = pycoll.to_tensor([1., 2., 3.], stop_gradient=False)
    x = sp.sparse_coo_tensor([[0, 1, 2], [2, 0, 1]], v, stop_gradient=False)
    assert list(x.shape) == [3, 3] and x.is_sparse() and not x.is_dense() and x.sparse_dim() == 2
    assert x.dense_dim() == 0 and sp.is_same_shape(x, pycoll.zeros([3, 3]))
    sp.sum(sp.square(x)).backward()
    np.testing.assert_allclose(v.grad.numpy(), [2, 4, 6])  # values that take a gradient get it (paddle's)
    h = sp.sparse_coo_tensor([[0, 2]], np.ones((2, 3), "float32"), [4, 3])
    assert h.sparse_dim() == 1 and h.dense_dim() == 1 and list(h.to_dense().shape) == [4, 3]
    assert "indices=[[0, 2]]" in repr(h)
    z = sp.sparse_coo_tensor([[0, 1], [1, 0]], [1., 2.], [2, 2])
    z.stop_gradient = False
    z.register_hook(lambda g: g * 10)  # hooks see (and may replace) the values' gradient
    sp.sum(sp.square(z)).backward()
    np.testing.assert_allclose(z.grad.values().numpy(), [20, 40])
    assert z.grad.is_sparse_coo() and z.grad.nnz() == 2


def test_bad_input_is_refused_by_name():
    x = coo(X, grad=False)
    with pytest.raises(TypeError, match="sparse COO tensor"):
        pycoll.sin(x)  # dense ops refuse sparse tensors
    with pytest.raises(ValueError, match="same number of non-zero"):
        sp.sparse_coo_tensor([[0, 1]], [1.])
    with pytest.raises(ValueError, match="minimum shape"):
        sp.sparse_coo_tensor([[0, 3]], [1., 2.], [2])
    with pytest.raises(ValueError, match=r"each value has shape \[2\].*last 1 dims must be \[2\], got shape \[2, 3\]"):
        sp.sparse_coo_tensor([[0, 1]], [[1., 2.], [3., 4.]], [2, 3])  # (a later to_dense named index_add)
    with pytest.raises(TypeError, match="indices"):
        sp.sparse_coo_tensor([[0.5, 1]], [1., 2.])
    with pytest.raises(ValueError, match="crows"):
        sp.sparse_csr_tensor([0, 1, 2], [0, 1], [1., 2.], [3, 3])
    with pytest.raises(ValueError, match="same shape"):
        sp.add(x, coo(np.ones((4, 4), "float32")))
    with pytest.raises(TypeError, match="y must be a sparse"):
        sp.add(x, pycoll.ones([3, 4]))
    with pytest.raises(ValueError, match="axis"):
        sp.sum(pycoll.to_tensor(X).to_sparse_csr(), axis=0)
    with pytest.raises(TypeError, match="crows"):
        x.crows()
    with pytest.raises(ValueError, match="sparse_dim"):
        pycoll.to_tensor(X).to_sparse_coo(3)


def dense_conv(xd, w, stride, pad, dil):
    """A dense channels-last convolution in NumPy (zero padding), for the sparse ones' reference."""
    dims = w.ndim - 2
    xp_ = np.pad(xd, [(0, 0)] + [(pad, pad)] * dims + [(0, 0)])
    outs = [(xp_.shape[1 + d] - dil * (w.shape[d] - 1) - 1) // stride + 1 for d in range(dims)]
    out = np.zeros((xd.shape[0], *outs, w.shape[-1]), "float64")
    for k in np.ndindex(*w.shape[:dims]):
        sl = tuple(slice(k[d] * dil, k[d] * dil + stride * (outs[d] - 1) + 1, stride) for d in range(dims))
        out += xp_[(slice(None),) + sl] @ w[k]
    return out


def point_cloud(rng, spatial, c=3, p=0.3):
    occ = rng.random(spatial) < p
    xd = (rng.standard_normal(spatial + (c,)) * occ[..., None]).astype("float32")
    idx = np.stack(np.nonzero(occ))
    return xd, occ, sp.sparse_coo_tensor(idx, xd[occ], list(xd.shape))


@pytest.mark.parametrize("dims", [2, 3])
@pytest.mark.parametrize("stride,pad,dil", [(1, 0, 1), (2, 1, 1), (1, 2, 2)])
def test_conv_against_a_dense_numpy_convolution(dims, stride, pad, dil):
    rng = np.random.default_rng(dims * 10 + stride + pad)
    xd, occ, x = point_cloud(rng, (2, 4, 5, 3)[:dims + 1] if dims == 3 else (2, 5, 4))
    x.stop_gradient = False
    w = rng.standard_normal((3,) * dims + (3, 2)).astype("float32")
    b = np.array([0.5, -1.0], "float32")
    conv = sp.nn.functional.conv3d if dims == 3 else sp.nn.functional.conv2d
    y = conv(x, pycoll.to_tensor(w), pycoll.to_tensor(b), stride=stride, padding=pad, dilation=dil)
    ref = dense_conv(xd, w, stride, pad, dil)
    reach = dense_conv(occ[..., None].astype(float), np.ones(w.shape[:-2] + (1, 1)), stride, pad, dil)[..., 0] > 0
    assert list(y.shape) == list(ref.shape)
    np.testing.assert_array_equal(y.indices().numpy(), np.stack(np.nonzero(reach)))  # sorted, as paddle's
    np.testing.assert_allclose(y.values().numpy(), ref[reach] + b, rtol=1e-4, atol=1e-4)
    y.values().sum().backward()  # d/dx of the dense convolution's sum at the stored outputs
    g = np.zeros(ref.shape)
    g[reach] = 1
    wt = np.flip(w, tuple(range(dims))).swapaxes(-1, -2)
    if stride == 1:  # the gradient of a stride-1 convolution is the flipped kernel's over g
        full = dense_conv(g, wt, 1, dil * 2 - pad, dil)
        np.testing.assert_allclose(x.grad.values().numpy(), full[occ], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dims", [2, 3])
def test_subm_conv_keeps_the_input_positions(dims):
    rng = np.random.default_rng(7)
    xd, occ, x = point_cloud(rng, (2, 4, 5, 3) if dims == 3 else (2, 5, 4))
    w = rng.standard_normal((3,) * dims + (3, 4)).astype("float32")
    conv = sp.nn.functional.subm_conv3d if dims == 3 else sp.nn.functional.subm_conv2d
    y = conv(x, pycoll.to_tensor(w), padding=0)  # paddle centres the kernel whatever the padding
    np.testing.assert_array_equal(y.indices().numpy(), x.indices().numpy())
    np.testing.assert_allclose(y.values().numpy(), dense_conv(xd, w, 1, 1, 1)[occ], rtol=1e-4, atol=1e-4)
    strided = conv(x, pycoll.to_tensor(w), stride=2)  # and whatever the stride (paddle's; it read 2 * o)
    np.testing.assert_array_equal(strided.values().numpy(), y.values().numpy())
    dilated = conv(x, pycoll.to_tensor(w), dilation=2)  # centred: offsets -2, 0, 2
    np.testing.assert_allclose(dilated.values().numpy(), dense_conv(xd, w, 1, 2, 2)[occ], rtol=1e-4, atol=1e-4)


def test_max_pool3d_and_batch_norm():
    rng = np.random.default_rng(8)
    xd, occ, x = point_cloud(rng, (2, 4, 5, 3))
    y = sp.nn.MaxPool3D(kernel_size=2, stride=2)(x)
    filled = np.where(occ[..., None], xd, -np.inf)[:, :4, :4, :2]  # absent entries take no part
    ref = filled.reshape(2, 2, 2, 2, 2, 1, 2, 3).max(axis=(2, 4, 6))
    reach = np.isfinite(ref[..., 0])
    np.testing.assert_array_equal(y.indices().numpy(), np.stack(np.nonzero(reach)))
    np.testing.assert_allclose(y.values().numpy(), ref[reach])
    bn = sp.nn.BatchNorm(3)
    x.stop_gradient = False
    z = bn(x)
    v = xd[occ]
    np.testing.assert_allclose(z.values().numpy(), (v - v.mean(0)) / np.sqrt(v.var(0) + 1e-5), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn._mean.numpy(), 0.1 * v.mean(0), rtol=1e-5, atol=1e-6)
    layer = sp.nn.SubmConv3D(3, 4, 3)
    assert list(layer.weight.shape) == [3, 3, 3, 3, 4] and list(layer(x).shape) == [2, 4, 5, 3, 4]


def test_attention_against_numpy():
    """paddle's kernel is CUDA-only: the masked softmax attention written out in NumPy."""
    rng = np.random.default_rng(0)
    b, h, s, d = 2, 2, 5, 4
    q, k, v = (rng.standard_normal((b, h, s, d)).astype("float32") for _ in range(3))
    m = (rng.random((b * h, s, s)) < 0.6).astype("float32")
    m[:, :, 0] = 1
    kp = np.ones((b, s), "float32")
    kp[1, 3] = 0
    am = np.ones((s, s), "float32")
    am[2, 0] = 0
    Q, K, V = (pycoll.to_tensor(a, stop_gradient=False) for a in (q, k, v))
    out = sp.nn.functional.attention(Q, K, V, pycoll.to_tensor(m).to_sparse_csr(), pycoll.to_tensor(kp),
                                     pycoll.to_tensor(am))
    scores = q.reshape(b * h, s, d) @ k.reshape(b * h, s, d).transpose(0, 2, 1) / np.sqrt(d)
    allowed = (m != 0) & (kp.repeat(h, 0)[:, None, :] != 0) & (am[None] != 0)
    scores = np.where(allowed, scores, -np.inf)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    np.testing.assert_allclose(out.numpy(), (p @ v.reshape(b * h, s, d)).reshape(b, h, s, d), rtol=1e-5, atol=1e-5)
    out.sum().backward()
    np.testing.assert_allclose(V.grad.numpy(), (p.transpose(0, 2, 1) @ np.ones((b * h, s, d))).reshape(b, h, s, d),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(8, 5), (5, 8)])
def test_pca_lowrank_recovers_the_centred_matrix(shape):
    rng = np.random.default_rng(2)
    a = (rng.standard_normal(shape) * (rng.random(shape) < 0.5)).astype("float64")
    for x in (pycoll.to_tensor(a).to_sparse_coo(2), pycoll.to_tensor(a).to_sparse_csr()):
        for center in (True, False):
            u, s, v = sp.pca_lowrank(x, q=min(shape), center=center)
            c = a - a.mean(0) if center else a
            np.testing.assert_allclose(u.numpy() @ np.diag(s.numpy()) @ v.numpy().T, c, atol=1e-10)
            np.testing.assert_allclose(s.numpy(), np.linalg.svd(c, compute_uv=False), atol=1e-10)
    with pytest.raises(ValueError, match="q"):
        sp.pca_lowrank(pycoll.to_tensor(a).to_sparse_coo(2), q=9)


def _gpu_path_ops():
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((2, 4, 5)) * (rng.random((2, 4, 5)) < 0.5)).astype("float32")
    x = pycoll.to_tensor(a).to_sparse_csr()
    x.stop_gradient = False
    y = pycoll.to_tensor(rng.standard_normal((2, 5, 3)).astype("float32"), stop_gradient=False)
    c = pycoll.to_tensor(a[0]).to_sparse_coo(2)
    c.stop_gradient = False
    outs = [sp.matmul(x, y), sp.sum(sp.add(c, sp.sin(c)), axis=0).to_dense(),
            SF.softmax(x).to_dense(), sp.reshape(sp.transpose(c, [1, 0]), [2, 10]).to_dense(),
            sp.masked_matmul(y.transpose([0, 2, 1]), y, pycoll.to_tensor(np.ones((2, 3, 3), "float32")).to_sparse_csr()).to_dense()]
    xd, occ, pc = point_cloud(rng, (1, 3, 3, 3))
    outs.append(sp.nn.functional.subm_conv3d(pc, pycoll.to_tensor(np.ones((3, 3, 3, 3, 2), "float32"))).to_dense())
    sum(o.sum() for o in outs).backward()
    return outs + [x.grad.to_dense(), y.grad, c.grad.to_dense()]


def test_every_op_gives_the_same_on_gpu_arrays():
    """tests/strict_cupy.py in CuPy's place (host arrays meeting device arrays are refused, as
    CuPy refuses them): the CPU's numbers, in device arrays."""
    import strict_cupy

    with strict_cupy.installed():
        results = strict_cupy.on_each_place(_gpu_path_ops)
    for want, got in zip(results["cpu"], results["gpu"]):
        assert isinstance(got.array, strict_cupy.ndarray)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_sync_batch_norm_on_two_ranks_is_batch_norm_of_all_entries():
    from conftest import assert_ok, launch
    assert_ok(launch(2, "sparse_sync_batch_norm.py", timeout=60), expect_lines=2)


def test_a_coo_tensor_coalesces_itself_as_paddles_method():
    """Duplicate indices summed (paddle 3.3.1: indices [[0, 1], [1, 2]], values [3, 3])."""
    s = sp.sparse_coo_tensor(pycoll.to_tensor([[0, 0, 1], [1, 1, 2]]), pycoll.to_tensor([1.0, 2.0, 3.0]), [2, 3])
    assert not s.is_coalesced()
    c = s.coalesce()
    assert c.is_coalesced() and c.indices().numpy().tolist() == [[0, 1], [1, 2]]
    assert c.values().numpy().tolist() == [3.0, 3.0]


def test_a_position_given_twice_holds_its_sum_for_every_op():
    # to_dense adds repeated positions (as torch); so do sin, relu, square, pow, softmax and s * s,
    # which took each copy on its own before (sin(s) summed sin(-3) + sin(5); s * s gave 34)
    coo = sp.sparse_coo_tensor([[0, 0, 1]], [-3.0, 5.0, 1.0], [3])
    csr = sp.sparse_csr_tensor([0, 3], [1, 1, 2], [-3.0, 5.0, 1.0], [1, 3])
    for s in (coo, csr):
        dense = s.to_dense()
        for got, want in ((sp.sin(s), pycoll.sin(dense)), (SF.relu(s), pycoll.nn.functional.relu(dense)),
                          (sp.square(s), dense * dense), (sp.multiply(s, s), dense * dense),
                          (sp.pow(s, 3), dense ** 3)):
            np.testing.assert_allclose(got.to_dense().numpy(), want.numpy(), rtol=1e-6)
    assert csr.nnz() == 2 and csr.cols().numpy().tolist() == [1, 2]  # summed once, when it was built


@pytest.mark.parametrize("crows, cols, words", [
    ([1, 2, 4], [0, 1, 2, 0], "each matrix's crows must begin with 0"),
    ([0, 3, 2], [0, 1], "crows must not decrease within a matrix"),
    ([0, 1, 3], [0, 1, 2, 0], r"the last crows of the matrices \(\[3\]\) must add up to the number of values, 4"),
    ([0, 1, 2], [0, 5], r"cols must lie in \[0, 3\)"),
])
def test_sparse_csr_tensor_names_what_is_wrong_with_its_rows(crows, cols, words):
    with pytest.raises(ValueError, match="sparse_csr_tensor: " + words):
        sp.sparse_csr_tensor(crows, cols, np.ones(len(cols), np.float32), [2, 3])


def test_tensor_methods_a_sparse_tensor_answers_as_paddles():
    c = pycoll.to_tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse_coo(2)
    assert c.dim() == 2 and c.size == 4 and c.is_contiguous()  # paddle 3.3.1's answers
    assert c.cpu() is c  # already on the host
