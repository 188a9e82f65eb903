"""paddle API gaps filled in pycoll, each against paddle 3.3.1 (values paddle printed, pasted as
literals and said so) or a NumPy reference: Tensor.all/any, the in-place zero_/fill_/scale_,
scale, masked_fill, linalg.norm, tril/triu, bmm, einsum, the CUDA queries (item 1); dropout's
signature, axis and modes (2); the optimizers' multi_precision, name, amsgrad, lazy_mode and
rescale_grad (3); save's protocol (5); BatchSampler's shuffle through NumPy's generator (6)."""
import importlib.util
import sys

import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
import pycoll.nn.functional as F
from pycoll.io import BatchSampler, DataLoader, Dataset, DistributedBatchSampler
from pycoll.regularizer import L1Decay, L2Decay
from test_gradcheck import gradcheck

nan, inf = float("nan"), float("inf")


# ---- all / any -----------------------------------------------------------------------------

X01 = np.array([[1.0, 0.0, 2.0], [0.0, 0.0, 3.0]], dtype=np.float32)


@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, [0, 1], (1,)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_all_and_any_match_numpy(name, axis, keepdim):
    ax = tuple(axis) if isinstance(axis, list) else axis
    expected = getattr(np, name)(X01, axis=ax, keepdims=keepdim)
    for out in (getattr(pycoll, name)(pycoll.to_tensor(X01), axis, keepdim),
                getattr(pycoll.to_tensor(X01), name)(axis=axis, keepdim=keepdim)):
        assert out.dtype == np.bool_ and out.shape == list(expected.shape)
        assert out.numpy().tolist() == expected.tolist()


def test_all_and_any_as_paddle_prints_them():
    # paddle 3.3.1: all(x) False (shape []), any(x, axis=1) [True, True], x.all(axis=0,
    # keepdim=True) [[False, False, True]], all of an int tensor along axis 1 [True]
    x = pycoll.to_tensor(X01)
    assert pycoll.all(x).shape == [] and not pycoll.all(x).item()
    assert pycoll.any(x, axis=1).tolist() == [True, True]
    assert x.all(axis=0, keepdim=True).tolist() == [[False, False, True]]
    assert pycoll.all(pycoll.to_tensor([[1, 2]]), axis=1).tolist() == [True]
    assert pycoll.all(x, keepdim=True).shape == [1, 1] and not pycoll.any(pycoll.to_tensor([0, 0])).item()


# ---- in place: zero_, fill_, scale_ --------------------------------------------------------

def test_in_place_ops_change_the_tensor_itself():
    # paddle 3.3.1: zero_ -> [0, 0, 0]; fill_(2.7) on int64 -> [2, 2, 2]; fill_(True) -> [1, 1, 1];
    # scale_(2, 1) -> [3., 5., 7.]; each returns the tensor itself
    y = pycoll.to_tensor([1, 2, 3])
    memory = y.array
    assert y.zero_() is y and y.tolist() == [0, 0, 0] and y.array is memory
    assert y.fill_(2.7) is y and y.tolist() == [2, 2, 2] and y.dtype == np.int64
    assert y.fill_(True).tolist() == [1, 1, 1]
    z = pycoll.to_tensor([1.0, 2.0, 3.0])
    assert z.scale_(2, 1) is z and z.tolist() == [3.0, 5.0, 7.0] and z.array.dtype == np.float32
    assert pycoll.to_tensor([1, 2, 3]).scale_(2.5, 1.5).tolist() == [3, 5, 7]  # paddle: ints truncate both
    assert pycoll.to_tensor([1.0, 2.0]).scale_(2.0, 1.0, bias_after_scale=False).tolist() == [4.0, 6.0]
    with pytest.raises(TypeError, match="value must be an int or a float"):
        y.fill_(pycoll.to_tensor(2.0))  # paddle 3.3.1: TypeError too


def test_in_place_on_a_parameter_is_refused_unless_under_no_grad():
    # paddle 3.3.1: ValueError "Leaf Var ... that doesn't stop gradient can't use inplace strategy"
    p = pycoll.create_parameter([3], "float32", name="leaf_w")
    for change in (lambda: p.zero_(), lambda: p.fill_(1.0), lambda: p.scale_(2.0)):
        with pytest.raises(ValueError, match="leaf tensor leaf_w takes a gradient"):
            change()
    with pycoll.no_grad():
        assert p.fill_(4.0) is p
    assert p.tolist() == [4.0, 4.0, 4.0]


@pytest.mark.parametrize("change, grad", [
    (lambda b: b.fill_(3.0), [0.0, 0.0, 0.0]),  # paddle 3.3.1's a.grad for each
    (lambda b: b.zero_(), [0.0, 0.0, 0.0]),
    (lambda b: b.scale_(3.0, 1.0), [6.0, 6.0, 6.0]),
])
def test_in_place_on_an_op_output_passes_the_gradient_as_paddle(change, grad):
    a = pycoll.to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
    b = a * 2
    assert change(b) is b
    b.sum().backward()
    assert a.grad.tolist() == grad


def test_an_in_place_change_leaves_earlier_uses_their_values():
    # c's backward keeps b's values from before zero_, so c's gradient stays d(b*b)/da = 8a
    # (paddle raises instead, having seen the tensor change under a recorded use)
    a = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    b = a * 2
    c = b * b
    b.zero_()
    assert b.tolist() == [0.0, 0.0]
    c.sum().backward()
    assert a.grad.tolist() == [8.0, 16.0]


# ---- scale ---------------------------------------------------------------------------------

def test_scale_as_paddle():
    # paddle 3.3.1: int [1, 2, 3] * 2.5 + 1.5 -> [3, 5, 7] (scale and bias truncated), with
    # bias_after_scale=False [4, 6, 8]; act='relu' [0., 5.]; act='tanh' [-0.76159418, 0.99990916];
    # a Tensor scale gives x the gradient 3 and itself none
    y = pycoll.to_tensor([1, 2, 3])
    assert pycoll.scale(y, 2.5, 1.5).tolist() == [3, 5, 7] and pycoll.scale(y, 2.5, 1.5).dtype == np.int64
    assert pycoll.scale(y, 2.5, 1.5, bias_after_scale=False).tolist() == [4, 6, 8]
    v = pycoll.to_tensor([-1.0, 2.0])
    assert pycoll.scale(v, 2.0, 1.0, act="relu").tolist() == [0.0, 5.0]
    np.testing.assert_allclose(v.scale(2.0, 1.0, act="tanh").numpy(), [-0.76159418, 0.99990916], rtol=1e-6)
    x = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    s = pycoll.to_tensor(3.0, stop_gradient=False)
    pycoll.scale(x, s, 1.0).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0] and s.grad is None
    assert pycoll.scale(pycoll.to_tensor([1.0], dtype="float64"), s).dtype == np.float64
    with pytest.raises(ValueError, match="act must be None or one of"):
        pycoll.scale(x, 2.0, act="softsign")
    with pytest.raises(ValueError, match="act must be None"):
        pycoll.to_tensor([1.0]).scale_(2.0, act="relu")  # paddle ignores act here without a word


# ---- masked_fill ---------------------------------------------------------------------------

def test_masked_fill_as_paddle():
    a = pycoll.to_tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], stop_gradient=False)
    out = pycoll.masked_fill(a, pycoll.to_tensor([True, False, True]), 9.0)
    # paddle 3.3.1: [[9, 2, 9], [9, 5, 9]], and a.grad [[0, 1, 0], [0, 1, 0]] for out.sum()
    assert out.tolist() == [[9.0, 2.0, 9.0], [9.0, 5.0, 9.0]]
    out.sum().backward()
    assert a.grad.tolist() == [[0.0, 1.0, 0.0], [0.0, 1.0, 0.0]]
    value = pycoll.to_tensor(-1.0, stop_gradient=False)
    filled = a.masked_fill(pycoll.to_tensor([[True], [False]]), value)
    assert filled.tolist() == [[-1.0, -1.0, -1.0], [4.0, 5.0, 6.0]]  # paddle 3.3.1
    filled.sum().backward()
    assert float(value.grad) == 3.0  # filled in 3 places (torch's; paddle 3.3.1 gives it a zero gradient)
    # an int x truncates the value; an int mask counts non-zero as True; x broadcasts to the mask
    assert pycoll.masked_fill(pycoll.to_tensor([1, 2, 3]), pycoll.to_tensor([True, False, True]), 2.5).tolist() \
        == [2, 2, 2]
    assert pycoll.masked_fill(pycoll.to_tensor([[1.0, 0.0], [2.0, 3.0]]), pycoll.to_tensor([1, 0]), 1.0).tolist() \
        == [[1.0, 0.0], [1.0, 3.0]]
    row = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)
    wide = pycoll.masked_fill(row, pycoll.to_tensor([[True, False], [False, False]]), 0.0)
    wide.sum().backward()
    assert wide.shape == [2, 2] and row.grad.tolist() == [1.0, 2.0]  # paddle 3.3.1


