"""Gradient clipping, paddle's ``grad_clip=`` of the optimizers: ``ClipGradByValue``,
``ClipGradByNorm``, ``ClipGradByGlobalNorm``.

The optimizer calls ``clip_grads(params, grads)`` on the arrays it is about to apply (before
weight decay, as paddle does) and uses what comes back; the ``.grad`` of the parameters is left as
it was. A parameter whose ``need_clip`` (``ParamAttr(need_clip=False)``) is False keeps its
gradient as it is and counts in no norm, as in paddle's clips; ``clip_grads`` and paddle's call
``clip(params_grads)`` see to that, for every clip, so that no caller filters. Where a gradient is
spread over ranks (sharding's pieces, model parallelism's split weights), the norms' sums of
squares (one per gradient, in the same order on every rank) are completed by an all-reduce: the
``sum_across`` given to ``clip``, which ``clip_grads`` gets from the caller's ``norm_sums(params)``
for the parameters clipped. ``clip`` also gets the gradients' parameters (``params``, in the same
order), for a clip that treats some parameters apart (the MoE clip's expert weights); these clips
do not read them.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from pycoll.device import array_module, to_module
from pycoll.tensor import wrap

SumAcross = Callable[[np.ndarray], np.ndarray]  # this rank's sums of squares, one per gradient -> the whole ones
NormSums = Callable[[List[Any]], Optional[SumAcross]]  # parameters -> the SumAcross of their gradients' sums


def _positive(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{name} must be a number > 0, got {value!r}")
    return float(value)


def needs_clip(param: Any) -> bool:
    """Whether a clip takes ``param``'s gradient: not where its ParamAttr said ``need_clip=False``."""
    return getattr(param, "need_clip", True) is not False


class _Clip:
    def clip(self, grads: Sequence[Optional[Any]], sum_across: Optional[SumAcross] = None,
             params: Optional[Sequence[Any]] = None) -> List[Optional[Any]]:
        """Every one of ``grads`` (arrays) clipped, whatever its parameter's ``need_clip``."""
        raise NotImplementedError

    def clip_grads(self, params: Sequence[Any], grads: Sequence[Optional[Any]],
                   norm_sums: Optional[NormSums] = None) -> List[Optional[Any]]:
        """``grads`` (arrays, or None), the gradients of ``params`` in order, clipped where the
        parameter's ``need_clip`` is not False; the others come back as they were and are left
        out of the norms. ``norm_sums(clipped_params)`` gives the ``sum_across`` completing the
        clipped gradients' sums of squares (None: each rank's sums are whole). Asked for those
        parameters alone, not padded with zeros, because a ``sum_across`` may fold other ranks'
        share into one of its rows (a pipeline's), which must be a clipped one."""
        if len(params) != len(grads):
            raise ValueError(f"clip_grads: params has {len(params)} entries and grads {len(grads)}; "
                             f"they must pair up")
        kept = [i for i, p in enumerate(params) if needs_clip(p)]
        out = list(grads)
        if not kept:
            return out
        chosen = [params[i] for i in kept]
        done = self.clip([grads[i] for i in kept], None if norm_sums is None else norm_sums(chosen), params=chosen)
        for i, grad in zip(kept, done):
            out[i] = grad
        return out

    def __call__(self, params_grads: Sequence[Tuple[Any, Any]]) -> List[Tuple[Any, Any]]:
        """paddle's call: ``[(param, grad), ...]`` with the gradients clipped (new Tensors), those
        of parameters with ``need_clip=False`` as they were."""
        grads = [None if g is None else g.array for _, g in params_grads]
        clipped = self.clip_grads([p for p, _ in params_grads], grads)
        return [(p, g if new is old else None if new is None else wrap(new))
                for (p, g), new, old in zip(params_grads, clipped, grads)]


def _square_sums(grads: Sequence[Optional[Any]], sum_across: Optional[SumAcross]) -> Any:
    """Each gradient's sum of squares, in float64 (0 for a missing gradient), completed by
    ``sum_across`` where given. Without ``sum_across`` they stay where the gradients are (on a GPU,
    a device array: the clip reads nothing back to the host); ``sum_across`` takes and gives host
    arrays, so then they come to the host in one read."""
    present = [g for g in grads if g is not None]
    xp = array_module(present[0]) if present else np
    sums = [_square_sum(g, xp) for g in present]
    stacked = xp.stack(sums) if sums else xp.zeros(0, np.float64)
    if len(present) < len(grads):  # put zeros where a gradient is missing
        full = xp.zeros(len(grads), np.float64)
        full[[i for i, g in enumerate(grads) if g is not None]] = stacked
        stacked = full
    if sum_across is None:
        return stacked
    return sum_across(to_module(stacked, np))


