"""create_graph through the rules of pycoll._higher_order.rules_extra and rules_multilinear: smooth
activations and prelu, the fused losses, elementwise ops of two tensors, logit, nanmean,
logsumexp, the scans and prod, einsum, embedding, interpolate, the transposed convolutions,
masked_fill, nan_to_num, nansum, rot90 and sinc.

Second derivatives (and the mixed ones, with only input 0's first gradient taken) are checked
against central differences of first-order gradients; where paddle 3.3.1's CPU build has a
double-grad kernel (celu, hypot, nanmean) against its numbers too."""
import numpy as np
import pytest

import pycoll
import pycoll.nn.functional as F
from test_gradcheck import _rand
from test_higher_order import second_order_check

_LABEL = pycoll.to_tensor(np.array([[0.0, 1.0, 1.0], [1.0, 0.3, 0.0]]))
_MASKED_LABEL = pycoll.to_tensor(np.array([[0.0, -100.0, 1.0], [1.0, 0.3, 0.0]]))


def _t(a):
    return pycoll.to_tensor(np.asarray(a))


CASES = {
    # activations (smooth: their derivative runs again on Tensors)
    "mish": (lambda x: F.mish(x * 3), [_rand(3, 4)]),
    "selu_celu": (lambda x: F.selu(x) ** 2 + F.celu(x, 0.7) ** 2, [_rand(3, 4, low=0.1) * np.array([1, -1, 1, -1])]),
    "softsign_tanhshrink": (lambda x: F.softsign(x) ** 2 + F.tanhshrink(x), [_rand(2, 5)]),
    "log_sigmoid": (lambda x: F.log_sigmoid(x * 2) ** 2, [_rand(2, 5)]),
    "hardswish": (lambda x: F.hardswish(x) ** 2, [np.array([-4.0, -2.5, -1.0, 0.3, 2.0, 4.0])]),
    "prelu_channels": (lambda x, w: F.prelu(x, w) ** 2, [_rand(2, 3, 2, low=0.1) * np.array([1, -1]), _rand(3)]),
    "prelu_one_nhwc": (lambda x, w: F.prelu(x * pycoll.abs(x), w, data_format="NHWC") ** 2,
                       [_rand(2, 2, 3, low=0.1) * np.array([1, -1, 1]), _rand(1)]),
    # losses: gradients to the input (the labels take none)
    "bce_weight": (lambda x, w: F.binary_cross_entropy(F.sigmoid(x), _LABEL, weight=w), [_rand(2, 3), _rand(3)]),
    "bce_none": (lambda x: F.binary_cross_entropy(F.sigmoid(x), _LABEL, reduction="none") ** 2, [_rand(2, 3)]),
    "bce_logits_pos_weight": (lambda x, w: F.binary_cross_entropy_with_logits(
        x * x, _MASKED_LABEL, weight=w, pos_weight=_t([2.0, 0.5, 1.5]), reduction="sum"), [_rand(2, 3), _rand(2, 3, seed=7)]),
    "bce_logits_mean": (lambda x: F.binary_cross_entropy_with_logits(x * x, _LABEL), [_rand(2, 3)]),
    "nll_weighted_ignore": (lambda x: F.nll_loss(F.log_softmax(x, axis=1), _t([0, 2, -100, 1]),
                                                 weight=_t([0.5, 2.0, 1.0])), [_rand(4, 3)]),
    "nll_spatial_none": (lambda x: F.nll_loss(x * x, _t([[0, 2], [1, 1]]), reduction="none") ** 2, [_rand(2, 3, 2)]),
    "kl_div": (lambda x: F.kl_div(x * x, _t([[0.2, 0.0, 0.8], [0.5, 0.25, 0.25]]), reduction="sum"), [_rand(2, 3)]),
    "kl_div_log_target": (lambda x: F.kl_div(F.log_softmax(x), _t(_rand(2, 3, seed=5)), "batchmean", True),
                          [_rand(2, 3)]),
    # elementwise ops of two tensors, logit
    "atan2": (lambda x, y: pycoll.atan2(x, y), [_rand(2, 3), _rand(2, 3, seed=7)]),
    "hypot_broadcast": (lambda x, y: pycoll.hypot(x, y) ** 2, [_rand(2, 3), _rand(3)]),
    "logaddexp": (lambda x, y: pycoll.logaddexp(x * x, y), [_rand(2, 3), _rand(2, 1)]),
    "fmin_heaviside": (lambda x, y: pycoll.fmin(x, y) ** 2 + pycoll.heaviside(_t([0.0, 1.0, 0.0]), y) * y * y,
                       [_rand(3), _rand(3, seed=7)]),
    "fmax_lerp": (lambda x, y: pycoll.fmax(x, y) ** 2 + pycoll.lerp(x * x, y * y * y, 0.3),
                  [_rand(2, 3), _rand(2, 3, seed=7)]),
    "remainder": (lambda x, y: pycoll.remainder(x * x, y) * y, [_rand(2, 3), _rand(2, 3, low=0.5, seed=7)]),
    "logit": (lambda x: pycoll.logit(x) ** 2 + pycoll.logit(x, eps=0.2) ** 3, [np.array([0.1, 0.3, 0.5, 0.7, 0.95])]),
    # reductions and scans
    "nanmean_nan": (lambda x: pycoll.nanmean(x, axis=1) ** 3, [np.array([[0.5, np.nan, -1.2], [0.3, 2.0, 1.1]])]),
    "logsumexp": (lambda x: pycoll.logsumexp(x * x, axis=1) ** 2 + pycoll.logsumexp(x, keepdim=True), [_rand(2, 3)]),
    "cumsum": (lambda x: pycoll.cumsum(x * x, axis=1) ** 2 + (pycoll.cumsum(x) ** 3).sum(), [_rand(2, 3)]),
    "cumprod": (lambda x: pycoll.cumprod(x, dim=1) ** 2, [_rand(2, 3)]),
    "cumprod_zero": (lambda x: pycoll.cumprod(x, dim=0) * pycoll.cumprod(x).reshape([3, 2]),
                     [np.array([[0.5, 0.0], [1.5, -0.7], [0.0, 2.0]])]),
    "prod": (lambda x: pycoll.prod(x, axis=1) ** 2 + pycoll.prod(x * 0.5), [_rand(2, 3)]),
    "prod_zeros": (lambda x: pycoll.prod(x, axis=0, keepdim=True) ** 2 + pycoll.prod(x, axis=[0, 1]),
                   [np.array([[0.0, 1.5, 0.0], [-0.7, 0.0, 1.2]])]),
    # linear in each operand
    "einsum_matmul": (lambda x, y: pycoll.einsum("ij,jk->ik", x * x, y), [_rand(2, 3), _rand(3, 2)]),
    # psroi_pool: one op (a summed-area table's reads) with its own backward, and a rule for it
    "psroi_pool": (lambda x: pycoll.vision.ops.psroi_pool(
        x * x, _t([[0.0, 0.0, 4.0, 3.0], [1.0, 2.0, 6.0, 5.0]]), _t(np.array([2], np.int32)), 2) ** 2,
        [_rand(1, 8, 6, 7)]),
    # roi_align: the host kernel's op (its sample tables) with a rule recomputing it from gathers
    "roi_align": (lambda x: pycoll.vision.ops.roi_align(
        x * x, _t([[0.0, 0.0, 4.0, 3.0], [1.0, 2.0, 6.0, 5.0], [0.5, 0.5, 3.5, 2.0]]), _t(np.array([2, 1], np.int32)),
        2, sampling_ratio=2) ** 2, [_rand(2, 3, 6, 7)]),
    # matmul's transpose_x / transpose_y are taken on the arrays in its own node (its rule transposes back)
    "matmul_transposed": (lambda x, y: pycoll.matmul(x * x, y, transpose_x=True, transpose_y=True) ** 2,
                          [_rand(2, 4, 3), _rand(2, 4)]),
    "matmul_transposed_1d": (lambda x, y: pycoll.matmul(x, y * y, transpose_y=True) ** 2, [_rand(3), _rand(2, 3)]),
    "einsum_diagonal_broadcast": (lambda x, y: pycoll.einsum("...ii,...j->...ij", x, y) ** 2,
                                  [_rand(2, 3, 3), _rand(1, 2)]),
    "einsum_own_label": (lambda x, y: pycoll.einsum("ij,k", x, y * y), [_rand(2, 2), _rand(3)]),
    "embedding": (lambda w: F.embedding(_t([[1, 3, 1], [0, 2, 3]]), w * w, padding_idx=2) ** 2, [_rand(4, 3)]),
    # scale_grad_by_freq's gradient is not the derivative of the forward, so it is checked where the
    # second derivative does not pass through it again (as every autograd that runs its backward would)
    "embedding_freq": (lambda w: F.embedding(_t([1, 3, 1, 1]), w * w * w, scale_grad_by_freq=True), [_rand(4, 2)]),
    "interp_nearest": (lambda x: F.interpolate(x, scale_factor=2) ** 3, [_rand(1, 1, 2, 3)]),
    "interp_bilinear_nhwc": (lambda x: F.interpolate(x * x, size=[3, 5], mode="bilinear", align_corners=True,
                                                     data_format="NHWC") ** 2, [_rand(1, 2, 3, 2)]),
    "interp_bicubic": (lambda x: F.interpolate(x, scale_factor=1.5, mode="bicubic") ** 2, [_rand(1, 1, 3, 3)]),
    "interp_bilinear_shrink": (lambda x: F.interpolate(x * x, size=[2, 3], mode="bilinear") ** 2, [_rand(1, 1, 5, 4)]),
    # masks, rotations and sinc (paddle 3.3.1's CPU build has double-grad kernels for all five)
    "masked_fill": (lambda x: pycoll.masked_fill(x * x, _t(np.array([[True, False, True]])), 0.5) ** 2, [_rand(2, 3)]),
    "masked_fill_tensor_value": (lambda x, v: pycoll.masked_fill(x * x, _t(np.array([[False], [True]])), v * v) ** 2,
                                 [_rand(2, 3), _rand(1)]),
    "nan_to_num": (lambda x: pycoll.nan_to_num(x) ** 3, [np.array([[0.5, np.nan, 2.0], [-np.inf, 3.0, 0.7]])]),
    "nansum": (lambda x: pycoll.nansum(x * 1.5, axis=1) ** 2, [np.array([[0.5, np.nan, 2.0], [1.5, 3.0, 0.7]])]),
    "rot90": (lambda x: pycoll.rot90(x * x, k=3, axes=[0, 2]) ** 2, [_rand(2, 3, 2)]),
    "sinc": (lambda x: pycoll.sinc(x) ** 2, [np.array([-1.3, -0.4, 0.2, 0.9, 2.5])]),
    "conv2d_transpose": (lambda x, w, b: F.conv2d_transpose(x, w, b, stride=2, padding=1, output_padding=1) ** 2,
                         [_rand(1, 2, 2, 3), _rand(2, 2, 2, 2), _rand(2)]),
    "conv1d_transpose_groups_nlc": (lambda x, w: F.conv1d_transpose(x, w, groups=2, dilation=2,
                                                                    data_format="NLC") ** 2,
                                    [_rand(1, 3, 4), _rand(4, 1, 2)]),
    "conv3d_transpose": (lambda x, w: F.conv3d_transpose(x, w, stride=[1, 2, 1]) ** 2,
                         [_rand(1, 1, 2, 2, 2), _rand(1, 2, 2, 1, 2)]),
}