# ---- linalg.norm ---------------------------------------------------------------------------

A = np.array([[[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]], [[0.0, 0.0, 0.0], [2.0, -2.0, 1.0]]], dtype=np.float32)
B = np.array([[[2.0, -1.0, 0.5], [0.3, 1.5, -2.0]], [[1.0, 2.0, 3.0], [-1.0, 0.5, 2.5]]], dtype=np.float32)

# paddle 3.3.1: (x, norm's arguments, the norm's shape, its values, x.grad) where the gradient is
# of sum(norm * (arange(norm.size) + 1)); NaN where paddle's p < 1 meets a zero
NORMS = [
    (A, {}, [], [6.4420495], [0.23284516, -0.3104602, 0.4656903, 0.07761505, 0.6209204, -0.1552301, 0.0, 0.0,
        0.0, 0.3104602, -0.3104602, 0.1552301]),
    (A, {'p': 'fro'}, [], [6.4420495], [0.23284516, -0.3104602, 0.4656903, 0.07761505, 0.6209204, -0.1552301,
        0.0, 0.0, 0.0, 0.3104602, -0.3104602, 0.1552301]),
    (A, {'p': 1}, [], [17.0], [1.0, -1.0, 1.0, 1.0, 1.0, -1.0, 0.0, 0.0, 0.0, 1.0, -1.0, 1.0]),
    (A, {'p': inf}, [], [4.0], [0.0, -0.0, 0.0, 0.0, 1.0, -0.0, 0.0, 0.0, 0.0, 0.0, -0.0, 0.0]),
    (A, {'p': -inf}, [], [0.0], [0.0, -0.0, 0.0, 0.0, 0.0, -0.0, 0.0, 0.0, 0.0, 0.0, -0.0, 0.0]),
    (A, {'p': 0}, [], [9.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
    (A, {'p': 3}, [], [4.9392653], [0.092226945, -0.16395901, 0.36890778, 0.010247438, 0.65583605, -0.040989753,
        0.0, 0.0, 0.0, 0.16395901, -0.16395901, 0.040989753]),
    (A, {'axis': 1}, [2, 3], [1.5811388, 4.472136, 3.1622777, 2.0, 2.0, 1.0], [0.94868326, -0.8944272,
        2.8460498, 0.31622776, 1.7888544, -0.94868326, 0.0, 0.0, 0.0, 4.0, -5.0, 6.0]),
    (A, {'axis': -1, 'keepdim': True}, [2, 2, 1], [3.905125, 4.1533117, 0.0, 3.0], [0.38411063, -0.5121475,
        0.76822126, 0.24077171, 1.9261737, -0.48154342, 0.0, 0.0, 0.0, 2.6666667, -2.6666667, 1.3333334]),
    (A, {'p': 1, 'axis': 2}, [2, 2], [6.5, 5.5, 0.0, 5.0], [1.0, -1.0, 1.0, 2.0, 2.0, -2.0, 0.0, 0.0, 0.0, 4.0,
        -4.0, 4.0]),
    (A, {'p': inf, 'axis': 2}, [2, 2], [3.0, 4.0, 0.0, 2.0], [0.0, -0.0, 1.0, 0.0, 2.0, -0.0, 0.0, 0.0, 0.0,
        4.0, -4.0, 0.0]),
    (A, {'p': -1, 'axis': 2}, [2, 2], [0.6666666, 0.30769232, 0.0, 0.5], [0.19753085, -0.1111111, 0.049382713,
        0.7573965, 0.011834321, -0.18934913, nan, nan, nan, 0.25, -0.25, 1.0]),
    (A, {'p': 'fro', 'axis': [1, 2]}, [2], [5.700877, 3.0], [0.2631174, -0.3508232, 0.5262348, 0.0877058,
        0.7016464, -0.1754116, 0.0, 0.0, 0.0, 1.3333334, -1.3333334, 0.6666667]),
    (A, {'p': 'fro', 'axis': 1}, [2, 3], [1.5811388, 4.472136, 3.1622777, 2.0, 2.0, 1.0], [0.94868326,
        -0.8944272, 2.8460498, 0.31622776, 1.7888544, -0.94868326, 0.0, 0.0, 0.0, 4.0, -5.0, 6.0]),
    (A, {'p': 1, 'axis': [1, 2]}, [2], [6.0, 2.0], [0.0, -1.0, 0.0, 0.0, 1.0, -0.0, 0.0, 0.0, 0.0, 1.0, -1.0,
        0.0]),
    (A, {'p': inf, 'axis': [1, 2]}, [2], [6.5, 5.0], [1.0, -1.0, 1.0, 0.0, 0.0, -0.0, 0.0, 0.0, 0.0, 2.0, -2.0,
        2.0]),
    (A, {'p': -1, 'axis': [1, 2]}, [2], [2.0, 1.0], [1.0, -0.0, 0.0, 1.0, 0.0, -0.0, 0.0, 0.0, 0.0, 0.0, -0.0,
        2.0]),
    (A, {'p': -inf, 'axis': [2, 1]}, [2], [2.0, 1.0], [1.0, -0.0, 0.0, 1.0, 0.0, -0.0, 0.0, 0.0, 0.0, 0.0, -0.0,
        2.0]),
    (A, {'axis': [0, 1, 2]}, [], [6.4420495], [0.23284516, -0.3104602, 0.4656903, 0.07761505, 0.6209204,
        -0.1552301, 0.0, 0.0, 0.0, 0.3104602, -0.3104602, 0.1552301]),
    (A, {'p': 0.5, 'axis': 2}, [2, 2], [19.105722, 13.742641, 0.0, 14.656854], [3.5689144, -3.0907702,
        2.5236034, 10.485281, 3.7071068, -7.4142137, nan, nan, nan, 10.828426, -10.828426, 15.313708]),
    (A, {'p': 'fro', 'axis': [1, 2], 'keepdim': True}, [2, 1, 1], [5.700877, 3.0], [0.2631174, -0.3508232,
        0.5262348, 0.0877058, 0.7016464, -0.1754116, 0.0, 0.0, 0.0, 1.3333334, -1.3333334, 0.6666667]),
    (A, {'p': 1, 'axis': (0,)}, [2, 3], [1.5, 2.0, 3.0, 2.5, 6.0, 2.0], [1.0, -2.0, 3.0, 4.0, 5.0, -6.0, 0.0,
        0.0, 0.0, 4.0, -5.0, 6.0]),
    (B, {'p': 2, 'axis': [1, 2]}, [2], [2.7877624, 4.35016], [0.20808484, -0.38850737, 0.40975735, -0.27616355,
        0.51561457, -0.5438169, 0.110352635, 0.7480171, 1.4911436, 0.072448574, 0.49108723, 0.97896373]),
    (B, {'axis': [1, 2]}, [2], [2.7877624, 4.35016], [0.20808484, -0.38850737, 0.40975735, -0.27616355,
        0.51561457, -0.5438169, 0.110352635, 0.7480171, 1.4911436, 0.072448574, 0.49108723, 0.97896373]),
    (B, {'p': -2, 'axis': [1, 2]}, [2], [1.9540677, 1.6050261], [0.72664267, 0.042509414, -0.32870218,
        0.5475136, 0.03203016, -0.24767183, 0.9469929, 0.46479455, -0.30324215, -1.4424459, -0.7079683,
        0.46189404]),
    (B, {'p': 'nuc', 'axis': [1, 2]}, [2], [4.74183, 5.9551864], [0.9347275, -0.34599796, 0.081055164,
        0.27135006, 0.54764473, -0.79148877, 1.0573455, 1.2128116, 1.1879015, -1.3699973, -0.21688107,
        1.4408578]),
    (B, {'p': 'nuc', 'axis': [2, 1], 'keepdim': True}, [2, 1, 1], [4.74183, 5.955186], [0.93472755, -0.34599796,
        0.081055254, 0.27135003, 0.5476448, -0.7914888, 1.0573453, 1.2128112, 1.187901, -1.369997, -0.21688107,
        1.4408573]),
    (B, {'p': 2, 'axis': [0, 2]}, [2], [3.774917, 3.3921702], [0.057277095, 0.078756005, 0.1324533, 0.3696859,
        0.24006447, -1.2461147, 0.3436625, 0.4725359, 0.7947195, -0.41980216, -0.27260867, 1.4150435]),
]


@pytest.mark.parametrize("x, kwargs, shape, values, grad", NORMS, ids=[repr(c[1]) for c in NORMS])
def test_norm_values_and_gradients_equal_paddles(x, kwargs, shape, values, grad):
    t = pycoll.to_tensor(x, stop_gradient=False)
    out = pycoll.linalg.norm(t, **kwargs)
    assert out.shape == shape and out.dtype == np.float32
    np.testing.assert_allclose(out.numpy().ravel(), values, rtol=2e-6, atol=1e-6)
    (out * (pycoll.arange(out.size, dtype="float32").reshape(shape) + 1)).sum().backward()
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(t.grad.numpy().ravel(), grad, rtol=2e-5, atol=2e-6)
    assert t.norm(**kwargs).tolist() == out.tolist()


def test_norm_dtype_out_and_refusals():
    x = pycoll.to_tensor([[1, 2], [3, 4]])
    assert pycoll.linalg.norm(x, p="fro", dtype="float64").item() == pytest.approx(5.477225575051661)
    out = pycoll.zeros([], "float32")
    assert pycoll.linalg.norm(pycoll.to_tensor([3.0, 4.0]), out=out).item() == 5.0 and out.item() == 5.0
    with pytest.raises(TypeError, match="floating-point"):
        pycoll.linalg.norm(x)  # paddle 3.3.1: no int64 kernel
    with pytest.raises(ValueError, match="two different axes"):
        pycoll.linalg.norm(pycoll.to_tensor(A), p="fro", axis=[0, 1, 2])  # paddle 3.3.1 refuses it too
    with pytest.raises(ValueError, match="p must be a number, 'fro' or 'nuc'"):
        pycoll.linalg.norm(pycoll.to_tensor(A), p="max")
    with pytest.raises(ValueError, match="matrix norm takes p"):
        pycoll.linalg.norm(pycoll.to_tensor(A), p=3, axis=[1, 2])


# ---- tril / triu / bmm ---------------------------------------------------------------------

def test_tril_and_triu_as_paddle():
    x = pycoll.to_tensor(np.arange(12, dtype=np.float32).reshape(3, 4), stop_gradient=False)
    # paddle 3.3.1's values and the gradient of sum(triu(x, 1) ** 2)
    assert pycoll.tril(x, 1).tolist() == [[0, 1, 0, 0], [4, 5, 6, 0], [8, 9, 10, 11]]
    assert x.triu(-1).tolist() == [[0, 1, 2, 3], [4, 5, 6, 7], [0, 9, 10, 11]]
    upper = pycoll.triu(x, 1)
    (upper * upper).sum().backward()
    assert x.grad.tolist() == [[0, 2, 4, 6], [0, 0, 12, 14], [0, 0, 0, 22]]
    assert pycoll.tril(pycoll.to_tensor(np.arange(8).reshape(2, 2, 2))).tolist() == [[[0, 0], [2, 3]], [[4, 0], [6, 7]]]
    with pytest.raises(ValueError, match="at least 2 dimensions"):
        pycoll.tril(pycoll.to_tensor([1, 2, 3]))


def test_bmm_is_a_batched_matmul_of_3d_tensors():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 4, 5))
    np.testing.assert_allclose(pycoll.bmm(pycoll.to_tensor(a), pycoll.to_tensor(b)).numpy(), a @ b, rtol=1e-12)
    gradcheck(pycoll.bmm, [a, b])
    for x, y, match in [((2, 3, 4), (3, 4, 5), "same batch size"), ((3, 4), (4, 5), "3-D"),
                        ((2, 3, 4), (2, 5, 5), "width must equal")]:  # paddle 3.3.1 refuses each
        with pytest.raises(ValueError, match=match):
            pycoll.bmm(pycoll.ones(x), pycoll.ones(y))


