"""``paddle.incubate.nn.FusedDropoutAdd``: dropout(x) + y through ``fused_dropout_add``."""
from __future__ import annotations

from typing import Optional

from pycoll.incubate.nn.functional import fused_dropout_add
from pycoll.incubate.nn.functional._checks import check_dropout
from pycoll.nn.layer import Layer
from pycoll.tensor import Tensor


class FusedDropoutAdd(Layer):
    """dropout(x, p, mode) + y, dropping only in training mode."""

    def __init__(self, p: float = 0.5, mode: str = "upscale_in_train", name: Optional[str] = None) -> None:
        super().__init__()
        check_dropout("FusedDropoutAdd", "p", p, mode)
        self.p = p
        self.mode = mode
        self.name = name

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        return fused_dropout_add(x, y, p=self.p, training=self.training, mode=self.mode, name=self.name)

    def extra_repr(self) -> str:
        name_str = f", name={self.name}" if self.name else ""
        return f"p={self.p}, mode={self.mode}{name_str}"
