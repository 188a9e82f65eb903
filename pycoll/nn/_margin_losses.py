"""Margin and soft-margin losses (paddle.nn.functional names): triplet_margin_loss,
triplet_margin_with_distance_loss, soft_margin_loss, multi_label_soft_margin_loss and
multi_margin_loss. Each is composed of differentiable pycoll ops with paddle 3.3.1's formulas, so
gradients (to every floating input) follow from them."""
from __future__ import annotations

from typing import Callable, Optional

from pycoll._tensor_ops import as_tensor, require_floating
from pycoll.elementwise_ops import minimum
from pycoll.index_writes import index_sample
from pycoll.math_ops import cast, clip, exp, log, mean, pow
from pycoll.nn._activation_functional import log_sigmoid
from pycoll.nn._loss_functional import _check_reduction, _reduce
from pycoll.nn._pair_losses import pairwise_distance
from pycoll.search_ops import gather
from pycoll.tensor import Tensor

__all__ = ["triplet_margin_loss", "triplet_margin_with_distance_loss", "soft_margin_loss",
           "multi_label_soft_margin_loss", "multi_margin_loss"]


def _triplet(fn: str, input: Tensor, positive: Tensor, negative: Tensor,  # noqa: A002
             distance: Callable[[Tensor, Tensor], Tensor], margin: float, swap: bool, reduction: str) -> Tensor:
    _check_reduction(reduction)
    if margin < 0:
        raise ValueError(f"{fn}: margin must be >= 0, got {margin}")
    input, positive, negative = as_tensor(input), as_tensor(positive), as_tensor(negative)
    if not input.shape == positive.shape == negative.shape:
        raise ValueError(f"{fn}: input, positive and negative must have one shape, got {input.shape}, "
                         f"{positive.shape} and {negative.shape}")
    d_pos, d_neg = distance(input, positive), distance(input, negative)
    if swap:
        d_neg = minimum(d_neg, distance(positive, negative))
    return _reduce(clip(d_pos - d_neg + margin, min=0.0), reduction)


def triplet_margin_loss(input: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,  # noqa: A002
                        p: float = 2, epsilon: float = 1e-6, swap: bool = False, reduction: str = "mean",
                        name: Optional[str] = None) -> Tensor:
    """max(d(input, positive) - d(input, negative) + margin, 0), d the p-norm distance of
    `pairwise_distance` (epsilon added to the difference); with `swap` d(input, negative) is
    replaced by the smaller of it and d(positive, negative). Reduced over the batch."""
    return _triplet("triplet_margin_loss", input, positive, negative,
                    lambda a, b: pairwise_distance(a, b, p, epsilon), margin, swap, reduction)


def triplet_margin_with_distance_loss(input: Tensor, positive: Tensor, negative: Tensor,  # noqa: A002
                                      distance_function: Optional[Callable[[Tensor, Tensor], Tensor]] = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean",
                                      name: Optional[str] = None) -> Tensor:
    """triplet_margin_loss with a distance of your own (default: the 2-norm `pairwise_distance`)."""
    if distance_function is not None and not callable(distance_function):
        raise TypeError(f"triplet_margin_with_distance_loss: distance_function must be callable or None, got "
                        f"{type(distance_function).__name__}")
    return _triplet("triplet_margin_with_distance_loss", input, positive, negative,
                    distance_function or pairwise_distance, margin, swap, reduction)


def soft_margin_loss(input: Tensor, label: Tensor, reduction: str = "mean",  # noqa: A002
                     name: Optional[str] = None) -> Tensor:
    """log(1 + exp(-label * input)) (labels 1 or -1, any numeric dtype), reduced."""
    _check_reduction(reduction)
    input, label = require_floating(as_tensor(input), "soft_margin_loss", "input"), as_tensor(label)
    if input.shape != label.shape:
        raise ValueError(f"soft_margin_loss: label shape {label.shape} must equal input shape {input.shape}")
    return _reduce(log(1 + exp(-cast(label, input.dtype) * input)), reduction)


def multi_label_soft_margin_loss(input: Tensor, label: Tensor, weight: Optional[Tensor] = None,  # noqa: A002
                                 reduction: str = "mean", name: Optional[str] = None) -> Tensor:
    """-(label log sigmoid(input) + (1 - label) log sigmoid(-input)) times `weight`, averaged
    over the last (class) axis: one loss per sample, then reduced."""
    _check_reduction(reduction)
    input, label = require_floating(as_tensor(input), "multi_label_soft_margin_loss", "input"), as_tensor(label)
    if input.shape != label.shape:
        raise ValueError(f"multi_label_soft_margin_loss: label shape {label.shape} must equal input shape "
                         f"{input.shape}")
    loss = -(label * log_sigmoid(input) + (1 - label) * log_sigmoid(-input))
    if weight is not None:
        loss = loss * as_tensor(weight)
    return _reduce(mean(loss, axis=-1), reduction)


def multi_margin_loss(input: Tensor, label: Tensor, p: int = 1, margin: float = 1.0,  # noqa: A002
                      weight: Optional[Tensor] = None, reduction: str = "mean", name: Optional[str] = None) -> Tensor:
    """Multi-class hinge loss of input [N, C] and integer labels [N]: the mean over the classes
    i != y of w[y] max(0, margin - input[y] + input[i]) ** p (paddle sums over every class and
    takes the i == y term, w[y] margin ** p / C, back off)."""
    _check_reduction(reduction)
    input, label = require_floating(as_tensor(input), "multi_margin_loss", "input"), as_tensor(label)
    if label.dtype.kind not in "iu":
        raise TypeError(f"multi_margin_loss: label must hold integer class ids, got dtype {label.dtype}")
    if input.ndim != 2 or label.shape[:1] != input.shape[:1] or label.size != input.shape[0]:
        raise ValueError(f"multi_margin_loss: input must be [N, C] and label [N], got {input.shape} and {label.shape}")
    classes = input.shape[1]
    label = label.reshape([-1, 1])
    picked = index_sample(input, label)
    hinge = pow(clip(margin - picked + input, min=0.0), p)
    own = margin ** p / classes
    if weight is None:
        loss = mean(hinge, axis=1) - own
    else:
        weight = as_tensor(weight)
        if weight.ndim != 1 or weight.shape[0] != classes:
            raise ValueError(f"multi_margin_loss: weight must be [C] = [{classes}], got shape {weight.shape}")
        w = gather(weight, label.reshape([-1]), axis=0).reshape([-1, 1])
        loss = mean(w * hinge, axis=1) - (w * own).reshape([-1])
    return _reduce(loss, reduction)
