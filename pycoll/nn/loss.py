"""Loss layers."""
from __future__ import annotations

from typing import Optional

from pycoll.nn import functional as F
from pycoll.nn.layer import Layer
from pycoll.tensor import Tensor


class MSELoss(Layer):
    """Mean (or sum, or elementwise with 'none') of (input - label) ** 2."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        F._check_reduction(reduction)
        self.reduction = reduction

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.mse_loss(input, label, self.reduction)


class CrossEntropyLoss(Layer):
    """Softmax cross entropy with integer labels of shape [N] or [N, 1] (see F.cross_entropy)."""

    def __init__(self, ignore_index: int = -100, reduction: str = "mean", axis: int = -1,
                 name: Optional[str] = None):
        super().__init__(name)
        F._check_reduction(reduction)
        self.ignore_index, self.reduction, self.axis = ignore_index, reduction, axis

    def forward(self, input: Tensor, label: Tensor) -> Tensor:  # noqa: A002
        return F.cross_entropy(input, label, self.ignore_index, self.reduction, self.axis)
