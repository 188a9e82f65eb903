"""Simulated (fake) quantization with a straight-through gradient."""
from __future__ import annotations

from typing import Any

from pycoll.autograd import PyLayer
from pycoll.elementwise_ops import maximum, minimum
from pycoll.nn.quant.quantized_linear import round_half_away
from pycoll.tensor import Tensor


class _FakeQuantDequant(PyLayer):
    """``round(clip(x, -s, s) * bin_cnt / s) * s / bin_cnt``, halves away from zero (paddle's
    kernel with round_type 1); backward passes the gradient through unchanged, clipped values
    included (paddle's straight-through estimator)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor, scale: Tensor, bin_cnt: int) -> Tensor:
        scale = scale.astype(x.dtype)
        clipped = minimum(maximum(x, -scale), scale)
        v = clipped * (bin_cnt * (1.0 / scale))
        return round_half_away(v) * scale / bin_cnt

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Any:
        return grad, None


def fake_quant_dequant(x: Tensor, scale: Tensor, bit_length: int) -> Tensor:
    """x quantized to ``bit_length``-bit symmetric integers with ``scale`` and back."""
    return _FakeQuantDequant.apply(x, scale, (1 << (bit_length - 1)) - 1)
