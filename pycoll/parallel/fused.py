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
from pycoll.tensor import wrap


def fused_allreduce_gradients(params: Sequence[Any], hcg: Any = None) -> None:
    """Average the gradients of ``params`` over the data-parallel ranks (paddle's fleet utility):
    ``hcg.get_data_parallel_group()`` when paddle's hybrid communicate group is given, otherwise
    the world; one buffer per dtype, the 1/world scale folded into its flatten. With a sep degree
    above 1 they are also summed over the sep ranks, as paddle's: over ``hcg``'s data x sep group,
    scaled by 1 / dp_degree."""
    if hcg is not None and hcg.get_sep_parallel_world_size() > 1:
        fused_allreduce_gradients_with_group(params, hcg.get_dp_sep_parallel_group(), bucket_size=1 << 62,
                                             scale=1.0 / hcg.get_data_parallel_world_size())
        return
    group = hcg.get_data_parallel_group() if hcg is not None else None
    fused_allreduce_gradients_with_group(params, group, bucket_size=1 << 62)


def fused_allreduce_gradients_with_group(parameter_list: Sequence[Any], group: Optional[Any],
                                         bucket_size: int = 128 * 1024 * 1024,
                                         scale: Optional[float] = None) -> None:
    """Sum the gradients of ``parameter_list`` over ``group`` (None: the world), multiplied by
    ``scale`` (default ``1 / group size``: the average), in fused buffers of one dtype of at most
    ``bucket_size`` bytes each (a larger gradient gets its own). The trainable parameters are
    reduced (a frozen one is skipped, as paddle's): one without a gradient on this rank sends
    zeros, and gets the sum where another rank had a gradient (it stays None where none did).
    So ranks whose backwards reached different parameters (a branch taken on one rank only) still
    pair every parameter with itself; paddle's buffers would then differ from rank to rank."""
    if isinstance(bucket_size, bool) or not isinstance(bucket_size, int) or bucket_size < 1:
        raise ValueError(f"fused_allreduce_gradients_with_group: bucket_size={bucket_size!r}; it must be a "
                         f"positive number of bytes")
    factor = 1.0 / dist.get_world_size(group) if scale is None else float(scale)
    params = [p for p in parameter_list if not p.stop_gradient]
    grads = [_gradient_or_zeros(p) for p in params]
    missing = {id(g): p for p, g in zip(params, grads) if _gradient(p) is None}
    for bucket in _buckets(grads, bucket_size):
        size = sum(g.size for g in bucket)
        # one more element per gradient: 1 where this rank had it, so that after the sum every
        # rank knows whether any rank did
        xp = array_module(bucket[0])
        flat = xp.empty(size + len(bucket), bucket[0].dtype)
        kernels.flatten(bucket, out=flat[:size], scale=None if factor == 1.0 else factor)
        flat[size:] = xp.asarray([id(g) not in missing for g in bucket], dtype=flat.dtype)
        dist.all_reduce(flat, group=group)
        kernels.unflatten(flat[:size], bucket)
        if missing:
            for g, had in zip(bucket, flat[size:].tolist()):  # on a GPU: one sync a bucket
                if id(g) in missing and had > 0:
                    _set_gradient(missing[id(g)], g)


def _gradient(param: Any) -> Any:
    return param.main_grad if hasattr(param, "main_grad") else param.grad


def _gradient_or_zeros(param: Any) -> Any:
    """The array of ``param``'s gradient, or zeros in its place (float32 for a main_grad)."""
    grad = _gradient(param)
    if grad is not None:
        return grad.array
    dtype = np.float32 if hasattr(param, "main_grad") else param.array.dtype
    return array_module(param.array).zeros(param.array.shape, dtype)


def _set_gradient(param: Any, array: Any) -> None:
    if hasattr(param, "main_grad"):
        param.main_grad = wrap(array)
    else:
        param.grad = array


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
