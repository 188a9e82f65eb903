"""paddle's ``fleet.utils.hybrid_parallel_util``: bringing a hybrid job's ranks in step.

``broadcast_dp_parameters`` / ``broadcast_mp_parameters`` / ``broadcast_sharding_parameters``
give every rank of that group its first rank's parameters and buffers (``sync_params_buffers``,
the model-parallel one leaving split weights alone); ``broadcast_input_data`` gives the
model-parallel group its first rank's inputs; ``fused_allreduce_gradients`` averages gradients
over the data-parallel group, ``fused_allreduce_gradients_with_group`` over any group, scaled as
asked."""
from __future__ import annotations

from collections import namedtuple
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

import pycoll.distributed as dist
from pycoll import kernels
from pycoll.device import array_module
from pycoll.parallel import sync_params_buffers
from pycoll.parallel.fused import fused_allreduce_gradients
from pycoll.tensor import Tensor, wrap

__all__ = ["broadcast_dp_parameters", "broadcast_input_data", "broadcast_mp_parameters",
           "broadcast_sharding_parameters", "fused_allreduce_gradients", "fused_allreduce_gradients_with_group",
           "sync_params_buffers"]

_Sent = namedtuple("_Sent", "shape dtype")  # a tensor's place in the inputs the first rank describes


def broadcast_dp_parameters(model: Any, hcg: Any, fuse_params: bool = True) -> None:
    sync_params_buffers(model, hcg.get_data_parallel_group(), hcg.get_data_parallel_group_src_rank(),
                        is_model_parallel=False, fuse_params=fuse_params)


def broadcast_mp_parameters(model: Any, hcg: Any, fuse_params: bool = True) -> None:
    """Split weights (``is_distributed``) keep each rank's own block."""
    sync_params_buffers(model, hcg.get_model_parallel_group(), hcg.get_model_parallel_group_src_rank(),
                        is_model_parallel=True, fuse_params=fuse_params)


def broadcast_sharding_parameters(model: Any, hcg: Any, fuse_params: bool = True) -> None:
    sync_params_buffers(model, hcg.get_sharding_parallel_group(), hcg.get_sharding_parallel_group_src_rank(),
                        is_model_parallel=False, fuse_params=fuse_params)


def broadcast_input_data(hcg: Any, *inputs: Any, **kwargs: Any) -> Tuple[Tuple[Any, ...], Dict[str, Any]]:
    """The model-parallel group's first rank's ``inputs`` and ``kwargs`` on every rank of it:
    tensors (in lists, tuples and dicts too) are written in place (taking that rank's shape when
    theirs differs), other values are that rank's. Returns ``(inputs, kwargs)`` so rebuilt
    (paddle's, on GPUs only, returns Nones and counts on the in-place writes; pycoll also runs it
    on the CPU)."""
    group, src = hcg.get_model_parallel_group(), hcg.get_model_parallel_group_src_rank()
    if group.nranks == 1:
        return inputs, kwargs
    layout = [_layout((inputs, kwargs)) if dist.get_rank() == src else None]
    dist.broadcast_object_list(layout, src=src, group=group)
    return _received(layout[0], (inputs, kwargs), group, src)


def _layout(data: Any) -> Any:
    """``data`` with each tensor replaced by its shape and dtype."""
    if isinstance(data, Tensor):
        return _Sent(tuple(data.shape), data.array.dtype)
    if isinstance(data, dict):
        return {key: _layout(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return type(data)(_layout(value) for value in data)
    return data


def _received(layout: Any, mine: Any, group: dist.Group, src: int) -> Any:
    """``layout`` filled: a tensor from the first rank for each ``_Sent`` (into this rank's own
    tensor at that place when there is one), the first rank's value for everything else."""
    if isinstance(layout, _Sent):
        fits = isinstance(mine, Tensor) and tuple(mine.shape) == layout.shape and mine.array.dtype == layout.dtype
        arr = mine.array if fits else group.array_module.empty(layout.shape, layout.dtype)
        dist.broadcast(arr, src=src, group=group)
        if fits:
            return mine
        if isinstance(mine, Tensor) and mine.array.dtype == layout.dtype:
            mine._set_data(arr)  # another shape: the tensor holds the first rank's from now on
            return mine
        return wrap(arr)
    if isinstance(layout, dict):
        return {key: _received(value, mine.get(key) if isinstance(mine, dict) else None, group, src)
                for key, value in layout.items()}
    if isinstance(layout, (list, tuple)):
        own = list(mine) if isinstance(mine, (list, tuple)) else []
        return type(layout)(_received(value, own[i] if i < len(own) else None, group, src)
                            for i, value in enumerate(layout))
    return layout


def fused_allreduce_gradients_with_group(parameter_list: Sequence[Any], group: Optional[dist.Group],
                                         bucket_size: int = 128 * 1024 * 1024,
                                         scale: Optional[float] = None) -> None:
    """Sum the ``.grad`` of ``parameter_list`` over ``group`` (None: the world), multiplied by
    ``scale`` (default ``1 / group size``: the average), in fused buffers of one dtype of at most
    ``bucket_size`` bytes each (a larger gradient gets its own). Parameters without a gradient are
    skipped; every rank must have gradients for the same ones."""
    if isinstance(bucket_size, bool) or not isinstance(bucket_size, int) or bucket_size < 1:
        raise ValueError(f"fused_allreduce_gradients_with_group: bucket_size={bucket_size!r}; it must be a "
                         f"positive number of bytes")
    factor = 1.0 / dist.get_world_size(group) if scale is None else float(scale)
    for grads in _buckets([p.grad.array for p in parameter_list if p.grad is not None], bucket_size):
        flat = array_module(grads[0]).empty(sum(g.size for g in grads), grads[0].dtype)
        kernels.flatten(grads, out=flat, scale=None if factor == 1.0 else factor)
        dist.all_reduce(flat, group=group)
        kernels.unflatten(flat, grads)


def _buckets(grads: List[Any], bucket_size: int) -> List[List[Any]]:
    """``grads`` by dtype, in order, cut into runs of at most ``bucket_size`` bytes."""
    by_dtype: Dict[Any, List[List[Any]]] = {}
    for grad in grads:
        runs = by_dtype.setdefault(np.dtype(grad.dtype), [[]])
        if runs[-1] and sum(g.nbytes for g in runs[-1]) + grad.nbytes > bucket_size:
            runs.append([])
        runs[-1].append(grad)
    return [run for runs in by_dtype.values() for run in runs]
