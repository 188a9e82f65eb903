"""Distances and losses between pairs of inputs (paddle.nn.functional names): cosine_similarity,
pairwise_distance, margin_ranking_loss, cosine_embedding_loss, hinge_embedding_loss,
square_error_cost, and sigmoid_focal_loss and softmax_with_cross_entropy over the existing
binary_cross_entropy_with_logits and cross_entropy. Each is composed of differentiable ops, with
paddle's formulas (its epsilons included)."""
from __future__ import annotations

from typing import Optional, Tuple, Union

from pycoll._param_aliases import param_aliases
from pycoll._promotion import accumulates_in_float32
from pycoll._tensor_ops import as_tensor
from pycoll.linalg import vector_norm
from pycoll.math_ops import clip, divide, multiply, pow, relu, sigmoid, sqrt, square, sum
from pycoll.nn._activation_functional import softmax
from pycoll.nn._class_losses import cross_entropy
from pycoll.nn._loss_functional import _check_reduction, _reduce, binary_cross_entropy_with_logits
from pycoll.search_ops import where
from pycoll.shape_ops import unsqueeze
from pycoll.tensor import Tensor

__all__ = ["cosine_similarity", "pairwise_distance", "margin_ranking_loss", "cosine_embedding_loss",
           "hinge_embedding_loss", "square_error_cost", "sigmoid_focal_loss", "softmax_with_cross_entropy"]


@param_aliases({"dim": "axis"})
def cosine_similarity(x1: Tensor, x2: Tensor, axis: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1 * x2) / sqrt(max(sum(x1^2) * sum(x2^2), eps^2)) along `axis` (x1 and x2 broadcast)."""
    x1, x2 = as_tensor(x1), as_tensor(x2)
    w12 = sum(multiply(x1, x2), axis=axis)
    w1, w2 = sum(multiply(x1, x1), axis=axis), sum(multiply(x2, x2), axis=axis)
    n1, n2 = x1.shape[axis], x2.shape[axis]
    if n1 != n2:  # one of them broadcast along axis: its sum of squares counts that many times
        w1, w2 = (w1 * (max(n1, n2) / n1), w2 * (max(n1, n2) / n2))
    return divide(w12, sqrt(clip(w1 * w2, min=eps * eps)))


@param_aliases({"x1": "x", "x2": "y", "eps": "epsilon"})
def pairwise_distance(x: Tensor, y: Tensor, p: float = 2.0, epsilon: float = 1e-6, keepdim: bool = False,
                      name: Optional[str] = None) -> Tensor:
    """The p-norm of x - y + epsilon along the last axis."""
    diff = as_tensor(x) - as_tensor(y)
    if epsilon != 0.0:
        diff = diff + epsilon
    return vector_norm(diff, p, axis=-1, keepdim=keepdim)


def margin_ranking_loss(input: Tensor, other: Tensor, label: Tensor, margin: float = 0.0,  # noqa: A002
                        reduction: str = "mean", name: Optional[str] = None) -> Tensor:
    """relu(label * (other - input) + margin), reduced: label 1 wants input above other."""
    _check_reduction(reduction)
    return _reduce(relu((as_tensor(other) - as_tensor(input)) * as_tensor(label) + margin), reduction)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, label: Tensor, margin: float = 0,
                          reduction: str = "mean", name: Optional[str] = None) -> Tensor:
    """1 - cos(input1, input2) where label is 1, max(cos - margin, 0) where it is -1 (cos over
    the last axis, with paddle's 1e-11 added to each sum of squares). label is 1-D, the inputs
    [N, D] or [D]."""
    _check_reduction(reduction)
    input1, input2, label = as_tensor(input1), as_tensor(input2), as_tensor(label)
    if label.ndim != 1:
        raise ValueError(f"cosine_embedding_loss: label must be 1-D, got shape {label.shape}")
    if input1.shape != input2.shape or input1.ndim > 2:
        raise ValueError(f"cosine_embedding_loss: input1 and input2 must have one shape, [N, D] or [D]; got "
                         f"{input1.shape} and {input2.shape}")
    cos = sum(input1 * input2, axis=-1) / sqrt((sum(square(input1), axis=-1) + 1e-11)
                                               * (sum(square(input2), axis=-1) + 1e-11))
    zero = cos * 0.0
    out = where(label == 1, 1 - cos, zero) + where(label == -1, clip(cos - margin, min=0), zero)
    return _reduce(out, reduction)


def hinge_embedding_loss(input: Tensor, label: Tensor, margin: float = 1.0, reduction: str = "mean",  # noqa: A002
                         name: Optional[str] = None) -> Tensor:
    """input where label is 1, max(margin - input, 0) where it is -1 (0 for other labels)."""
    _check_reduction(reduction)
    input, label = as_tensor(input), as_tensor(label)
    zero = input * 0.0
    return _reduce(where(label == 1.0, input, zero) + where(label == -1.0, relu(margin - input), zero), reduction)


def square_error_cost(input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
    """(input - label) ** 2, elementwise."""
    return square(as_tensor(input) - as_tensor(label))


def sigmoid_focal_loss(logit: Tensor, label: Tensor, normalizer: Optional[Tensor] = None, alpha: float = 0.25,
                       gamma: float = 2.0, reduction: str = "sum", name: Optional[str] = None) -> Tensor:
    """alpha_t (1 - p_t)^gamma BCE(logit, label), p_t = sigmoid(logit) where label is 1 and its
    complement where 0, alpha_t = alpha or 1 - alpha alike; divided by `normalizer` (a scalar
    or a 1-element tensor) if given, then reduced (default: summed)."""
    _check_reduction(reduction)
    logit, label = as_tensor(logit), as_tensor(label)
    if normalizer is not None and as_tensor(normalizer).ndim > 1:
        raise ValueError(f"sigmoid_focal_loss: normalizer must have 0 or 1 dimensions, got shape "
                         f"{as_tensor(normalizer).shape}")
    loss = binary_cross_entropy_with_logits(logit, label, reduction="none")
    pred = sigmoid(logit)
    p_t = pred * label + (1 - pred) * (1 - label)
    alpha_t = label * alpha + (1 - label) * (1 - alpha)
    loss = pow(1 - p_t, gamma) * (alpha_t * loss)
    if normalizer is not None:
        loss = loss / as_tensor(normalizer)
    return _reduce(loss, reduction)


@accumulates_in_float32
def softmax_with_cross_entropy(logits: Tensor, label: Tensor, soft_label: bool = False, ignore_index: int = -100,
                               numeric_stable_mode: bool = True, return_softmax: bool = False,
                               axis: int = -1) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """paddle's older cross entropy: per-example losses (not reduced) with a class axis of size 1
    kept at `axis`; with return_softmax, (loss, softmax(logits)). `numeric_stable_mode` is
    accepted for compatibility (the computation is always the stable one)."""
    logits = as_tensor(logits)
    loss = cross_entropy(logits, label, ignore_index=ignore_index, reduction="none", soft_label=soft_label,
                         axis=axis)
    if loss.ndim < logits.ndim:
        loss = unsqueeze(loss, axis % logits.ndim)
    return (loss, softmax(logits, axis)) if return_softmax else loss


