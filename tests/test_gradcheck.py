"""Every differentiable op against central finite differences, in float64."""
import numpy as np
import pytest

import pycoll
import pycoll.nn.functional as F
from pycoll.autograd import PyLayer

EPS = 1e-6


def _rand(*shape, low=None, seed=None):
    rng = np.random.default_rng(seed if seed is not None else hash(shape) % 2**32)
    a = rng.standard_normal(shape)
    if low is not None:  # keep away from kinks / domain edges
        a = np.abs(a) + low
    return a


_BCE_LABEL = pycoll.to_tensor(np.array([[0.0, 1.0, 1.0], [1.0, 0.3, 0.0]]))
_SOFT = np.array([[0.1, 0.2, 0.3, 0.4], [0.25, 0.25, 0.25, 0.25], [0.7, 0.0, 0.2, 0.1]])


def central_differences(f, inputs, i, eps):
    """d f(inputs) / d inputs[i] by central differences, element by element (f: arrays -> float)."""
    numeric = np.zeros_like(inputs[i])
    for idx in np.ndindex(inputs[i].shape):
        plus = [x.copy() for x in inputs]
        minus = [x.copy() for x in inputs]
        plus[i][idx] += eps
        minus[i][idx] -= eps
        numeric[idx] = (f(plus) - f(minus)) / (2 * eps)
    return numeric


def gradcheck(fn, inputs, atol=1e-6, rtol=1e-5):
    """Compare analytic gradients of sum(fn(*inputs) * w), for a random w, with central differences."""
    tensors = [pycoll.to_tensor(a, stop_gradient=False) for a in inputs]
    out = fn(*tensors)
    w = np.random.default_rng(0).standard_normal(out.shape)
    (out * pycoll.to_tensor(w)).sum().backward()

    def f(arrays):
        with pycoll.no_grad():
            return float((fn(*[pycoll.to_tensor(a) for a in arrays]).numpy() * w).sum())

    for i, t in enumerate(tensors):
        numeric = central_differences(f, inputs, i, EPS)
        assert t.grad is not None, f"input {i} got no gradient"
        assert t.grad.dtype == np.float64
        np.testing.assert_allclose(t.grad.numpy(), numeric, atol=atol, rtol=rtol,
                                   err_msg=f"gradient of input {i}")


