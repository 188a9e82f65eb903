"""paddle's ``fleet.utils.hybrid_parallel_util``: bringing a hybrid job's ranks in step.

``broadcast_dp_parameters`` / ``broadcast_mp_parameters`` / ``broadcast_sharding_parameters`` /
``broadcast_sep_parameters`` give every rank of that group its first rank's parameters and buffers (``sync_params_buffers``,
the model-parallel one leaving split weights alone); ``broadcast_input_data`` gives the
model-parallel group its first rank's inputs; ``fused_allreduce_gradients`` averages gradients
over the data-parallel group (and sums them over the sep group, with sep), ``fused_allreduce_gradients_with_group`` over any group, scaled as
asked."""
from __future__ import annotations

from collections import namedtuple
from typing import Any, Dict, List, Tuple

import pycoll.distributed as dist
from pycoll.parallel import sync_params_buffers
from pycoll.parallel.fused import fused_allreduce_gradients, fused_allreduce_gradients_with_group
from pycoll.tensor import Tensor, wrap

__all__ = ["broadcast_dp_parameters", "broadcast_input_data", "broadcast_mp_parameters", "broadcast_sep_parameters",
           "broadcast_sharding_parameters", "fused_allreduce_gradients", "fused_allreduce_gradients_with_group",
           "obtain_optimizer_parameters_list", "sync_params_buffers", "unwrap_optimizer"]

_Sent = namedtuple("_Sent", "shape dtype")  # a tensor's place in the inputs the first rank describes


def broadcast_dp_parameters(model: Any, hcg: Any, fuse_params: bool = True) -> None:
    sync_params_buffers(model, hcg.get_data_parallel_group(), hcg.get_data_parallel_group_src_rank(),
                        is_model_parallel=False, fuse_params=fuse_params)


def broadcast_mp_parameters(model: Any, hcg: Any, fuse_params: bool = True) -> None:
    """Split weights (``is_distributed``) keep each rank's own block."""
    sync_params_buffers(model, hcg.get_model_parallel_group(), hcg.get_model_parallel_group_src_rank(),
                        is_model_parallel=True, fuse_params=fuse_params)


def broadcast_sep_parameters(model: Any, hcg: Any, fuse_params: bool = True) -> None:
    sync_params_buffers(model, hcg.get_sep_parallel_group(), hcg.get_sep_parallel_group_src_rank(),
                        is_model_parallel=False, fuse_params=fuse_params)


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


def obtain_optimizer_parameters_list(optimizer: Any) -> List[Any]:
    """Every parameter ``optimizer`` updates, its groups' in order (paddle's helper; fleet's
    wrappers answer for the optimizer inside)."""
    return list(optimizer._parameter_list)


def unwrap_optimizer(optimizer: Any, optimizer_instances: Tuple[type, ...] = ()) -> Any:
    """The optimizer inside ``optimizer`` while it is one of ``optimizer_instances`` (wrappers with
    paddle's ``_inner_opt``)."""
    while isinstance(optimizer, optimizer_instances):
        optimizer = optimizer._inner_opt
    return optimizer