# ---- einsum --------------------------------------------------------------------------------

def _operand(shape, seed):
    """The operands paddle got: np.round(RandomState(seed).uniform(-2, 2, shape), 2) as float32."""
    return np.round(np.random.RandomState(seed).uniform(-2, 2, shape), 2).astype("float32")


# paddle 3.3.1: operand k of case i is _operand(shape, 10 * i + k); the gradients are of
# sum(out * (arange(out.size) + 1)). ('iij->j' is left out: paddle 3.3.1 fails on it.)
EINSUM = [  # equation, operand shapes, output shape, output, each operand's gradient
    ('ij,jk->ik', [[2, 3], [3, 4]], [2, 4], [-1.4467, -1.1602, -1.6062, -0.3878, 0.13990001, 0.7565,
        -0.15810002, 0.4792], [[-7.7300005, -10.9, 1.9100001, -16.69, -30.54, 2.5900002], [1.1, 1.48, 1.86,
        2.24, -0.68999994, -0.13999999, 0.40999985, 0.96000004, 3.31, 4.3, 5.29, 6.2799997]]),
    ('ij,jk', [[2, 3], [3, 4]], [2, 4], [0.15729988, -1.2356, 4.0681, 0.24490005, -3.2238, -3.4594, -1.1425,
        2.6275], [[-1.9699998, -6.4900002, 1.0499997, -11.769998, -16.01, 11.13], [6.09, 8.18, 10.27, 12.360001,
        -1.9699999, -3.8999999, -5.83, -7.7599998, -4.9700003, -5.5400004, -6.1100006, -6.6800003]]),
    ('ii->i', [[3, 3]], [3], [0.35, -1.86, 0.63], [[1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 3.0]]),
    ('ii', [[3, 3]], [], [2.77], [[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]]),
    ('ij,k->jk', [[2, 3], [4]], [3, 4], [1.22, 2.2204, -0.8662, 2.2326002, 1.98, 3.6036, -1.4058, 3.6234002,
        -0.37, -0.67340004, 0.2627, -0.6771], [[-9.830001, -25.59, -41.350002, -9.830001, -25.59, -41.350002],
        [-7.79, -10.62, -13.450001, -16.28]]),
    ('bij,bjk->bik', [[1, 2, 3], [4, 3, 2]], [4, 2, 2], [1.5155001, -2.3597999, -1.6897, 4.044, 0.9089999,
        1.1709001, -2.2017, -2.0397, 1.0764, 2.8063, -1.4784, -0.3548, -1.3621999, -1.7995001, 0.10779998,
        1.9871], [[-44.68, 6.6900024, -9.809999, -55.34, 6.7299995, -13.630001], [-1.25, -1.68, -2.56,
        -4.1400003, 4.9900002, 6.0, -2.9699998, -3.3999999, -8.88, -10.46, 9.030001, 10.04, -4.6899996, -5.12,
        -15.200001, -16.78, 13.07, 14.080001, -6.41, -6.84, -21.52, -23.1, 17.11, 18.119999]]),
    ('...ij,...jk->...ik', [[2, 1, 2, 3], [5, 3, 4]], [2, 5, 2, 4], [-2.8112001, 3.9579, -2.2981005, -0.6145,
        1.68, -1.1131, 2.0433002, 0.16090001, -2.657, 3.5458999, 2.5419, -1.9476999, 0.8356, 0.17809999,
        -0.51890004, 1.4647, -0.4469, 1.2007002, 0.008299828, 0.44489998, -0.6325, 0.27489996, 0.42989996,
        0.7969, 0.05130005, -1.2629002, -1.6489999, 1.0053, 0.36029997, 0.7113, -0.297, -0.01829999, 2.6306002,
        1.8496001, 2.9494, 0.89399993, -0.924, 0.7852, -0.5554, 1.0324001, -3.2399998, 5.3548, -2.1363997,
        -0.9532, -1.7008, -0.57460004, -3.1388, 0.3254, -3.1648002, 5.7932, 3.9372, -1.7595999, -0.50429976,
        -3.7589998, -1.5143, -2.4277, -0.73000026, 2.6148002, -0.56120014, 1.0908, 1.2169001, -2.7228003,
        0.51369977, -2.0777001, -0.17639995, -1.9444001, -3.004, 1.7684, -0.016799927, 0.17840016, 2.573,
        -1.2111, 3.2080002, 3.6744, 3.4872003, 2.4888, 0.4813, -3.9917998, 0.15339994, -4.0220003],
        [[-44.559998, -28.79, -282.4, -37.08, -27.469986, -334.8, 30.24002, -15.589996, -806.4, 37.72,
        -14.270004, -858.80005], [-85.13, -87.259995, -89.39, -91.51999, -45.610004, -47.780003, -49.95,
        -52.120007, 10.619997, 9.679997, 8.739998, 7.7999983, -102.17, -104.3, -106.43, -108.56, -62.97, -65.14,
        -67.31, -69.479996, 3.1000004, 2.1599998, 1.2200003, 0.2800007, -119.21, -121.340004, -123.46999,
        -125.600006, -80.33, -82.5, -84.670006, -86.84001, -4.420006, -5.3600044, -6.300005, -7.2400055,
        -136.25, -138.37999, -140.51, -142.64, -97.69, -99.86001, -102.030014, -104.2, -11.940002, -12.880001,
        -13.8200035, -14.760002, -153.29, -155.42, -157.55, -159.68, -115.05, -117.22001, -119.39, -121.56001,
        -19.46, -20.400002, -21.340004, -22.280006]]),
    ('i,j', [[2], [3]], [2, 3], [-2.1546001, -0.7695, 2.2743, -1.8774, -0.6705, 1.9817001], [[1.8300004,
        0.69000053], [7.67, 10.87, 14.070001]]),
    ('ij->', [[2, 3]], [], [3.04], [[1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]),
    ('ba', [[2, 3]], [3, 2], [0.17, 1.38, -0.89, -1.98, -0.3, -1.51], [[1.0, 3.0, 5.0, 2.0, 4.0, 6.0]]),
    ('ij,jk,kl->il', [[2, 3], [3, 4], [4, 2]], [2, 2], [3.4045649, -6.9650397, -2.3192515, 2.1530812],
        [[2.2316012, -5.7122993, 6.9802003, -0.34879684, -15.085098, 17.36], [-0.62179995, 1.834, -1.9133,
        -1.2873999, 0.92340016, -2.0160007, 8.603101, 0.2916007, 0.23020005, -0.22200012, 4.4295, -0.56980014],
        [-4.1478, -5.9868, -4.7537, -5.3544006, -1.9670999, -3.8114004, -2.8725, -4.7232]]),
    ('i,i->i', [[3], [1]], [3], [-1.1005, -0.0775, -0.75949997], [[-1.55, -3.1, -4.6499996], [2.28]]),
    ('...i->...', [[2, 3]], [2], [-1.9599998, 0.15999997], [[1.0, 1.0, 1.0, 2.0, 2.0, 2.0]]),
]
CASE_SEEDS = {"ij,jk->ik": 0, "ij,jk": 1, "ii->i": 2, "ii": 3, "ij,k->jk": 4, "bij,bjk->bik": 5,
              "...ij,...jk->...ik": 6, "i,j": 7, "ij->": 8, "ba": 10, "ij,jk,kl->il": 11, "i,i->i": 12,
              "...i->...": 13}


@pytest.mark.parametrize("equation, shapes, shape, values, grads", EINSUM, ids=[c[0] for c in EINSUM])
def test_einsum_values_and_gradients_equal_paddles(equation, shapes, shape, values, grads):
    seed = CASE_SEEDS[equation]
    ops = [pycoll.to_tensor(_operand(s, 10 * seed + k), stop_gradient=False) for k, s in enumerate(shapes)]
    out = pycoll.einsum(equation, *ops)
    assert out.shape == shape
    np.testing.assert_allclose(out.numpy().ravel(), values, rtol=1e-5, atol=1e-5)
    (out * (pycoll.arange(out.size, dtype="float32").reshape(shape) + 1)).sum().backward()
    for op, grad in zip(ops, grads):
        np.testing.assert_allclose(op.grad.numpy().ravel(), grad, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("equation, shapes", [
    ("iij->j", [(2, 2, 3)]), ("ii->i", [(3, 3)]), ("...ij,...jk->...ik", [(2, 1, 2, 3), (5, 3, 4)]),
    ("bij,bjk->bik", [(1, 2, 3), (4, 3, 2)]), ("ij,k->jk", [(2, 3), (4,)]), ("ijk,kji", [(2, 3, 2), (2, 3, 2)]),
])
def test_einsum_gradients_by_finite_differences(equation, shapes):
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal(s) for s in shapes]
    gradcheck(lambda *ops: pycoll.einsum(equation, *ops), inputs)
    np.testing.assert_allclose(pycoll.einsum(equation, *inputs).numpy(), np.einsum(equation, *inputs), rtol=1e-12)


@pytest.mark.parametrize("args, match", [
    (("ij,jk->ik", pycoll.ones([2, 3])), "2 operand terms, got 1 operands"),
    (("ij,jk->ik", pycoll.ones([2, 3], "float64"), pycoll.ones([3, 4])), "same dtype"),
    (("...i->i", pycoll.ones([2, 3])), "must have '...' too"),  # paddle 3.3.1: missing ellipsis
    (("ij->iij", pycoll.ones([2, 3])), "each output label must appear once"),
    (("ijk->i", pycoll.ones([2, 3])), "does not fit"),
    (("ij,jk->ik", pycoll.ones([2, 3]), pycoll.ones([4, 5])), "has sizes 3 and 4"),
    (("i1->i", pycoll.ones([2, 3])), "labels must be letters"),
])
def test_einsum_refuses_what_does_not_fit(args, match):
    with pytest.raises(ValueError, match=match):
        pycoll.einsum(*args)


# ---- the CUDA queries ----------------------------------------------------------------------

def test_cuda_queries(monkeypatch):
    has_gpu = importlib.util.find_spec("cupy") is not None and pycoll.device.gpu_count() > 0
    assert pycoll.is_compiled_with_cuda() == has_gpu
    # paddle's idiom picks a place that works, on a CPU machine with CuPy installed too
    before = pycoll.get_device()
    pycoll.set_device("gpu" if pycoll.is_compiled_with_cuda() else "cpu")
    assert pycoll.get_device() == ("gpu:0" if has_gpu else "cpu")
    pycoll.set_device(before)
    assert pycoll.device.is_compiled_with_cuda is pycoll.is_compiled_with_cuda
    assert pycoll.device.cuda.device_count() == pycoll.device.gpu_count()
    monkeypatch.setitem(sys.modules, "cupy", None)  # `import cupy` fails: no GPU to count
    assert pycoll.device.cuda.device_count() == 0


# ---- dropout -------------------------------------------------------------------------------

def test_dropout_takes_paddles_arguments_in_paddles_order():
    # paddle 3.3.1: dropout(x, p=0.5, axis=None, training=True, inplace=False,
    # mode='upscale_in_train', name=None); so dropout(x, 0.5, 1) drops whole columns
    pycoll.seed(7)
    x = pycoll.ones([40, 8])
    out = F.dropout(x, 0.5, 1).numpy()
    assert set(np.unique(out)) <= {0.0, 2.0} and (out == out[0]).all()  # a column is kept or dropped whole
    assert 0 < (out[0] == 0).sum() < 8
    rows = F.dropout(x, 0.5, axis=0).numpy()
    assert (rows == rows[:, :1]).all() and 0 < (rows[:, 0] == 0).sum() < 40
    cube = F.dropout(pycoll.ones([4, 3, 5]), 0.5, axis=[0, 2]).numpy()
    assert (cube == cube[:, :1, :]).all()  # shared along axis 1 only
    for bad in (-1, 2, [0, 3]):  # paddle 3.3.1 refuses negative axes too
        with pytest.raises(ValueError, match="axis must be ints in"):
            F.dropout(x, 0.5, axis=bad)


def test_dropout_modes():
    x = pycoll.to_tensor(np.arange(1, 13, dtype=np.float32).reshape(3, 4), stop_gradient=False)
    pycoll.seed(3)
    up = F.dropout(x, 0.25)
    kept = up.numpy() != 0
    np.testing.assert_allclose(up.numpy()[kept], x.numpy()[kept] / 0.75, rtol=1e-6)
    up.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), kept / 0.75, rtol=1e-6)  # the mask is the gradient
    pycoll.seed(3)
    down = F.dropout(x, 0.25, mode="downscale_in_infer")
    assert ((down.numpy() != 0) == kept).all()  # the same draw from pycoll's generator
    assert (down.numpy()[kept] == x.numpy()[kept]).all()  # training only masks
    # inference: paddle 3.3.1 gives x's values for upscale_in_train (a new tensor without an axis,
    # x itself with one) and x * (1 - p) (0.5 for p=0.5) for downscale_in_infer, with and without an axis
    same = F.dropout(x, 0.5, training=False)
    assert same is not x and same.numpy().tolist() == x.numpy().tolist()
    assert F.dropout(x, 0.5, axis=1, training=False) is x
    for axis in (None, 1):
        np.testing.assert_allclose(F.dropout(x, 0.5, axis, training=False, mode="downscale_in_infer").numpy(),
                                   x.numpy() * 0.5)
    assert F.dropout(x, 0.0, mode="downscale_in_infer", training=False) is x
    assert np.all(F.dropout(x, 1.0).numpy() == 0) and np.all(F.dropout(x, 1.0, axis=1).numpy() == 0)
    with pytest.raises(ValueError, match="mode must be"):
        F.dropout(x, 0.5, mode="x")
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\]"):
        F.dropout(x, 1.5)
    with pytest.raises(TypeError, match="p must be a number"):
        F.dropout(x, "0.5")


