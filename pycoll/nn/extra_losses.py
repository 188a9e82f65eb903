"""Loss layers for the margin, likelihood and CTC losses (paddle.nn names); each keeps its
arguments and calls its functional form (`_margin_losses`, `_likelihood_losses`, `_ctc_loss`).
A bad reduction raises ValueError at construction."""
from __future__ import annotations

from typing import Callable, Optional

from pycoll.nn._ctc_loss import ctc_loss
from pycoll.nn._likelihood_losses import gaussian_nll_loss, poisson_nll_loss
from pycoll.nn._margin_losses import (multi_label_soft_margin_loss, multi_margin_loss, soft_margin_loss,
                                      triplet_margin_loss, triplet_margin_with_distance_loss)
from pycoll.nn.loss import _Loss
from pycoll.tensor import Tensor

__all__ = ["TripletMarginLoss", "TripletMarginWithDistanceLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss",
           "MultiMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "CTCLoss"]


class TripletMarginLoss(_Loss):
    """`triplet_margin_loss` of (input, positive, negative)."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, epsilon: float = 1e-6, swap: bool = False,
                 reduction: str = "mean", name: Optional[str] = None):
        super().__init__(reduction, name)
        if margin < 0:
            raise ValueError(f"TripletMarginLoss: margin must be >= 0, got {margin}")
        self.margin, self.p, self.epsilon, self.swap = margin, p, epsilon, swap

    def forward(self, input: Tensor, positive: Tensor, negative: Tensor) -> Tensor:  # noqa: A002
        return triplet_margin_loss(input, positive, negative, self.margin, self.p, self.epsilon, self.swap,
                                   self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """`triplet_margin_with_distance_loss` with a distance of your own."""

    def __init__(self, distance_function: Optional[Callable[[Tensor, Tensor], Tensor]] = None, margin: float = 1.0,
                 swap: bool = False, reduction: str = "mean", name: Optional[str] = None):
        super().__init__(reduction, name)
        self.distance_function, self.margin, self.swap = distance_function, margin, swap

    def forward(self, input: Tensor, positive: Tensor, negative: Tensor) -> Tensor:  # noqa: A002
        return triplet_margin_with_distance_loss(input, positive, negative, self.distance_function, self.margin,
                                                 self.swap, self.reduction)


class SoftMarginLoss(_Loss):
    """`soft_margin_loss`: log(1 + exp(-label * input)), reduced."""

    def __init__(self, reduction: str = "mean", name: Optional[str] = None):
        super().__init__(reduction, name)

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return soft_margin_loss(input, label, self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """`multi_label_soft_margin_loss`, optionally weighted per class."""

    def __init__(self, weight: Optional[Tensor] = None, reduction: str = "mean", name: Optional[str] = None):
        super().__init__(reduction, name)
        self.weight = weight

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return multi_label_soft_margin_loss(input, label, self.weight, self.reduction)


class MultiMarginLoss(_Loss):
    """`multi_margin_loss`: the multi-class hinge loss."""

    def __init__(self, p: int = 1, margin: float = 1.0, weight: Optional[Tensor] = None, reduction: str = "mean",
                 name: Optional[str] = None):
        super().__init__(reduction, name)
        self.p, self.margin, self.weight = p, margin, weight

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return multi_margin_loss(input, label, self.p, self.margin, self.weight, self.reduction)


class PoissonNLLLoss(_Loss):
    """`poisson_nll_loss`."""

    def __init__(self, log_input: bool = True, full: bool = False, epsilon: float = 1e-8, reduction: str = "mean",
                 name: Optional[str] = None):
        super().__init__(reduction, name)
        if not epsilon > 0:
            raise ValueError(f"PoissonNLLLoss: epsilon must be > 0, got {epsilon}")
        self.log_input, self.full, self.epsilon = log_input, full, epsilon

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return poisson_nll_loss(input, label, self.log_input, self.full, self.epsilon, self.reduction)


class GaussianNLLLoss(_Loss):
    """`gaussian_nll_loss`."""

    def __init__(self, full: bool = False, epsilon: float = 1e-6, reduction: str = "mean",
                 name: Optional[str] = None):
        super().__init__(reduction, name)
        self.full, self.epsilon = full, epsilon

    def forward(self, input: Tensor, label: Tensor, variance: Tensor) -> Tensor:  # noqa: A002
        return gaussian_nll_loss(input, label, variance, self.full, self.epsilon, self.reduction)


class CTCLoss(_Loss):
    """`ctc_loss`; forward(log_probs, labels, input_lengths, label_lengths, norm_by_times=False)."""

    def __init__(self, blank: int = 0, reduction: str = "mean", zero_infinity: bool = False):
        super().__init__(reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs: Tensor, labels: Tensor, input_lengths: Tensor, label_lengths: Tensor,
                norm_by_times: bool = False) -> Tensor:
        return ctc_loss(log_probs, labels, input_lengths, label_lengths, self.blank, self.reduction,
                        norm_by_times, self.zero_infinity)
