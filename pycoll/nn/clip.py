"""Gradient clipping, paddle's ``grad_clip=`` of the optimizers: ``ClipGradByValue``,
``ClipGradByNorm``, ``ClipGradByGlobalNorm``.

The optimizer calls ``clip(grads)`` on the arrays it is about to apply (before weight decay, as
paddle does) and uses what comes back; the ``.grad`` of the parameters is left as it was. Where a
gradient is spread over ranks (sharding's pieces, model parallelism's split weights), the norms'
sums of squares (one per gradient, in the same order on every rank) are completed by the
``sum_across`` the caller gives, an all-reduce. The caller also gives the gradients' parameters
(``params``, in the same order), for a clip that treats some parameters apart (the MoE clip's
expert weights); these clips do not read them.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from pycoll.device import array_module
from pycoll.tensor import wrap

SumAcross = Callable[[np.ndarray], np.ndarray]  # this rank's sums of squares, one per gradient -> the whole ones


def _positive(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{name} must be a number > 0, got {value!r}")
    return float(value)


class _Clip:
    def clip(self, grads: Sequence[Optional[Any]], sum_across: Optional[SumAcross] = None,
             params: Optional[Sequence[Any]] = None) -> List[Optional[Any]]:
        raise NotImplementedError

    def __call__(self, params_grads: Sequence[Tuple[Any, Any]]) -> List[Tuple[Any, Any]]:
        """paddle's call: ``[(param, grad), ...]`` with the gradients clipped (new Tensors)."""
        clipped = self.clip([None if g is None else g.array for _, g in params_grads],
                            params=[p for p, _ in params_grads])
        return [(p, None if g is None else wrap(g)) for (p, _), g in zip(params_grads, clipped)]


def _square_sums(grads: Sequence[Optional[Any]]) -> np.ndarray:
    return np.array([0.0 if g is None else float((g.astype(np.float64) ** 2).sum()) for g in grads])


class ClipGradByValue(_Clip):
    """Every gradient element into ``[min, max]`` (``min`` defaults to ``-max``)."""

    def __init__(self, max: float, min: Optional[float] = None):
        self.max = float(max)
        self.min = -self.max if min is None else float(min)
        if self.min > self.max:
            raise ValueError(f"ClipGradByValue: min={self.min} is above max={self.max}")

    def clip(self, grads: Sequence[Optional[Any]], sum_across: Optional[SumAcross] = None,
             params: Optional[Sequence[Any]] = None) -> List[Optional[Any]]:
        return [None if g is None else array_module(g).clip(g, self.min, self.max) for g in grads]


class ClipGradByNorm(_Clip):
    """Each gradient scaled to an L2 norm of at most ``clip_norm``."""

    def __init__(self, clip_norm: float):
        self.clip_norm = _positive(clip_norm, "clip_norm")

    def clip(self, grads: Sequence[Optional[Any]], sum_across: Optional[SumAcross] = None,
             params: Optional[Sequence[Any]] = None) -> List[Optional[Any]]:
        sums = _square_sums(grads)
        norms = np.sqrt(sum_across(sums) if sum_across is not None else sums)
        return [None if g is None else g * g.dtype.type(self.clip_norm / max(float(n), self.clip_norm))
                for g, n in zip(grads, norms)]


class ClipGradByGlobalNorm(_Clip):
    """All gradients scaled together so that the L2 norm of all of them at once is at most
    ``clip_norm``. ``group_name`` and ``auto_skip_clip`` are accepted for paddle's signature."""

    def __init__(self, clip_norm: float, group_name: str = "default_group", auto_skip_clip: bool = False):
        self.clip_norm = _positive(clip_norm, "clip_norm")
        self.group_name = group_name

    def clip(self, grads: Sequence[Optional[Any]], sum_across: Optional[SumAcross] = None,
             params: Optional[Sequence[Any]] = None) -> List[Optional[Any]]:
        sums = _square_sums(grads)
        norm = float(np.sqrt((sum_across(sums) if sum_across is not None else sums).sum()))
        scale = self.clip_norm / max(norm, self.clip_norm)
        return [None if g is None else g * g.dtype.type(scale) for g in grads]  # a NumPy scalar: CuPy takes it
