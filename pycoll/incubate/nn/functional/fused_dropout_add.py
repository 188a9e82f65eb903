"""paddle.incubate's ``fused_dropout_add``: dropout(x) + y (paddle 3.3.1 itself computes it as
that pair of ops)."""
from __future__ import annotations

from typing import Optional

from pycoll.incubate.nn.functional._checks import check_dropout
from pycoll.math_ops import add
from pycoll.nn.functional import dropout
from pycoll.tensor import Tensor

__all__ = ["fused_dropout_add"]


def fused_dropout_add(x: Tensor, y: Tensor, p: float = 0.5, training: bool = True, mode: str = "upscale_in_train",
                      name: Optional[str] = None) -> Tensor:
    """dropout(x, p, training, mode) + y."""
    check_dropout("fused_dropout_add", "p", p, mode)
    return add(dropout(x, p, training=training, mode=mode), y)
