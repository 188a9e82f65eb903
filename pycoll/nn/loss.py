"""Loss layers: each keeps its arguments and calls its functional form (see
`pycoll.nn.functional` for the formulas). A bad reduction raises ValueError at construction."""
from __future__ import annotations

from typing import Optional

from pycoll._param_aliases import param_aliases
from pycoll.nn import functional as F
from pycoll.nn._loss_functional import _REDUCTIONS, _check_reduction
from pycoll.nn.layer import Layer
from pycoll.tensor import Tensor


class _Loss(Layer):
    def __init__(self, reduction: str, name: Optional[str] = None, allowed: tuple = _REDUCTIONS):
        super().__init__()  # (paddle's `name` neither scopes the parameters nor prints)
        _check_reduction(reduction, allowed)
        self.reduction = reduction

    def extra_repr(self) -> str:
        return ""  # paddle's loss layers print as e.g. `L1Loss()`


class MSELoss(_Loss):
    """Mean (or sum, or elementwise with 'none') of (input - label) ** 2."""

    def __init__(self, reduction: str = "mean"):
        super().__init__(reduction)

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.mse_loss(input, label, self.reduction)


class L1Loss(_Loss):
    """|input - label|, reduced."""

    def __init__(self, reduction: str = "mean", name: Optional[str] = None):
        super().__init__(reduction, name)

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.l1_loss(input, label, self.reduction)


class SmoothL1Loss(_Loss):
    """Huber loss with threshold delta (divided by delta unless is_huber)."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0, is_huber: bool = True,
                 name: Optional[str] = None):
        super().__init__(reduction, name)
        self.delta, self.is_huber = delta, is_huber

    @param_aliases({"target": "label"})
    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.smooth_l1_loss(input, label, self.reduction, self.delta, self.is_huber)


class BCELoss(_Loss):
    """Binary cross entropy of probabilities, optionally weighted elementwise."""

    def __init__(self, weight: Optional[Tensor] = None, reduction: str = "mean",
                 name: Optional[str] = None):
        super().__init__(reduction, name)
        self.weight = weight

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.binary_cross_entropy(input, label, self.weight, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Sigmoid + binary cross entropy from logits, with weight and pos_weight."""

    def __init__(self, weight: Optional[Tensor] = None, reduction: str = "mean",
                 pos_weight: Optional[Tensor] = None, name: Optional[str] = None):
        super().__init__(reduction, name)
        self.weight, self.pos_weight = weight, pos_weight

    def forward(self, logit: Tensor, label: Tensor) -> Tensor:
        return F.binary_cross_entropy_with_logits(logit, label, self.weight, self.reduction,
                                                  self.pos_weight)


class NLLLoss(_Loss):
    """Negative log likelihood of log-probabilities [N, C, ...] for class ids [N, ...]."""

    def __init__(self, weight: Optional[Tensor] = None, ignore_index: int = -100,
                 reduction: str = "mean", name: Optional[str] = None):
        super().__init__(reduction, name)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.nll_loss(input, label, self.weight, self.ignore_index, self.reduction)


class KLDivLoss(_Loss):
    """KL divergence of log-probabilities from a target; reduction may also be 'batchmean'."""

    def __init__(self, reduction: str = "mean", log_target: bool = False):
        super().__init__(reduction, allowed=_REDUCTIONS + ("batchmean",))
        self.log_target = log_target

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.kl_div(input, label, self.reduction, self.log_target)


class CrossEntropyLoss(_Loss):
    """Softmax cross entropy with paddle's arguments (see F.cross_entropy)."""

    def __init__(self, weight: Optional[Tensor] = None, ignore_index: int = -100,
                 reduction: str = "mean", soft_label: bool = False, axis: int = -1,
                 use_softmax: bool = True, label_smoothing: float = 0.0, name: Optional[str] = None):
        super().__init__(reduction, name)
        self.weight, self.ignore_index, self.soft_label = weight, ignore_index, soft_label
        self.axis, self.use_softmax, self.label_smoothing = axis, use_softmax, label_smoothing

    @param_aliases({"target": "label"})
    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.cross_entropy(input, label, self.weight, self.ignore_index, self.reduction,
                               self.soft_label, self.axis, self.use_softmax, self.label_smoothing)


class MarginRankingLoss(_Loss):
    """relu(label * (other - input) + margin), reduced."""

    def __init__(self, margin: float = 0.0, reduction: str = "mean", name: Optional[str] = None):
        super().__init__(reduction, name)
        self.margin = margin

    def forward(self, input: Tensor, other: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.margin_ranking_loss(input, other, label, self.margin, self.reduction)


class CosineEmbeddingLoss(_Loss):
    """1 - cos where label is 1, max(cos - margin, 0) where it is -1, reduced."""

    def __init__(self, margin: float = 0, reduction: str = "mean", name: Optional[str] = None):
        super().__init__(reduction, name)
        self.margin = margin

    def forward(self, input1: Tensor, input2: Tensor, label: Tensor) -> Tensor:
        return F.cosine_embedding_loss(input1, input2, label, self.margin, self.reduction)


class HingeEmbeddingLoss(_Loss):
    """input where label is 1, max(margin - input, 0) where it is -1, reduced."""

    def __init__(self, margin: float = 1.0, reduction: str = "mean", name: Optional[str] = None):
        super().__init__(reduction, name)
        self.margin = margin

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.hinge_embedding_loss(input, label, self.margin, self.reduction)


class MultiLabelMarginLoss(_Loss):
    """`multi_label_margin_loss`: the hinge between each sample's target classes (its label row up
    to the first -1) and the other classes, reduced."""

    def __init__(self, reduction: str = "mean", name: Optional[str] = None):
        super().__init__(reduction, name)

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.multi_label_margin_loss(input, label, self.reduction)


class RNNTLoss(_Loss):
    """`rnnt_loss`: the RNN transducer loss of log-probabilities [B, T, U + 1, V]."""

    def __init__(self, blank: int = 0, fastemit_lambda: float = 0.001, reduction: str = "mean",
                 name: Optional[str] = None):
        super().__init__(reduction, name)
        self.blank, self.fastemit_lambda = blank, fastemit_lambda

    def forward(self, input: Tensor, label: Tensor, input_lengths: Tensor,  # noqa: A002
                label_lengths: Tensor) -> Tensor:
        return F.rnnt_loss(input, label, input_lengths, label_lengths, self.blank, self.fastemit_lambda,
                           self.reduction)
