"""Gradient clipping over gradients held in pieces: a clip's norm is that of the whole gradient.

A parameter cut over ranks (model parallelism's split weights, auto-parallel's distributed
parameters) holds one piece of its gradient on each rank; the optimizer's clip adds up this
rank's squares only. ``completing(cut_of)`` gives the optimizer's ``norm_sums`` hook (see
``Optimizer.complete_norms_with``): each gradient's sum of squares is added up over the groups
``cut_of`` names for its parameter, one small all-reduce per group, in the same order on every
rank (every rank steps the same parameters). Gradients held whole are left as they are.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional

import numpy as np

import pycoll.distributed as dist

CutOf = Callable[[Any], List[Any]]  # a parameter -> the groups whose ranks hold its gradient's pieces


def completing(cut_of: CutOf) -> Callable[[List[Any]], Optional[Callable[[np.ndarray], np.ndarray]]]:
    """The ``norm_sums`` hook for parameters whose cuts ``cut_of`` names."""
    def for_params(params: List[Any]) -> Optional[Callable[[np.ndarray], np.ndarray]]:
        cuts = [cut_of(p) for p in params]
        if not any(cuts):
            return None

        def sum_across(sums: np.ndarray) -> np.ndarray:
            total = np.array(sums, dtype=np.float64)
            groups: List[Any] = []
            for cut in cuts:
                groups += [g for g in cut if g is not None and all(g is not h for h in groups)]
            for group in groups:
                rows = [i for i, cut in enumerate(cuts) if any(g is group for g in cut)]
                part = group.array_module.asarray(total[rows])
                dist.all_reduce(part, group=group)
                total[rows] = np.asarray(part.tolist(), dtype=np.float64)
            return total
        return sum_across
    return for_params
