"""The routing kernels of paddle's MoE (``paddle.distributed.models.moe.utils``' ``number_count``,
``assign_pos``, ``limit_by_capacity``, ``prune_gate_by_capacity``, ``random_routing``) on NumPy
or CuPy integer arrays, without gradients.

A gate index of -1 is a dropped choice: no kernel counts, places or keeps it. paddle runs these
as CUDA kernels whose atomics decide the orders the docs show; here the same orders are fixed:
capacity goes to the workers in rank order and, on a worker, to its choices in token order;
``assign_pos`` lists each expert's choices from the last to the first, as paddle's docs do.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from pycoll.device import array_module


def number_count(numbers: Any, upper_range: int) -> Any:
    """How many entries of ``numbers`` (any shape) name each expert ``0 .. upper_range - 1``."""
    xp = array_module(numbers)
    flat = numbers.reshape(-1)
    valid = flat[(flat >= 0) & (flat < upper_range)]
    return xp.bincount(valid.astype(np.int64), minlength=upper_range).astype(np.int64)


def assign_pos(numbers: Any, cum_count: Any) -> Any:
    """The flat positions of ``numbers``' valid entries grouped by expert (expert 0's first),
    ``cum_count[-1]`` of them (``cum_count``: the cumulative ``number_count``)."""
    xp = array_module(numbers)
    flat = numbers.reshape(-1)
    valid = xp.nonzero(flat >= 0)[0][::-1]
    pos = valid[xp.argsort(flat[valid], kind="stable")]
    return pos[:int(cum_count[-1])].astype(np.int64)


def limit_by_capacity(expert_count: Any, capacity: Any, n_worker: int) -> Any:
    """``expert_count`` (``n_worker * E`` counts: worker ``w``'s for expert ``e`` at ``w * E + e``)
    cut so that each expert takes at most ``capacity[e]`` in all, the workers served in order."""
    xp = array_module(expert_count)
    counts = expert_count.reshape(n_worker, -1)
    before = xp.cumsum(counts, axis=0) - counts
    left = xp.clip(xp.asarray(capacity).reshape(1, -1) - before, 0, None)
    return xp.minimum(counts, left).reshape(-1).astype(expert_count.dtype)


def prune_gate_by_capacity(gate_idx: Any, expert_count: Any, n_expert: int, n_worker: int) -> Any:
    """``gate_idx`` with -1 where an expert's allowance (``expert_count``, one per global expert,
    ``n_expert * n_worker`` of them) is used up by earlier entries (flat order)."""
    xp = array_module(gate_idx)
    if expert_count.size != n_expert * n_worker:
        raise ValueError(f"prune_gate_by_capacity: expert_count has {expert_count.size} entries, it needs "
                         f"n_expert * n_worker = {n_expert * n_worker}")
    flat = gate_idx.reshape(-1).astype(np.int64)
    bins = flat + 1  # -1 gets a bin of its own
    order = xp.argsort(bins, kind="stable")
    counts = xp.bincount(bins, minlength=n_expert * n_worker + 1)
    starts = xp.cumsum(counts) - counts
    rank = xp.empty_like(flat)
    rank[order] = xp.arange(flat.size, dtype=np.int64) - starts[bins[order]]
    allowed = xp.concatenate([xp.zeros(1, dtype=np.int64), expert_count.reshape(-1).astype(np.int64)])[bins]
    kept = (flat >= 0) & (rank < allowed)
    return xp.where(kept, flat, -1).reshape(gate_idx.shape).astype(gate_idx.dtype)


def random_routing(topk_idx: Any, topk_value: Any, prob: Any, topk: int = 2) -> Any:
    """GShard's random policy: the last choice of row ``i`` dropped (-1) where
    ``topk * topk_value[i, -1] < prob[i]``."""
    if topk != 2:
        raise ValueError(f"random_routing: only topk=2 is supported, got {topk}")
    xp = array_module(topk_idx)
    out = topk_idx.copy()
    out[:, topk - 1] = xp.where(topk * topk_value[:, topk - 1] < prob.reshape(-1), -1, topk_idx[:, topk - 1])
    return out
