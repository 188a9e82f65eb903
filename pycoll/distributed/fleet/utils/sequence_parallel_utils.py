"""paddle's ``fleet.utils.sequence_parallel_utils``: the autograd collectives of sequence
parallelism over fleet's model-parallel group, along dim 0 (the sequence of an ``[s, b, h]``
activation), and the ``sequence_parallel`` mark of a parameter.

    ScatterOp        forward: this rank's 1/n of dim 0       backward: all-gather along dim 0
    GatherOp         forward: all-gather along dim 0         backward: this rank's 1/n of dim 0
    AllGatherOp      forward: all-gather along dim 0         backward: reduce-scatter (sum)
    ReduceScatterOp  forward: reduce-scatter (sum)           backward: all-gather along dim 0

paddle's ``ColumnSequenceParallelLinear`` / ``RowSequenceParallelLinear`` and
``register_sequence_parallel_allreduce_hooks`` (which needs a hook after gradient accumulation,
which pycoll's tensors do not have) are not here."""
from __future__ import annotations

from typing import Any

import pycoll.distributed as dist
from pycoll.autograd import PyLayer, PyLayerContext
from pycoll.device import array_module
from pycoll.distributed.fleet.collective_mode import get_hybrid_communicate_group
from pycoll.tensor import Tensor

__all__ = ["AllGatherOp", "GatherOp", "ReduceScatterOp", "ScatterOp", "is_sequence_parallel_parameter",
           "mark_as_sequence_parallel_parameter"]


def _mp_group() -> dist.Group:
    return get_hybrid_communicate_group().get_model_parallel_group()


def _rows(arr: Any, nranks: int, fn: str) -> int:
    if arr.ndim == 0 or arr.shape[0] % nranks:
        raise ValueError(f"{fn}: the input has shape {list(arr.shape)}; its sequence length (dim 0) must divide "
                         f"by the model-parallel degree {nranks}")
    return arr.shape[0] // nranks


def _scatter(arr: Any, fn: str) -> Any:
    group = _mp_group()
    part = _rows(arr, group.nranks, fn)
    return arr[group.rank * part:(group.rank + 1) * part].copy()


def _all_gather(arr: Any, fn: str) -> Any:
    parts: list = []
    xp = array_module(arr)
    dist.all_gather(parts, xp.ascontiguousarray(arr), group=_mp_group())
    return xp.concatenate(parts, axis=0)


def _reduce_scatter(arr: Any, fn: str) -> Any:
    group = _mp_group()
    part = _rows(arr, group.nranks, fn)
    xp = array_module(arr)
    out = xp.empty((part,) + tuple(arr.shape[1:]), dtype=arr.dtype)
    dist.reduce_scatter(out, [xp.ascontiguousarray(arr[i * part:(i + 1) * part]) for i in range(group.nranks)],
                        group=group)
    return out


class ScatterOp(PyLayer):
    """``[s, b, h]`` -> this rank's ``[s/n, b, h]``; backward all-gathers the gradient."""

    @staticmethod
    def forward(ctx: PyLayerContext, input: Tensor) -> Tensor:
        return Tensor(_scatter(input.array, "ScatterOp"))

    @staticmethod
    def backward(ctx: PyLayerContext, grad: Tensor) -> Any:
        return _all_gather(grad.array, "ScatterOp backward")


class GatherOp(PyLayer):
    """``[s/n, b, h]`` -> ``[s, b, h]``; backward keeps this rank's part of the gradient."""

    @staticmethod
    def forward(ctx: PyLayerContext, input: Tensor) -> Tensor:
        return Tensor(_all_gather(input.array, "GatherOp"))

    @staticmethod
    def backward(ctx: PyLayerContext, grad: Tensor) -> Any:
        return _scatter(grad.array, "GatherOp backward")


class AllGatherOp(PyLayer):
    """``[s/n, b, h]`` -> ``[s, b, h]``; backward sums the ranks' gradients and scatters them."""

    @staticmethod
    def forward(ctx: PyLayerContext, input: Tensor) -> Tensor:
        return Tensor(_all_gather(input.array, "AllGatherOp"))

    @staticmethod
    def backward(ctx: PyLayerContext, grad: Tensor) -> Any:
        return _reduce_scatter(grad.array, "AllGatherOp backward")


class ReduceScatterOp(PyLayer):
    """``[s, b, h]`` summed over the ranks -> this rank's ``[s/n, b, h]``; backward all-gathers."""

    @staticmethod
    def forward(ctx: PyLayerContext, input: Tensor) -> Tensor:
        return Tensor(_reduce_scatter(input.array, "ReduceScatterOp"))

    @staticmethod
    def backward(ctx: PyLayerContext, grad: Tensor) -> Any:
        return _all_gather(grad.array, "ReduceScatterOp backward")


def mark_as_sequence_parallel_parameter(parameter: Any) -> None:
    """Mark ``parameter`` as replicated across a sequence-parallel group (paddle's attribute)."""
    parameter.sequence_parallel = True


def is_sequence_parallel_parameter(parameter: Any) -> bool:
    return getattr(parameter, "sequence_parallel", False)