def _first_order_matches(fn, arrays):
    """The create_graph gradients equal the ordinary backward's."""
    ts = [pycoll.to_tensor(a, stop_gradient=False) for a in arrays]
    out = fn(*ts)
    seed = pycoll.to_tensor(np.random.default_rng(2).standard_normal(out.shape))
    recorded = pycoll.grad((out * seed).sum(), ts, create_graph=True, allow_unused=True)
    (out * seed).sum().backward()
    for t, r in zip(ts, recorded):
        np.testing.assert_allclose(r.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("name", sorted(CASES))
def test_second_derivative(name):
    fn, arrays = CASES[name]
    _first_order_matches(fn, arrays)
    second_order_check(fn, arrays)
    if len(arrays) > 1:  # the first gradient of input 0 only, differentiated to all of them
        second_order_check(fn, arrays, asked=[0])


_X = np.array([[-1.5, -0.2, 0.4], [1.3, -0.7, 2.0]])
_Y = np.array([[0.6, -1.1, 0.9], [0.25, 1.7, -0.4]])


def _grads_of_grads(f, arrays):
    """g = d sum(f^2) / d inputs (create_graph), then d sum(g^3) / d inputs."""
    ins = [pycoll.to_tensor(a, stop_gradient=False) for a in arrays]
    out = f(*ins)
    gs = pycoll.grad((out * out).sum(), ins, create_graph=True)
    hs = pycoll.grad(sum((g * g * g).sum() for g in gs), ins)
    return [g.numpy() for g in gs], [h.numpy() for h in hs]


def test_celu_hypot_nanmean_match_paddle():
    """The three ops here whose double grad paddle 3.3.1's CPU build runs: the same programs gave
    these numbers there."""
    gs, hs = _grads_of_grads(lambda x: F.celu(x, 0.5), [_X])
    np.testing.assert_allclose(gs[0], [[-0.04730831619119759, -0.22099108191841774, 0.8],
                                       [2.6, -0.18578690131638853, 4.0]], rtol=1e-13)
    np.testing.assert_allclose(hs[0], [[-0.0006019920378983186, 0.06690810277308648, 3.8400000000000007],
                                       [40.56, -0.02588278280376521, 96.0]], rtol=1e-13)
    gs, hs = _grads_of_grads(lambda x, y: pycoll.hypot(x, y) * x, [_X, _Y])
    np.testing.assert_allclose(gs[1], [[2.7, -0.088, 0.288], [0.845, 1.666, -3.2]], rtol=1e-13)
    np.testing.assert_allclose(hs[0], [[17599.121424, 2.3368713600000013, 9.037152000000004],
                                       [4906.807124553752, 987.1933058399995, 154337.673216]], rtol=1e-13)
    np.testing.assert_allclose(hs[1], [[-2197.41012, 0.7047744000000005, 3.609999360000002],
                                       [319.67486947500004, -411.0253240799998, -9981.788159999998]], rtol=1e-13)
    gs, hs = _grads_of_grads(lambda x: pycoll.nanmean(pycoll.where(x > 1.5, pycoll.full_like(x, np.nan), x), axis=1),
                             [_X])
    np.testing.assert_allclose(gs[0], [[-0.28888888888888886] * 3, [0.30000000000000004, 0.30000000000000004, 0.0]],
                               rtol=1e-13)
    np.testing.assert_allclose(hs[0], [[0.16691358024691358] * 3, [0.2700000000000001, 0.2700000000000001, 0.0]],
                               rtol=1e-13)