def test_dropout_layer():
    layer = nn.Dropout(0.3, axis=1, mode="downscale_in_infer")
    assert repr(layer) == "Dropout(p=0.3, axis=1, mode=downscale_in_infer, inplace=False)"  # paddle 3.3.1
    x = pycoll.ones([6, 4])
    out = layer(x).numpy()
    assert set(np.unique(out)) <= {0.0, 1.0} and (out == out[0]).all()
    layer.eval()
    np.testing.assert_allclose(layer(x).numpy(), 0.7, rtol=1e-6)
    assert nn.Dropout(0.5, True).inplace is True  # paddle's second argument is inplace
    with pytest.raises(ValueError, match="mode must be"):
        nn.Dropout(mode="sometimes")


# ---- optimizers ----------------------------------------------------------------------------

W0 = np.array([[0.5, -1.0, 0.25], [1.5, 0.0, -0.75]], "float32")
GRADS = [np.array([[0.3, -0.2, 0.1], [0.05, 0.4, -0.6]], "float32") * s for s in (2.0, 0.2, -0.1, 0.1, 0.7, -0.05)]

# paddle 3.3.1: W0 updated with GRADS, one step each
OPT_CASES = [  # optimizer, its arguments, the weights after the steps
    ('Adam', dict(learning_rate=0.1, beta2=0.5, amsgrad=True), [0.19631521, -0.69631517, -0.053684752,
        1.1963153, -0.30368477, -0.44631517]),
    ('Adam', dict(learning_rate=0.1, beta2=0.5), [-0.038978092, -0.4610218, -0.28897807, 0.96102196,
        -0.53897816, -0.21102186]),
    ('AdamW', dict(learning_rate=0.1, beta2=0.5, amsgrad=True, weight_decay=0.05), [0.1863833, -0.6715695,
        -0.056209814, 1.1567557, -0.29880294, -0.42897633]),
    ('Adam', dict(learning_rate=0.1, lazy_mode=True, use_multi_tensor=True), [0.12270039, -0.6227004,
        -0.12729956, 1.1227005, -0.3772996, -0.3727004]),
    # paddle 3.3.1's CPU momentum kernel ignores rescale_grad (its GPU kernel applies it: rescale_grad *
    # grad, then the L2 term), so these four are paddle's values for rescale_grad=1 and the gradients
    # (and the L1 coefficient, added before the rescale) multiplied by 0.5 by hand
    ('Momentum', dict(learning_rate=0.1, momentum=0.9, rescale_grad=0.5), [0.3290405, -0.88602704, 0.1930135,
        1.4715067, -0.22794598, -0.40808097]),
    ('Momentum', dict(learning_rate=0.1, momentum=0.9, rescale_grad=0.5, weight_decay=0.1, use_nesterov=True),
        [0.21530655, -0.6710612, 0.13770929, 1.1568719, -0.24044807, -0.23279175]),
    ('Momentum', dict(learning_rate=0.1, momentum=0.9, rescale_grad=0.5, weight_decay=L2Decay(0.1)),
        [0.25181022, -0.71960056, 0.15290263, 1.2143885, -0.21598014, -0.29672274]),
    ('Momentum', dict(learning_rate=0.1, momentum=0.9, rescale_grad=0.5, weight_decay=L1Decay(0.1)),
        [0.23989208, -0.7968786, 0.10386506, 1.3823583, -0.1622255, -0.31893256]),
]


