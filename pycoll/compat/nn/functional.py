"""paddle.compat.nn.functional: ``softmax`` (pycoll.softmax itself, paddle's torch-style one) and
``linear`` with torch's [out_features, in_features] weight. paddle 3.3.1's compat ``pad``,
``scaled_dot_product_attention`` and ``unfold`` are not here."""
from __future__ import annotations

from typing import Optional

from pycoll.aliases import softmax
from pycoll.math_ops import matmul
from pycoll.tensor import Tensor

__all__ = ["linear", "softmax"]


def linear(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:  # noqa: A002 - paddle's name
    """input @ weight^T + bias, weight [out_features, in_features] (torch's layout)."""
    for name, value in (("input", input), ("weight", weight)):
        if not isinstance(value, Tensor):
            raise TypeError(f"paddle.compat.nn.functional.linear: {name} must be a Tensor, got {type(value).__name__}")
    out = matmul(input, weight, transpose_y=True)
    return out if bias is None else out + bias
