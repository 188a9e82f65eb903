"""paddle.distribution.LKJCholesky: the LKJ distribution (Lewandowski, Kurowicka and Joe, 2009)
over the lower Cholesky factors L of dim x dim correlation matrices, density proportional to
det(L L^T)^(concentration - 1) (with the Jacobian of L -> L L^T, as paddle's log_prob).

Two samplers, paddle's names: "onion" grows the factor row by row, row i being sqrt(y_i) times a
uniform direction of its first i entries (y_i ~ Beta(i / 2, concentration + (dim - 1 - i) / 2))
and its diagonal completing the unit norm; "cvine" draws the partial correlations
(2 Beta(a_j, a_j) - 1 with a_j = concentration + (dim - 2 - j) / 2 for column j) and turns them
into the factor by cumulative products. Both give what the LKJ law gives each correlation:
(r + 1) / 2 ~ Beta(b, b), b = concentration - 1 + dim / 2. paddle 3.3.1's samplers miss it for
dim >= 3 (its onion draws y_i ~ Beta(i - 1/2, ...); measured at dim 3, concentration 2: variances
0.17-0.22 for its onion and 0.15-0.18 for its cvine where the law says 1/6); pycoll keeps the law,
and paddle's log_prob exactly. Draws come from pycoll's generator (Beta's and the normal
directions'), on the concentration's place; the sample is array work of its module.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from pycoll.device import array_module
from pycoll.diag_ops import diagonal
from pycoll.distribution.base import Distribution, always_float32, as_params, as_value, noise
from pycoll.distribution.base import sample_shape as checked_sample_shape
from pycoll.distribution.gamma import Beta
from pycoll.dtypes import get_default_dtype
from pycoll.incomplete_gamma import multigammaln
from pycoll.tensor import Tensor, wrap

SAMPLE_METHODS = ("onion", "cvine")


class LKJCholesky(Distribution):
    """LKJCholesky(dim, concentration): batch shape is concentration's, event shape (dim, dim)."""

    def __init__(self, dim: int = 2, concentration: Any = 1.0, sample_method: str = "onion") -> None:
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
            raise TypeError(f"LKJCholesky: dim must be an int >= 2, got {dim!r}")
        if dim < 2:
            raise ValueError(f"LKJCholesky: dim must be >= 2, got {dim}")
        if sample_method not in SAMPLE_METHODS:
            raise ValueError(f"LKJCholesky: sample_method must be 'onion' or 'cvine', got {sample_method!r}")
        given_tensor = isinstance(concentration, Tensor)
        (self.concentration,) = as_params("LKJCholesky", always_float32, concentration=concentration)
        if not bool((self.concentration > 0).all()):
            raise ValueError(f"LKJCholesky: concentration must be > 0, got {self.concentration.numpy().tolist()}")
        self.dim = int(dim)
        self.sample_method = sample_method
        self.dtype = self.concentration.dtype.name if given_tensor else get_default_dtype()
        super().__init__(tuple(self.concentration.shape), (self.dim, self.dim))
        self._beta = self._onion_beta() if sample_method == "onion" else self._cvine_beta()

    def _offsets(self, values: Any) -> Tensor:
        """`values` (a host array) as a Tensor of the concentration's dtype and module."""
        c = self.concentration._array
        return wrap(array_module(c).asarray(values, dtype=c.dtype))

    def _onion_beta(self) -> Beta:
        """Row i's squared off-diagonal norm: Beta(i / 2, concentration + (dim - 1 - i) / 2), row 0's unused."""
        half_rows = np.concatenate([[0.0], np.arange(self.dim - 1)]) / 2
        marginal = self.concentration + 0.5 * (self.dim - 2)
        return Beta(self._offsets(half_rows + 0.5), marginal.unsqueeze(-1) - self._offsets(half_rows))

    def _cvine_beta(self) -> Beta:
        """One Beta(a_j, a_j) per strictly-lower entry (row-major), a_j = concentration + (dim - 2 - j) / 2."""
        _, cols = np.tril_indices(self.dim - 1)
        conc = (self.concentration + 0.5 * (self.dim - 2)).unsqueeze(-1) - self._offsets(cols / 2)
        return Beta(conc, conc)

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """Cholesky factors of shape ``sample_shape + batch_shape + (dim, dim)``: lower-triangular, positive
        diagonal, rows of unit norm."""
        shape = checked_sample_shape(sample_shape)
        factor = self._onion(shape) if self.sample_method == "onion" else self._cvine(shape)
        return wrap(factor)

    def _onion(self, shape: Sequence[int]) -> Any:
        y = self._beta.sample(shape)._array[..., None]
        directions = noise(lambda g, s: g.standard_normal(s), self._extend_shape(shape), self.concentration)._array
        xp = array_module(directions)
        directions = xp.tril(directions, -1)[..., 1:, :]
        directions = directions / xp.sqrt((directions * directions).sum(-1, keepdims=True))
        w = xp.sqrt(y) * xp.concatenate([xp.zeros_like(directions[..., :1, :]), directions], axis=-2)
        tiny = xp.finfo(w.dtype).tiny
        on_diagonal = xp.arange(self.dim)
        w[..., on_diagonal, on_diagonal] = xp.sqrt(xp.maximum(1 - (w * w).sum(-1), tiny))
        return w

    def _cvine(self, shape: Sequence[int]) -> Any:
        partial = 2 * self._beta.sample(shape)._array - 1
        xp = array_module(partial)
        r = xp.zeros(partial.shape[:-1] + (self.dim, self.dim), dtype=partial.dtype)
        rows, cols = xp.tril_indices(self.dim, -1)
        r[..., rows, cols] = partial
        # kept inside (-1, 1) by the dtype's eps: paddle's tiny is lost to rounding (1 - tiny == 1), and
        # a Beta draw of exactly 0 or 1 (float32, small concentrations) then zeroed the diagonal
        eps = xp.finfo(r.dtype).eps
        r = xp.clip(r, -1 + eps, 1 - eps)
        remaining = xp.cumprod(xp.sqrt(1 - r * r), axis=-1)
        shifted = xp.concatenate([xp.ones_like(remaining[..., :1]), remaining[..., :-1]], axis=-1)
        return (r + xp.eye(self.dim, dtype=r.dtype)) * shifted

    def log_prob(self, value: Any) -> Tensor:
        """log density of Cholesky factors ``value`` (..., dim, dim): sum over rows i >= 1 of
        (2 (concentration - 1) + dim - 1 - i) log L_ii, less the normalizer of Lewandowski et al."""
        c = self.concentration
        if isinstance(value, Tensor) and value.is_floating_point() and value.dtype != c.dtype:
            dtype = np.promote_types(value.dtype, c.dtype)
            value, c = value.astype(dtype), c.astype(dtype)
        value = as_value(value, c)
        if value.ndim < 2 or tuple(value.shape[-2:]) != (self.dim, self.dim):
            raise ValueError(f"LKJCholesky.log_prob: value must end in ({self.dim}, {self.dim}), "
                             f"got shape {list(value.shape)}")
        dm1 = self.dim - 1
        rows = self._offsets(np.arange(2, self.dim + 1)).astype(c.dtype)
        order = 2 * (c - 1).unsqueeze(-1) + self.dim - rows
        unnormalized = (order * diagonal(value, 0, -2, -1)[..., 1:].log()).sum(-1)
        alpha = c + 0.5 * dm1
        normalizer = 0.5 * dm1 * math.log(math.pi) + multigammaln(alpha - 0.5, dm1) - alpha.lgamma() * dm1
        return unnormalized - normalizer