def _square_sum(g: Any, xp: Any) -> Any:
    """g's sum of squares (of magnitudes), accumulated in float64 without a float64 copy of g
    (half-precision squares are taken in float32: they would overflow in their own dtype)."""
    if g.dtype.kind == "c":
        return xp.vdot(g, g).real.astype(np.float64)
    if g.dtype.itemsize < 4:
        g = g.astype(np.float32)
    return xp.square(g).sum(dtype=np.float64)


def _scaled(grads: Sequence[Optional[Any]], scales: Any) -> List[Optional[Any]]:
    """Each gradient times its scale (``scales``: one per gradient, float64, on the gradients'
    device or the host), the scale rounded to the gradient's dtype first, as paddle's kernels do."""
    present = [g for g in grads if g is not None]
    if not present:
        return list(grads)
    xp = array_module(present[0])
    scales = to_module(scales, xp)
    cast = {}
    for g in present:  # one cast of all the scales per dtype
        if g.dtype not in cast:
            cast[g.dtype] = scales.astype(g.dtype, copy=False)
    return [None if g is None else g * cast[g.dtype][i] for i, g in enumerate(grads)]


class ClipGradByValue(_Clip):
    """Every gradient element into ``[min, max]`` (``min`` defaults to ``-max``)."""

    def __init__(self, max: float, min: Optional[float] = None):
        self.max = float(max)
        self.min = -self.max if min is None else float(min)
        if self.min > self.max:
            raise ValueError(f"ClipGradByValue: min={self.min} is above max={self.max}")

    def __str__(self) -> str:
        return f"Clip Gradient By Value, min = {self.min:f}, max={self.max:f}"  # paddle's words

    def clip(self, grads: Sequence[Optional[Any]], sum_across: Optional[SumAcross] = None,
             params: Optional[Sequence[Any]] = None) -> List[Optional[Any]]:
        # (in g's dtype: NumPy's clip of bfloat16 by Python floats gives float32)
        return [None if g is None else array_module(g).clip(g, self.min, self.max).astype(g.dtype, copy=False)
                for g in grads]


class ClipGradByNorm(_Clip):
    """Each gradient scaled to an L2 norm of at most ``clip_norm``."""

    def __init__(self, clip_norm: float):
        self.clip_norm = _positive(clip_norm, "clip_norm")

    def __str__(self) -> str:
        return f"Gradient Clip By Norm, clip_norm={self.clip_norm:f}"

    def clip(self, grads: Sequence[Optional[Any]], sum_across: Optional[SumAcross] = None,
             params: Optional[Sequence[Any]] = None) -> List[Optional[Any]]:
        sums = _square_sums(grads, sum_across)
        xp = array_module(sums)
        norms = xp.sqrt(sums)
        return _scaled(grads, self.clip_norm / xp.maximum(norms, self.clip_norm))


class ClipGradByGlobalNorm(_Clip):
    """All gradients scaled together so that the L2 norm of all of them at once is at most
    ``clip_norm``. ``group_name`` and ``auto_skip_clip`` are accepted for paddle's signature."""

    def __init__(self, clip_norm: float, group_name: str = "default_group", auto_skip_clip: bool = False):
        self.clip_norm = _positive(clip_norm, "clip_norm")
        self.group_name = group_name

    def __str__(self) -> str:
        return f"Gradient Clip By GlobalNorm, global_norm={self.clip_norm:f}"

    def clip(self, grads: Sequence[Optional[Any]], sum_across: Optional[SumAcross] = None,
             params: Optional[Sequence[Any]] = None) -> List[Optional[Any]]:
        sums = _square_sums(grads, sum_across)
        xp = array_module(sums)
        norm = xp.sqrt(sums.sum())
        scale = self.clip_norm / xp.maximum(norm, self.clip_norm)  # 0-d, on the gradients' device
        return _scaled(grads, xp.broadcast_to(scale, (len(grads),)))
