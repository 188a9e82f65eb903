"""``fused_allreduce_gradients``: average gradients across ranks in one fused buffer per dtype."""
from __future__ import annotations

from typing import Any, Sequence

import pycoll.distributed as dist
from pycoll import kernels
from pycoll.device import array_module


def fused_allreduce_gradients(params: Sequence[Any], hcg: Any = None) -> None:
    """Average the ``.grad`` of ``params`` over the data-parallel ranks (paddle's fleet utility).

    Gradients of one dtype are flattened into one buffer with the 1/world scale folded in,
    all-reduced once, and written back. Parameters without a gradient are skipped (every rank
    must have the same parameters with gradients). ``hcg`` is paddle's hybrid communicate group:
    when given, its ``get_data_parallel_group()`` is used; otherwise the world.
    """
    group = hcg.get_data_parallel_group() if hcg is not None else None
    world = dist.get_world_size(group)
    by_dtype = {}
    for p in params:
        if p.grad is not None:
            by_dtype.setdefault(p.grad.array.dtype, []).append(p.grad.array)
    for grads in by_dtype.values():
        flat = array_module(grads[0]).empty(sum(g.size for g in grads), grads[0].dtype)
        kernels.flatten(grads, out=flat, scale=1.0 / world)
        dist.all_reduce(flat, group=group)
        kernels.unflatten(flat, grads)