def _param(value, dtype="float32", name=None):
    return pycoll.create_parameter(list(np.shape(value)), dtype, name=name,
                                   default_initializer=nn.initializer.Assign(np.asarray(value)))


@pytest.mark.parametrize("name, kwargs, expected", OPT_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(OPT_CASES)])
def test_optimizer_options_equal_paddles(name, kwargs, expected):
    p = _param(W0)
    opt = getattr(pycoll.optimizer, name)(parameters=[p], **kwargs)
    for g in GRADS:
        p.grad = g
        opt.step()
    # float32 throughout, in paddle's and in pycoll's order of operations: a few ulps of the steps apart
    np.testing.assert_allclose(p.numpy().ravel(), expected, rtol=2e-6, atol=2e-6)


def test_amsgrad_keeps_the_largest_second_moment_as_paddle():
    p = _param(W0, name="w")
    opt = pycoll.optimizer.Adam(learning_rate=0.1, beta2=0.5, parameters=[p], amsgrad=True, name="opt")
    for g in GRADS:
        p.grad = g
        opt.step()
    state = opt.state_dict()
    # paddle 3.3.1's keys (a name goes before the accumulator's) and its moment2_max
    assert sorted(state) == ["w_opt_beta1_pow_acc_0", "w_opt_beta2_pow_acc_0", "w_opt_moment1_0", "w_opt_moment2_0",
                             "w_opt_moment2_max_0"]
    np.testing.assert_allclose(state["w_opt_moment2_max_0"].numpy().ravel(),
                               [0.18, 0.080000006, 0.020000001, 0.0050000004, 0.32000002, 0.72], rtol=1e-6)
    fresh = pycoll.optimizer.Adam(learning_rate=0.1, beta2=0.5, parameters=[p], amsgrad=True, name="opt")
    fresh.set_state_dict(state)
    assert fresh.state_dict().keys() == state.keys()


def _adam_reference(w, grads, lr=0.1, b1=0.9, b2=0.999, eps=1e-8):
    """Adam in float32 NumPy: what a master weight goes through."""
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads, 1):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        corr = np.sqrt(1 - b2 ** t)
        w = w - (lr * corr / (1 - b1 ** t)) * m / (np.sqrt(v) + eps * corr)
    return w


def test_multi_precision_updates_a_float32_master_copy():
    # paddle 3.3.1 has no float16 optimizer kernels on the CPU, so the reference is NumPy: Adam
    # on the float32 copy, the parameter being that copy rounded to float16 after each step
    grads16 = [g.astype("float16") for g in GRADS]
    p = _param(W0, "float16", name="h")
    opt = pycoll.optimizer.Adam(learning_rate=0.1, parameters=[p], multi_precision=True)
    for g in grads16:
        p.grad = g
        opt.step()
    master = opt.state_dict()["master_weights"]["h"]
    assert master.dtype == np.float32 and p.dtype == np.float16
    expected = _adam_reference(W0.astype("float16").astype("float32"), [g.astype("float32") for g in grads16])
    np.testing.assert_allclose(master.numpy(), expected, rtol=1e-6)
    assert (p.numpy() == master.numpy().astype("float16")).all()
    # paddle 3.3.1's state keys for it: accumulators named after the master copy, float32
    state = opt.state_dict()
    assert sorted(state) == ["h_fp32_master_0_beta1_pow_acc_0", "h_fp32_master_0_beta2_pow_acc_0",
                             "h_fp32_master_0_moment1_0", "h_fp32_master_0_moment2_0", "master_weights"]
    assert state["h_fp32_master_0_moment1_0"].dtype == np.float32


