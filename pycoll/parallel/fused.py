"""``fused_allreduce_gradients`` and ``fused_allreduce_gradients_with_group``: gradients summed
across ranks through fused buffers of one dtype each.

A parameter's gradient here is paddle's: its ``main_grad`` where it has one (fleet's
``MixPrecisionLayer`` keeps the float32 sum of the backwards there and empties ``.grad``), else
its ``.grad``."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import numpy as np

import pycoll.distributed as dist
from pycoll import kernels
from pycoll.device import array_module


def fused_allreduce_gradients(params: Sequence[Any], hcg: Any = None) -> None:
    """Average the gradients of ``params`` over the data-parallel ranks (paddle's fleet utility):
    ``hcg.get_data_parallel_group()`` when paddle's hybrid communicate group is given, otherwise
    the world; one buffer per dtype, the 1/world scale folded into its flatten."""
    group = hcg.get_data_parallel_group() if hcg is not None else None
    fused_allreduce_gradients_with_group(params, group, bucket_size=1 << 62)


def fused_allreduce_gradients_with_group(parameter_list: Sequence[Any], group: Optional[Any],
                                         bucket_size: int = 128 * 1024 * 1024,
                                         scale: Optional[float] = None) -> None:
    """Sum the gradients of ``parameter_list`` over ``group`` (None: the world), multiplied by
    ``scale`` (default ``1 / group size``: the average), in fused buffers of one dtype of at most
    ``bucket_size`` bytes each (a larger gradient gets its own). Parameters without a gradient are
    skipped; every rank must have gradients for the same ones."""
    if isinstance(bucket_size, bool) or not isinstance(bucket_size, int) or bucket_size < 1:
        raise ValueError(f"fused_allreduce_gradients_with_group: bucket_size={bucket_size!r}; it must be a "
                         f"positive number of bytes")
    factor = 1.0 / dist.get_world_size(group) if scale is None else float(scale)
    gradients = (_gradient(p) for p in parameter_list)
    for grads in _buckets([g.array for g in gradients if g is not None], bucket_size):
        flat = array_module(grads[0]).empty(sum(g.size for g in grads), grads[0].dtype)
        kernels.flatten(grads, out=flat, scale=None if factor == 1.0 else factor)
        dist.all_reduce(flat, group=group)
        kernels.unflatten(flat, grads)


def _gradient(param: Any) -> Any:
    return param.main_grad if hasattr(param, "main_grad") else param.grad


def _buckets(grads: List[Any], bucket_size: int) -> List[List[Any]]:
    """``grads`` by dtype, in order, cut into runs of at most ``bucket_size`` bytes."""
    by_dtype: Dict[Any, List[List[Any]]] = {}
    filled: Dict[Any, int] = {}  # bytes in each dtype's last run
    for grad in grads:
        dtype = np.dtype(grad.dtype)
        runs = by_dtype.setdefault(dtype, [[]])
        if runs[-1] and filled[dtype] + grad.nbytes > bucket_size:
            runs.append([])
            filled[dtype] = 0
        runs[-1].append(grad)
        filled[dtype] = filled.get(dtype, 0) + grad.nbytes
    return [run for runs in by_dtype.values() for run in runs]
