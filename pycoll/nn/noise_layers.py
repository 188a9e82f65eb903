"""Dropout layers beyond Dropout/Dropout2D (paddle.nn names): AlphaDropout, FeatureAlphaDropout
and Dropout3D; each drops only in training mode (see `_noise_functional`)."""
from __future__ import annotations

from typing import Optional

from pycoll.nn._dropout_functional import drop_probability
from pycoll.nn._noise_functional import alpha_dropout, dropout3d, feature_alpha_dropout
from pycoll.nn.layer import Layer
from pycoll.tensor import Tensor

__all__ = ["AlphaDropout", "FeatureAlphaDropout", "Dropout3D"]


class AlphaDropout(Layer):
    """Alpha dropout of each element with probability p (SELU networks)."""

    def __init__(self, p: float = 0.5, name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self.p = drop_probability("AlphaDropout", p)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return alpha_dropout(input, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class FeatureAlphaDropout(Layer):
    """Alpha dropout of whole channels with probability p."""

    def __init__(self, p: float = 0.5, name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self.p = drop_probability("FeatureAlphaDropout", p)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return feature_alpha_dropout(input, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}"


class Dropout3D(Layer):
    """Zero whole channels of [N, C, D, H, W] (or NDHWC) inputs with probability p."""

    def __init__(self, p: float = 0.5, data_format: str = "NCDHW", name: Optional[str] = None):
        super().__init__()
        self._named(name)
        self.p = drop_probability("Dropout3D", p)
        if data_format not in ("NCDHW", "NDHWC"):
            raise ValueError(f"Dropout3D: data_format must be 'NCDHW' or 'NDHWC', got {data_format!r}")
        self.data_format = data_format

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return dropout3d(input, self.p, self.training, self.data_format)

    def extra_repr(self) -> str:
        return f"p={self.p}, data_format={self.data_format}"