def test_multi_precision_keeps_steps_float16_would_lose():
    # lr * grad = 1e-4 is below float16's spacing at 1.0: without a master copy 1.0 never moves
    for multi, expected in ((False, 1.0), (True, np.float16(1.0 - 20 * 1e-4))):
        p = _param([1.0], "float16")
        opt = pycoll.optimizer.SGD(learning_rate=1e-4, parameters=[p], multi_precision=multi)
        for _ in range(20):
            p.grad = np.ones(1, "float16")
            opt.step()
        assert p.numpy()[0] == expected


def test_bfloat16_sgd_equals_paddles_and_multi_precision_uses_float32():
    # paddle 3.3.1 (CPU, bfloat16 SGD, lr 0.01, 5 steps of [0.5, -1, 0.25]): [0.075683594,
    # -0.15136719, 0.29101562]. (With multi_precision its CPU kernel still updates in bfloat16.)
    def run(multi):
        q = pycoll.to_tensor([0.1, -0.2, 0.3], dtype="bfloat16", stop_gradient=False)
        opt = pycoll.optimizer.SGD(learning_rate=0.01, parameters=[q], multi_precision=multi)
        for _ in range(5):
            q.grad = pycoll.to_tensor([0.5, -1.0, 0.25], dtype="bfloat16")
            opt.step()
        return q.numpy().astype("float32"), opt

    plain, _ = run(False)
    assert (plain == np.array([0.075683594, -0.15136719, 0.29101562], "float32")).all()
    mastered, opt = run(True)
    reference = pycoll.to_tensor([0.1, -0.2, 0.3], dtype="bfloat16").numpy().astype("float32")
    for _ in range(5):
        reference = reference - np.float32(0.01) * np.array([0.5, -1.0, 0.25], "float32")
    master = opt.state_dict()["master_weights"]["param_0"].numpy()
    np.testing.assert_allclose(master, reference, rtol=1e-6)
    assert (mastered == pycoll.to_tensor(master, dtype="bfloat16").numpy().astype("float32")).all()


def test_multi_precision_state_round_trip(tmp_path):
    def model():
        return _param(W0, "float16", name="h"), _param(W0[0], "float32", name="f")

    def optimizer(params):
        return pycoll.optimizer.Momentum(learning_rate=0.1, parameters=list(params), multi_precision=True)

    whole = model()
    opt = optimizer(whole)
    resumed = model()
    for i, g in enumerate(GRADS):
        for p in whole:
            p.grad = g.astype(p.dtype).reshape(p.shape) if p.ndim == 2 else g[0].astype(p.dtype)
        opt.step()
        if i == 2:  # a copy of the model and its optimizer, resumed from a saved state
            with pycoll.no_grad():
                for src, dst in zip(whole, resumed):
                    dst.set_value(src)
            pycoll.save(opt.state_dict(), tmp_path / "opt.pdopt")
            opt2 = optimizer(resumed)
            opt2.set_state_dict(pycoll.load(tmp_path / "opt.pdopt"))
        elif i > 2:
            for p, q in zip(whole, resumed):
                q.grad = p.grad
            opt2.step()
    assert sorted(opt.state_dict()) == ["f_velocity_0", "h_fp32_master_0_velocity_0", "master_weights"]
    for p, q in zip(whole, resumed):
        assert (p.numpy() == q.numpy()).all()
    assert (opt.state_dict()["master_weights"]["h"].numpy() == opt2.state_dict()["master_weights"]["h"].numpy()).all()


def test_paddles_other_arguments_are_accepted():
    p = _param(W0)
    for opt in (pycoll.optimizer.SGD(0.1, [p], None, None, False, "sgd"),
                pycoll.optimizer.Momentum(0.1, 0.9, [p], False, None, None, False, 1.0, False, "m"),
                pycoll.optimizer.Adam(0.1, 0.9, 0.999, 1e-8, [p], None, None, True, False, True, False, "a"),
                pycoll.optimizer.AdamW(0.1, 0.9, 0.999, 1e-8, [p], 0.01, False, None, None, None, True, False,
                                       False, "aw")):
        p.grad = GRADS[0]
        opt.step()
    with pytest.raises(ValueError, match="use_lowprecision_moment"):
        pycoll.optimizer.AdamW(parameters=[p], use_lowprecision_moment=True)


def test_adamw_lr_ratio_scales_each_parameters_step_and_decay():
    """paddle's GPU kernel: lr * lr_ratio(param) for both; the parameter given a ratio of 0.5
    moves as one under half the learning rate, the other as under the whole."""
    a, b, ref_a, ref_b = (_param(W0) for _ in range(4))
    ratio = {id(a): 0.5, id(b): 1.0}
    opt = pycoll.optimizer.AdamW(0.1, parameters=[a, b], weight_decay=0.3, lr_ratio=lambda p: ratio[id(p)])
    half = pycoll.optimizer.AdamW(0.05, parameters=[ref_a], weight_decay=0.3)
    whole = pycoll.optimizer.AdamW(0.1, parameters=[ref_b], weight_decay=0.3)
    for g in GRADS:
        for p in (a, b, ref_a, ref_b):
            p.grad = g
        for o in (opt, half, whole):
            o.step()
    np.testing.assert_array_equal(a.numpy(), ref_a.numpy())
    np.testing.assert_array_equal(b.numpy(), ref_b.numpy())
    assert not np.array_equal(a.numpy(), b.numpy())
    with pytest.raises(TypeError, match="lr_ratio must be a function of a parameter"):
        pycoll.optimizer.AdamW(parameters=[a], lr_ratio=0.5)


# ---- save's protocol -----------------------------------------------------------------------

def test_save_takes_paddles_protocol(tmp_path):
    path = tmp_path / "t.pdparams"
    for protocol in (2, 3, 4):
        pycoll.save({"w": pycoll.ones([2])}, path, protocol=protocol)
        assert pycoll.load(path)["w"].tolist() == [1.0, 1.0]
    for bad in (1, 5):  # paddle 3.3.1: "Expected 1<'protocol'<5"
        with pytest.raises(ValueError, match="protocol must be 2, 3 or 4"):
            pycoll.save({}, path, protocol=bad)
    with pytest.raises(ValueError, match="protocol must be an int"):
        pycoll.save({}, path, protocol="4")  # paddle 3.3.1: ValueError too
    with pytest.warns(UserWarning, match="'pickle_protocol' is a deprecated argument"):
        pycoll.save({}, path, pickle_protocol=3)
    with pytest.raises(ValueError, match="protocol must be 2, 3 or 4"), pytest.warns(UserWarning):
        pycoll.save({}, path, pickle_protocol=9)
    with pytest.raises(ValueError, match="not supported"):
        pycoll.save({}, path, compress=True)
    with pytest.raises(ValueError, match="use_binary_format=True asks for another file format"):
        pycoll.save({}, path, use_binary_format=True)
    with pytest.raises(TypeError, match="use_binary_format must be a bool"):
        pycoll.save({}, path, use_binary_format=1)


# ---- BatchSampler's shuffle ----------------------------------------------------------------

class _Numbers(Dataset):
    def __len__(self):
        return 7

    def __getitem__(self, i):
        return np.array([i], "int64")


def test_batch_sampler_shuffles_as_paddle():
    # paddle 3.3.1 after np.random.seed(0): [[2, 8, 4, 9, 1], [6, 7, 3, 0, 5]]
    np.random.seed(0)
    sampler = BatchSampler(list(range(10)), shuffle=True, batch_size=5)
    assert list(sampler) == [[2, 8, 4, 9, 1], [6, 7, 3, 0, 5]]
    assert isinstance(sampler.sampler, pycoll.io.RandomSampler) and len(sampler) == 2
    assert isinstance(BatchSampler(list(range(3))).sampler, pycoll.io.SequenceSampler)
    # and so DataLoader(shuffle=True): paddle 3.3.1 after np.random.seed(3), 7 samples, batches of 3
    for drop_last, expected in ((False, [[4, 6, 5], [3, 1, 0], [2]]), (True, [[4, 6, 5], [3, 1, 0]])):
        np.random.seed(3)
        got = [b.numpy().ravel().tolist() for b in DataLoader(_Numbers(), batch_size=3, shuffle=True,
                                                             drop_last=drop_last)]
        assert got == expected
    pycoll.seed(1)  # pycoll's generator plays no part
    np.random.seed(0)
    first = list(BatchSampler(list(range(10)), shuffle=True, batch_size=5))
    pycoll.seed(2)
    np.random.seed(0)
    assert list(BatchSampler(list(range(10)), shuffle=True, batch_size=5)) == first


