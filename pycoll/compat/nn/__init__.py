"""paddle.compat.nn: the torch-style ``Softmax`` layer and ``functional``. paddle 3.3.1's other
compat layers (Linear with torch's [out, in] weight, AvgPool1D/2D/3D with divisor_override,
Unfold, MultiheadAttention) are not in pycoll."""
from __future__ import annotations

from typing import Optional

from pycoll.compat.nn import functional
from pycoll.aliases import softmax
from pycoll.nn.layer import Layer
from pycoll.tensor import Tensor

__all__ = ["Softmax", "functional"]


class Softmax(Layer):
    """softmax along ``dim`` (paddle's rule without one: dim 0 of a 0-, 1- or 3-D input, else 1)."""

    def __init__(self, dim: Optional[int] = None) -> None:
        super().__init__()
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int)):
            raise TypeError(f"Softmax: dim must be an int or None, got {dim!r}")
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002 - paddle's name
        return softmax(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"