CASES = {
    # elementwise arithmetic, with broadcasting on either side
    "add": (lambda x, y: x + y, [_rand(3, 4), _rand(3, 4)]),
    "add_broadcast_row": (lambda x, y: x + y, [_rand(3, 4), _rand(4)]),
    "add_broadcast_both": (lambda x, y: x + y, [_rand(3, 1), _rand(1, 4)]),
    "add_scalar": (lambda x: x + 2.5, [_rand(2, 3)]),
    "radd_scalar": (lambda x: 2.5 + x, [_rand(2, 3)]),
    "sub_broadcast": (lambda x, y: x - y, [_rand(2, 3, 4), _rand(3, 1)]),
    "rsub_scalar": (lambda x: 1.0 - x, [_rand(3)]),
    "mul_broadcast": (lambda x, y: x * y, [_rand(2, 3), _rand(2, 1)]),
    "mul_scalar": (lambda x: x * -3.0, [_rand(4)]),
    "rmul_array": (lambda x: np.arange(4.0) * x, [_rand(3, 4)]),
    "div": (lambda x, y: x / y, [_rand(3, 4), _rand(4, low=0.5)]),
    "rdiv_scalar": (lambda x: 2.0 / x, [_rand(3, low=0.5)]),
    "pow_scalar": (lambda x: x ** 3, [_rand(2, 3)]),
    "pow_fractional": (lambda x: x ** 1.5, [_rand(2, 3, low=0.5)]),
    "rpow_scalar": (lambda x: 2.0 ** x, [_rand(2, 3)]),
    "pow_tensors": (lambda x, y: x ** y, [_rand(2, 3, low=0.5), _rand(3)]),
    "neg": (lambda x: -x, [_rand(2, 2)]),
    # matmul in every shape combination
    "matmul_2d": (lambda x, y: x @ y, [_rand(3, 4), _rand(4, 5)]),
    "matmul_1d_2d": (lambda x, y: pycoll.matmul(x, y), [_rand(4), _rand(4, 2)]),
    "matmul_2d_1d": (lambda x, y: x @ y, [_rand(3, 4), _rand(4)]),
    "matmul_1d_1d": (lambda x, y: x @ y, [_rand(4), _rand(4)]),
    "matmul_batched": (lambda x, y: x @ y, [_rand(2, 3, 4), _rand(2, 4, 2)]),
    "matmul_batch_broadcast": (lambda x, y: x @ y, [_rand(2, 3, 4), _rand(4, 2)]),
    "matmul_transposed": (lambda x, y: pycoll.matmul(x, y, transpose_x=True, transpose_y=True),
                          [_rand(4, 3), _rand(2, 4)]),
    # reductions
    "sum_all": (lambda x: x.sum(), [_rand(3, 4)]),
    "sum_axis": (lambda x: pycoll.sum(x, axis=1), [_rand(3, 4)]),
    "sum_axes_keepdim": (lambda x: x.sum(axis=[0, 2], keepdim=True), [_rand(2, 3, 4)]),
    "mean_all": (lambda x: x.mean(), [_rand(3, 4)]),
    "mean_axis_keepdim": (lambda x: pycoll.mean(x, axis=-1, keepdim=True), [_rand(3, 4)]),
    "max_all": (lambda x: x.max(), [_rand(3, 4)]),
    "max_axis": (lambda x: pycoll.max(x, axis=0), [_rand(3, 4)]),
    "min_axis_keepdim": (lambda x: pycoll.min(x, axis=1, keepdim=True), [_rand(3, 4)]),
    # shape ops and indexing
    "reshape": (lambda x: x.reshape([4, -1]) * np.arange(3.0), [_rand(2, 6)]),
    "reshape_zero": (lambda x: pycoll.reshape(x, [0, 2, -1]), [_rand(3, 4)]),
    "transpose": (lambda x: pycoll.transpose(x, [2, 0, 1]), [_rand(2, 3, 4)]),
    "T": (lambda x: x.T @ x, [_rand(3, 2)]),
    "flatten": (lambda x: x.flatten(1), [_rand(2, 3, 2)]),
    "unsqueeze_squeeze": (lambda x: pycoll.squeeze(x.unsqueeze(0) * 2.0, 0), [_rand(3, 2)]),
    "getitem_slice": (lambda x: x[1:, ::2], [_rand(3, 4)]),
    "getitem_int": (lambda x: x[1], [_rand(3, 4)]),
    "getitem_int_array_repeats": (lambda x: x[np.array([0, 2, 0, 0])], [_rand(3, 4)]),
    "getitem_mixed": (lambda x: x[[1, 1, 0], 1:3], [_rand(3, 4)]),
    "getitem_bool": (lambda x: x[np.array([True, False, True])], [_rand(3, 2)]),
    "getitem_tensor_index": (lambda x: x[pycoll.to_tensor([2, 2])], [_rand(3, 2)]),
    "concat": (lambda x, y: pycoll.concat([x, y], axis=1), [_rand(2, 3), _rand(2, 2)]),
    "stack": (lambda x, y: pycoll.stack([x, y], axis=1), [_rand(2, 3), _rand(2, 3)]),
    "clone": (lambda x: x.clone() * x, [_rand(3)]),
    "cpu": (lambda x: x.cpu() * 2.0, [_rand(3)]),
    "cast_same": (lambda x: x.astype("float64") * x, [_rand(3)]),
    # unary math
    "tanh": (pycoll.tanh, [_rand(3, 4)]),
    "exp": (pycoll.exp, [_rand(3, 4)]),
    "log": (pycoll.log, [_rand(3, 4, low=0.2)]),
    "sqrt": (pycoll.sqrt, [_rand(3, 4, low=0.2)]),
    "square": (pycoll.square, [_rand(3, 4)]),
    "abs": (pycoll.abs, [_rand(3, 4, low=0.1) * np.array([1, -1, 1, -1])]),
    "relu": (pycoll.relu, [_rand(3, 4, low=0.1) * np.array([1, -1, 1, -1])]),
    "sigmoid": (pycoll.sigmoid, [_rand(3, 4)]),
    "clip": (lambda x: pycoll.clip(x, -0.5, 0.5), [np.array([-1.0, -0.3, 0.1, 0.4, 0.9])]),
    # nn.functional
    "softmax": (lambda x: F.softmax(x), [_rand(3, 5)]),
    "softmax_axis0": (lambda x: F.softmax(x, axis=0), [_rand(3, 5)]),
    "log_softmax": (lambda x: F.log_softmax(x, axis=-1), [_rand(2, 3, 4)]),
    "gelu_tanh": (lambda x: F.gelu(x, approximate=True), [_rand(3, 4)]),
    "linear": (lambda x, w, b: F.linear(x, w, b), [_rand(4, 3), _rand(3, 2), _rand(2)]),
    "linear_3d_no_bias": (lambda x, w: F.linear(x, w), [_rand(2, 4, 3), _rand(3, 2)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, 4, w, b), [_rand(3, 4), _rand(4), _rand(4)]),
    "layer_norm_2d_shape": (lambda x, w, b: F.layer_norm(x, [3, 2], w, b),
                            [_rand(2, 3, 2), _rand(6), _rand(6)]),
    "layer_norm_plain": (lambda x: F.layer_norm(x, [4]), [_rand(2, 4)]),
    "mse_mean": (lambda x, y: F.mse_loss(x, y), [_rand(4, 2), _rand(4, 2)]),
    "mse_sum": (lambda x, y: F.mse_loss(x, y, reduction="sum"), [_rand(4, 2), _rand(4, 2)]),
    "mse_none": (lambda x, y: F.mse_loss(x, y, reduction="none"), [_rand(4, 2), _rand(4, 2)]),
    "l1_input_and_label": (lambda x, y: F.l1_loss(x, y, reduction="none"), [_rand(3, 4), _rand(3, 4) + 5]),
    "smooth_l1": (lambda x, y: F.smooth_l1_loss(x, y, delta=0.7),
                  [np.array([-2.0, -0.3, 0.2, 0.5, 1.5, 3.0]), np.zeros(6)]),
    "smooth_l1_not_huber_label": (lambda x, y: F.smooth_l1_loss(x, y, "sum", 0.5, False),
                                  [np.zeros(5), np.array([-1.0, -0.2, 0.1, 0.3, 2.0])]),
    "bce_and_weight": (lambda x, w: F.binary_cross_entropy(x, _BCE_LABEL, weight=w),
                       [np.array([[0.2, 0.7, 0.5], [0.9, 0.1, 0.4]]), _rand(3, low=0.1)]),
    "bce_logits_pos_weight": (lambda x, w: F.binary_cross_entropy_with_logits(
        x, _BCE_LABEL, weight=w, pos_weight=pycoll.to_tensor(np.array([2.0, 0.5, 1.5])), reduction="sum"),
        [_rand(2, 3), _rand(2, 3)]),
    "kl_div": (lambda x: F.kl_div(x, pycoll.to_tensor(np.array([[0.2, 0.0, 0.8], [0.5, 0.25, 0.25]]))),
               [_rand(2, 3)]),
    "kl_div_log_target_batchmean": (lambda x: F.kl_div(x, pycoll.to_tensor(_rand(2, 3)), "batchmean", True),
                                    [_rand(2, 3)]),
    "nll_weighted_ignore": (lambda x: F.nll_loss(x, pycoll.to_tensor(np.array([0, 2, -100, 1])),
                                                 weight=pycoll.to_tensor(np.array([0.5, 2.0, 1.0]))),
                            [_rand(4, 3)]),
    "nll_spatial": (lambda x: F.nll_loss(x, pycoll.to_tensor(np.array([[0, 2], [1, 1]])), reduction="none"),
                    [_rand(2, 3, 2)]),
    "ce_soft": (lambda x: F.cross_entropy(x, pycoll.to_tensor(_SOFT), soft_label=True), [_rand(3, 4)]),
    "ce_soft_weight_none": (lambda x: F.cross_entropy(x, pycoll.to_tensor(_SOFT), soft_label=True,
                                                      weight=pycoll.to_tensor(np.array([1.0, 2.0, 0.5, 1.5])),
                                                      reduction="none"), [_rand(3, 4)]),
    "ce_weight_ignore_positive": (lambda x: F.cross_entropy(
        x, pycoll.to_tensor(np.array([0, 3, 1])), weight=pycoll.to_tensor(np.array([1.0, 2.0, 0.5, 1.5])),
        ignore_index=1), [_rand(3, 4)]),
    "ce_label_smoothing": (lambda x: F.cross_entropy(x, pycoll.to_tensor(np.array([0, 3, 1])),
                                                     label_smoothing=0.1), [_rand(3, 4)]),
    "ce_axis1": (lambda x: F.cross_entropy(x, pycoll.to_tensor(np.array([[0, 2], [1, 1]])), axis=1,
                                           reduction="none"), [_rand(2, 3, 2)]),
    "ce_no_softmax": (lambda x: F.cross_entropy(x, pycoll.to_tensor(np.array([0, 2])), use_softmax=False),
                      [np.array([[0.2, 0.3, 0.5], [0.6, 0.1, 0.3]])]),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), [_rand(3, 4, low=0.1) * np.array([1, -1, 1, -1])]),
    "silu": (F.silu, [_rand(3, 4)]),
    "elu": (lambda x: F.elu(x, 0.5), [_rand(3, 4, low=0.1) * np.array([1, -1, 1, -1])]),
    "softplus": (lambda x: F.softplus(x, beta=2.0, threshold=3.0), [np.array([-3.0, -0.5, 0.4, 1.0, 2.5])]),
    "hardswish": (F.hardswish, [np.array([-4.0, -2.5, -1.0, 0.3, 2.0, 4.0])]),
    "normalize": (lambda x: F.normalize(x, axis=1), [_rand(3, 4)]),
    "normalize_p1_axis0": (lambda x: F.normalize(x, p=1, axis=0), [_rand(3, 4, low=0.1)]),
    "normalize_p3": (lambda x: F.normalize(x, p=3, axis=-1), [_rand(2, 4, low=0.1)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_gradient(name):
    fn, inputs = CASES[name]
    gradcheck(fn, [a.copy() for a in inputs])


def test_gelu_exact_gradient():
    # the erf fit is accurate to ~1e-7, so finite differences of it agree to that order only
    gradcheck(F.gelu, [_rand(3, 4)], atol=2e-6, rtol=1e-5)


def test_embedding_gradient_with_repeats_and_padding():
    ids = pycoll.to_tensor(np.array([[1, 3, 1], [0, 2, 3]]))
    gradcheck(lambda w: F.embedding(ids, w, padding_idx=2), [_rand(4, 3)])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("label_shape", [(5,), (5, 1)])
def test_cross_entropy_gradient(reduction, label_shape):
    labels = pycoll.to_tensor(np.array([0, 2, 1, 2, 3]).reshape(label_shape))
    gradcheck(lambda x: F.cross_entropy(x, labels, reduction=reduction), [_rand(5, 4)])


def test_cross_entropy_gradient_ignore_index():
    labels = pycoll.to_tensor(np.array([0, -100, 1, 2]))
    gradcheck(lambda x: F.cross_entropy(x, labels), [_rand(4, 3)])


def test_dropout_gradient_with_fixed_mask():
    def fn(x):
        pycoll.seed(7)  # the same mask on every evaluation
        return F.dropout(x, p=0.4)
    gradcheck(fn, [_rand(4, 5)])


def test_composite_graph_with_shared_inputs():
    def fn(x, w):
        h = pycoll.tanh(x @ w)
        return (h * x[:, :2]).sum(axis=1) + pycoll.exp(w).mean() * h.max()
    gradcheck(fn, [_rand(3, 4), _rand(4, 2)])


class _Tanh(PyLayer):
    @staticmethod
    def forward(ctx, x):
        y = pycoll.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        y, = ctx.saved_tensor()
        return dy * (1 - pycoll.square(y))


class _MulAdd(PyLayer):
    """Two inputs, two outputs: (x * y, x + y)."""

    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_backward(x, y)
        return x * y, x + y

    @staticmethod
    def backward(ctx, d_prod, d_sum):
        x, y = ctx.saved_tensor()
        return d_prod * y + d_sum, d_prod * x + d_sum


def test_pylayer_gradient():
    gradcheck(lambda x: _Tanh.apply(x) * 2.0, [_rand(3, 4)])


def test_pylayer_multi_input_multi_output_gradient():
    def fn(x, y):
        p, s = _MulAdd.apply(x, y)
        return p * 3.0 + pycoll.square(s)
    gradcheck(fn, [_rand(2, 3), _rand(2, 3)])


def test_pylayer_with_one_output_unused():
    def fn(x, y):
        p, _ = _MulAdd.apply(x, y)
        return p
    gradcheck(fn, [_rand(2, 3), _rand(2, 3)])