def test_distributed_batch_sampler_is_unaffected():
    # paddle 3.3.1: the permutation comes from RandomState(epoch), whatever np.random.seed says
    np.random.seed(0)
    got = [list(DistributedBatchSampler(list(range(11)), batch_size=2, num_replicas=2, rank=r, shuffle=True))
           for r in (0, 1)]
    assert got == [[[6, 0], [2, 8], [9, 3]], [[4, 10], [1, 7], [0, 5]]]
    s = DistributedBatchSampler(list(range(11)), batch_size=2, num_replicas=2, rank=0, shuffle=True)
    s.set_epoch(3)
    assert list(s) == [[5, 4], [0, 6], [3, 9]]


def test_einsum_over_a_label_of_size_0_sums_nothing_into_zeros_as_paddle():
    a, b = pycoll.zeros([2, 0]), pycoll.zeros([0, 3])
    a.stop_gradient = b.stop_gradient = False
    out = pycoll.einsum("ij,jk->ik", a, b)
    assert out.shape == [2, 3] and not out.numpy().any()
    out.sum().backward()
    assert a.grad.shape == [2, 0] and b.grad.shape == [0, 3]


def test_a_complex_einsum_to_0d_backpropagates_as_paddle():
    a = pycoll.to_tensor(np.array([[1 + 2j, 3 - 1j]], "complex64"), stop_gradient=False)
    pycoll.real(pycoll.einsum("ij,ij->", a, a)).backward()
    np.testing.assert_allclose(a.grad.numpy(), [[2 - 4j, 6 + 2j]])  # paddle 3.3.1's


def test_gather_scatter_and_index_select_take_paddle_3_3s_torch_form():
    """(input, dim, index, ...): paddle 3.3.1 dispatches on an int second argument or dim=."""
    x = pycoll.to_tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    idx = pycoll.to_tensor([[0, 2], [1, 0]])
    for got in (pycoll.gather(x, 1, idx), pycoll.gather(input=x, dim=1, index=idx), x.gather(1, idx)):
        assert got.tolist() == [[1.0, 3.0], [5.0, 4.0]]
    assert pycoll.gather(x, pycoll.to_tensor([1]), 0).tolist() == [[4.0, 5.0, 6.0]]  # paddle's own form
    assert pycoll.scatter(x, 1, idx, pycoll.full([2, 2], 9.0)).tolist() == [[9.0, 2.0, 9.0], [9.0, 9.0, 6.0]]
    assert pycoll.scatter(x, 1, idx, value=2.0).tolist() == [[2.0, 2.0, 2.0], [2.0, 2.0, 6.0]]
    assert pycoll.scatter(x, dim=1, index=idx, src=pycoll.full([2, 2], 2.0), reduce="multiply").tolist() == \
        [[2.0, 2.0, 6.0], [8.0, 10.0, 6.0]]
    assert pycoll.index_select(x, 1, pycoll.to_tensor([2, 0])).tolist() == [[3.0, 1.0], [6.0, 4.0]]
    with pytest.raises(TypeError, match="give src or value"):
        pycoll.scatter(x, 1, idx)
    # scatter_ (in place) and index_add(_) take the same torch forms
    for call in (lambda t: t.scatter_(1, idx, pycoll.full([2, 2], 2.0), reduce="add"),
                 lambda t: t.scatter_(dim=1, index=idx, src=pycoll.full([2, 2], 2.0), reduce="add")):
        t = x.clone()
        assert call(t) is t and t.tolist() == [[3.0, 2.0, 5.0], [6.0, 7.0, 6.0]]
    src = pycoll.arange(1, 10, dtype="float32").reshape([3, 3])
    src.stop_gradient = False
    small = pycoll.scatter(pycoll.zeros([3, 3]), 0, pycoll.to_tensor([[1, 2]]), src)  # an index smaller than src
    assert small.tolist() == [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]  # torch's: src's block it covers
    small.sum().backward()
    assert src.grad.tolist() == [[1.0, 1.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    t = x.clone()
    t.scatter_(1, idx, value=0.0)
    assert t.tolist() == [[0.0, 2.0, 0.0], [0.0, 0.0, 6.0]]
    rows, source = pycoll.to_tensor([0, 1]), pycoll.ones([2, 3])
    for got in (pycoll.index_add(x, 0, rows, source), x.index_add(0, rows, source, alpha=1),
                pycoll.index_add(x, rows, 0, source), pycoll.index_add(input=x, dim=0, index=rows, source=source)):
        assert got.tolist() == [[2.0, 3.0, 4.0], [5.0, 6.0, 7.0]]
    t = x.clone()
    t.index_add_(0, rows, source, alpha=2)
    assert t.tolist() == [[3.0, 4.0, 5.0], [6.0, 7.0, 8.0]]


def test_group_norm_takes_torchs_positional_order():
    """paddle 3.3.1: F.group_norm(input, num_groups, weight, bias, eps) when the third argument is no number."""
    img = pycoll.to_tensor(np.random.RandomState(0).randn(2, 4, 3, 3).astype("float32"))
    w, b = pycoll.to_tensor([1.0, 2.0, 3.0, 4.0]), pycoll.to_tensor([0.0, 1.0, 0.0, 1.0])
    want = F.group_norm(img, 2, 1e-3, w, b).numpy()
    for got in (F.group_norm(img, 2, w, b, 1e-3), F.group_norm(input=img, num_groups=2, eps=1e-3, weight=w, bias=b)):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(F.group_norm(img, 2, w, b).numpy(), F.group_norm(img, 2, 1e-5, w, b).numpy(), rtol=1e-6)
    with pytest.raises(TypeError, match="multiple values for argument 'weight'"):
        F.group_norm(img, 2, w, weight=w)


def test_layers_answer_paddle_3_3s_torch_style_names():
    net = pycoll.nn.Sequential(pycoll.nn.Linear(2, 3), pycoll.nn.ReLU(), pycoll.nn.Linear(3, 1))
    assert [name for name, _ in net.named_modules()] == ["", "0", "1", "2"] and len(list(net.modules())) == 4
    state = net.state_dict()
    assert net.load_state_dict(state) == ([], [])
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "0.bias"'):
        net.load_state_dict({"0.weight": state["0.weight"]})
    assert net.get_sublayer("0") is net[0] and net.get_parameter("2.bias") is net[2].bias
    with pytest.raises(AttributeError, match="has no attribute `9`"):
        net.get_sublayer("9")
    net.set_sublayer("1", pycoll.nn.Tanh())
    net.add_module("last", pycoll.nn.Identity())
    assert type(net[1]).__name__ == "Tanh" and "last" in dict(net.named_children())
    net.register_buffer("steps", pycoll.zeros([1]))
    assert net.get_buffer("steps") is net.steps
    seen = []
    handle = net.register_forward_hook(lambda layer, inputs, output: seen.append(output.shape))
    net(pycoll.ones([4, 2])).sum().backward()
    handle.remove()
    assert seen == [[4, 1]] and net[0].weight.grad is not None
    net.zero_grad()
    assert net[0].weight.grad is None  # set_to_none, paddle 3.3.1's default
    assert net.requires_grad_(False) is net and net[0].weight.stop_gradient
    assert net.half()[0].weight.dtype == pycoll.float16 and net.cpu() is net


def test_a_misfit_value_or_updates_is_refused_naming_it():
    x = pycoll.zeros([4, 4])
    for accumulate in (False, True):
        with pytest.raises(ValueError, match=r"index_put: value of shape \[3\] does not broadcast to x\[indices\], "
                                             r"of shape \[2, 4\]"):
            pycoll.index_put(x, (pycoll.to_tensor([0, 1]),), pycoll.ones([3]), accumulate=accumulate)
    with pytest.raises(ValueError, match=r"scatter_nd_add: updates must have shape .* = \[2, 4\], got \[2, 3\]"):
        pycoll.scatter_nd_add(x, pycoll.to_tensor([[0], [1]]), pycoll.ones([2, 3]))
    for accumulate in (False, True):
        with pytest.raises(IndexError, match=r"index_put: indices address a place outside x \(shape \[4, 4\]\)"):
            pycoll.index_put(x, (pycoll.to_tensor([5]),), pycoll.ones([4]), accumulate=accumulate)


def test_paddle_tensor_is_a_namespace_of_the_ops_with_paddles_submodules():
    import pycoll.tensor.manipulation as manipulation
    from pycoll.tensor.creation import to_tensor
    from pycoll.tensor.linalg import qr

    assert pycoll.tensor.matmul is pycoll.matmul and pycoll.tensor.math.add is pycoll.add
    assert manipulation.reshape is pycoll.reshape and to_tensor is pycoll.to_tensor and qr is pycoll.linalg.qr
    x = pycoll.to_tensor([1.5, -2.0])
    assert pycoll.tensor.math.clip_(x, -1.0, 1.0) is x and x.numpy().tolist() == [1.0, -1.0]  # a method, tensor first
    assert pycoll.tensor.Tensor is pycoll.Tensor
    for module, name in ((pycoll.tensor, "no_such_op"), (pycoll.tensor.math, "Tensor"), (pycoll.tensor, "_private")):
        with pytest.raises(AttributeError, match=f"module '{module.__name__}' has no attribute '{name}'"):
            getattr(module, name)


def test_incubate_lbfgs_is_the_optimizer_under_its_deprecated_name():
    from pycoll.incubate.optimizer import LBFGS

    w = pycoll.to_tensor(np.array([3.0, -2.0], "float32"), stop_gradient=False)
    with pytest.warns(DeprecationWarning, match="use paddle.optimizer.LBFGS"):
        optimizer = LBFGS(learning_rate=1, max_iter=20, parameters=[w])
    assert isinstance(optimizer, pycoll.optimizer.LBFGS)

    def closure():
        optimizer.clear_grad()
        loss = ((w - 1) ** 2).sum()
        loss.backward()
        return loss
    optimizer.step(closure)
    np.testing.assert_allclose(w.numpy(), [1.0, 1.0], atol=1e-5)


class _WithBuffers(nn.Layer):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 3)
        self.register_buffer("scratch", pycoll.ones([2]), persistable=False)
        self.register_buffer("steps", pycoll.to_tensor([1, 2]))


def test_layer_s_remaining_torch_names_and_state_dict_forms_as_paddles():
    model = _WithBuffers()
    # paddle 3.3.1: ['steps', 'fc.weight', 'fc.bias'] and, with the non-persistable one, 'scratch' first
    assert list(model.state_dict()) == ["steps", "fc.weight", "fc.bias"]
    assert list(model.to_static_state_dict()) == ["scratch", "steps", "fc.weight", "fc.bias"]
    detached = model.state_dict(keep_vars=False)["fc.weight"]
    assert detached.stop_gradient and not model.fc.weight.stop_gradient
    assert np.shares_memory(detached.numpy(), model.fc.weight.numpy())
    assert model.get_submodule("fc") is model.fc and model.get_submodule("") is model
    model.register_parameter("extra", pycoll.create_parameter([1], "float32"))
    assert "extra" in model.state_dict()
    assert model.type("float64") is model
    assert (model.fc.weight.dtype, model.steps.dtype) == (pycoll.float64, pycoll.float64)  # integer buffers too
    model.type(pycoll.int32)
    assert model.fc.weight.dtype == pycoll.int32
    with pytest.raises(ValueError, match="dst_type='float128'"):
        model.type("float128")
    with pytest.raises(ValueError, match="Layer shouldn't implement backward"):
        model.backward()
    with pytest.raises(RuntimeError, match="override get_extra_state"):
        model.get_extra_state()
    with pytest.raises(RuntimeError, match="no XPU place"):
        model.xpu()


def test_sdpa_kernel_allows_backends_for_a_block_and_checks_them_as_paddles():
    from pycoll.nn.attention import SDPBackend, sdpa_kernel
    from pycoll.nn.functional.flash_attention import sdpa_kernel as same

    assert same is sdpa_kernel and [b.value for b in SDPBackend] == [-1, 0, 1, 2]
    q = pycoll.to_tensor(np.random.RandomState(0).rand(2, 4, 2, 8).astype("float32"))
    plain = F.scaled_dot_product_attention(q, q, q).numpy()
    for backends in (SDPBackend.FLASH_ATTENTION, [SDPBackend.MATH, SDPBackend.EFFICIENT_ATTENTION]):
        with sdpa_kernel(backends, set_priority=True) as context:
            assert context == {}
            np.testing.assert_array_equal(F.scaled_dot_product_attention(q, q, q).numpy(), plain)
    for bad, error, words in (([], ValueError, "at least one backend"), ("math", TypeError, "got str"),
                              ([SDPBackend.MATH, 0], TypeError, "every backend must be an SDPBackend, got 0")):
        with pytest.raises(error, match=words):
            with sdpa_kernel(bad):
                pass


def _cube(differentiable_once):
    from pycoll.autograd.py_layer import PyLayer, once_differentiable

    def backward(ctx, g):
        x, = ctx.saved_tensor()
        return 3 * x * x * g

    class Cube(PyLayer):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3
    Cube.backward = staticmethod(once_differentiable(backward) if differentiable_once else backward)
    return Cube


@pytest.mark.parametrize("once", [True, False])
def test_once_differentiable_stops_a_pylayer_s_higher_order_gradient_as_paddles(once):
    x = pycoll.to_tensor([2.0], stop_gradient=False)
    first, = pycoll.grad(_cube(once).apply(x), x, create_graph=True)
    assert first.numpy().tolist() == [12.0]
    second, = pycoll.grad(first, x, allow_unused=True)
    # paddle 3.3.1: None through once_differentiable, 6 x g = 12 without it
    assert second is None if once else second.numpy().tolist() == [12.0]


def test_paddle_tensor_s_arrays_and_fill_constant_as_its_dynamic_mode_has_them():
    from pycoll.tensor.array import array_length, array_read, array_write, create_array

    array = create_array("float32")
    assert array == []
    one, i = pycoll.ones([2]), pycoll.zeros([1], dtype="int64")
    assert array_write(one, i, array) is array and array_length(array) == 1 and array_read(array, i) is one
    two = pycoll.full([2], 2.0)
    array_write(two, pycoll.to_tensor([1]), array)  # the length appends
    array_write(two, i, array)  # an index inside replaces
    assert [t.numpy().tolist() for t in array] == [[2.0, 2.0], [2.0, 2.0]]
    with pytest.raises(ValueError, match=r"array_write: i=5 must be in \[0, 2\]"):
        array_write(one, pycoll.to_tensor([5]), array)
    with pytest.raises(TypeError, match=r"create_array: initialized_list\[0\] must be a Tensor"):
        create_array("float32", [1.0])
    assert pycoll.tensor.fill_constant([2, 2], "int32", 3).numpy().tolist() == [[3, 3], [3, 3]]


def test_private_storage_calls_answer_as_paddles():
    """paddle 3.3.1's answers: an empty tensor, or one whose memory ``_clear_data`` let go, is
    not initialized; ``_copy_to`` copies even to the tensor's own place; ``_share_buffer_to``
    shares the memory; ``_md5sum`` is the MD5 of the elements' bytes (paddle's for float32 [1, 2])."""
    assert not pycoll.to_tensor([])._is_initialized() and pycoll.to_tensor([1.0])._is_initialized()
    weight = pycoll.nn.Linear(2, 3).weight
    assert weight._numel() == 6
    weight._clear_data()
    assert not weight._is_initialized()
    x = pycoll.to_tensor([1.0, 2.0])
    copy = x._copy_to(pycoll.CPUPlace(), True)
    copy[0] = 5.0
    assert x.numpy().tolist() == [1.0, 2.0] and copy.stop_gradient
    other = pycoll.to_tensor([0.0, 0.0, 0.0])
    x._share_buffer_to(other)
    other[0] = 9.0
    assert x.numpy().tolist() == [9.0, 2.0] and x._is_shared_buffer_with(other)
    assert pycoll.to_tensor([1.0, 2.0])._md5sum() == "057a7f5ab69cb695657046b18832c330"
