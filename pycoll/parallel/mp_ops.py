"""The collectives of tensor (model) parallelism, as autograd functions (paddle's mp_ops names).

Each forward collective has the backward that makes the split computation differentiate like the
unsplit one: an identity whose consumers are spread over the group sums their gradients
(identity <-> all-reduce), and a slice of the last axis gathers its gradient back
(split <-> all-gather).

    _c_identity    forward: identity                      backward: all-reduce (sum)
    _mp_allreduce  forward: all-reduce (sum)              backward: identity
    _c_split       forward: this rank's last-axis slice   backward: all-gather along the last axis
    _c_concat      forward: all-gather along last axis    backward: this rank's last-axis slice

``group=None`` is the world. In a group of one rank every function is the identity and nothing is
communicated (so the layers also run in a plain single process). Gradients are copied before
they are reduced in place: the autograd walk may hand the same gradient array to other inputs.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import pycoll.distributed as dist
from pycoll.autograd import PyLayer, PyLayerContext
from pycoll.device import array_module
from pycoll.tensor import Tensor, wrap


_model_parallel_group: Optional[dist.Group] = None  # fleet.init's, for layers given no group


def set_model_parallel_group(group: Optional[dist.Group]) -> None:
    """The group model-parallel layers made without one use (fleet.init sets its mp group)."""
    global _model_parallel_group
    _model_parallel_group = group


def model_parallel_group() -> Optional[dist.Group]:
    """The default group of the model-parallel layers: fleet's mp group, else None (the world)."""
    return _model_parallel_group


def group_position(group: Optional[dist.Group], fn: str) -> Tuple[int, int]:
    """(this rank's index in ``group``, the group's size); ValueError for a group this rank is not in."""
    if group is not None and not isinstance(group, dist.Group):
        raise TypeError(f"{fn}: group must be a Group from pycoll.distributed.new_group() or None "
                        f"(the world), got {type(group).__name__}")
    rank, nranks = dist.get_rank(group), dist.get_world_size(group)
    if rank < 0:
        raise ValueError(f"{fn}: this process (global rank {dist.get_rank()}) is not a member of "
                         f"{group.describe()}; only its members may use it")
    return rank, nranks


def _all_reduce(arr: Any, group: Optional[dist.Group]) -> Any:
    out = arr.copy()
    dist.all_reduce(out, group=group)
    return out


def _gather_last(arr: Any, group: Optional[dist.Group]) -> Any:
    parts: list = []
    dist.all_gather(parts, array_module(arr).ascontiguousarray(arr), group=group)
    return array_module(arr).concatenate(parts, axis=-1)


def _slice_last(arr: Any, rank: int, nranks: int, fn: str) -> Any:
    width = arr.shape[-1] if arr.ndim else 0
    if arr.ndim == 0 or width % nranks:
        raise ValueError(f"{fn}: x has shape {list(arr.shape)}; its last axis must divide by the "
                         f"group size {nranks}")
    part = width // nranks
    return arr[..., rank * part:(rank + 1) * part].copy()


class _Identity(PyLayer):
    @staticmethod
    def forward(ctx: PyLayerContext, x: Tensor, group: Optional[dist.Group]) -> Tensor:
        ctx.group = group
        ctx.mark_not_inplace(x)  # a new output: x's other uses do not all-reduce their gradients
        return x

    @staticmethod
    def backward(ctx: PyLayerContext, dy: Tensor) -> Any:
        return _all_reduce(dy.array, ctx.group)


class _AllReduce(PyLayer):
    @staticmethod
    def forward(ctx: PyLayerContext, x: Tensor, group: Optional[dist.Group]) -> Tensor:
        return wrap(_all_reduce(x.array, group))

    @staticmethod
    def backward(ctx: PyLayerContext, dy: Tensor) -> Any:
        return dy


class _Split(PyLayer):
    @staticmethod
    def forward(ctx: PyLayerContext, x: Tensor, group: Optional[dist.Group], rank: int,
                nranks: int) -> Tensor:
        ctx.group = group
        return wrap(_slice_last(x.array, rank, nranks, "_c_split"))

    @staticmethod
    def backward(ctx: PyLayerContext, dy: Tensor) -> Any:
        return _gather_last(dy.array, ctx.group)


class _Concat(PyLayer):
    @staticmethod
    def forward(ctx: PyLayerContext, x: Tensor, group: Optional[dist.Group], rank: int,
                nranks: int) -> Tensor:
        ctx.position = (rank, nranks)
        if x.ndim == 0:
            raise ValueError("_c_concat: x is 0-d; it needs a last axis to concatenate along")
        return wrap(_gather_last(x.array, group))

    @staticmethod
    def backward(ctx: PyLayerContext, dy: Tensor) -> Any:
        return _slice_last(dy.array, *ctx.position, "_c_concat backward")


def _c_identity(tensor: Tensor, group: Optional[dist.Group] = None, skip_c_identity_dynamic: bool = False) -> Tensor:
    """Forward ``tensor`` unchanged; backward all-reduces (sums) the gradient over ``group``.
    (``skip_c_identity_dynamic``: paddle's signature; pycoll has no static graph to skip it in.)"""
    if group_position(group, "_c_identity")[1] == 1:
        return tensor
    return _Identity.apply(tensor, group)


def _mp_allreduce(tensor: Tensor, op: Any = dist.ReduceOp.SUM, group: Optional[dist.Group] = None,
                  use_calc_stream: bool = True, use_model_parallel: bool = True,
                  skip_c_identity_dynamic: bool = False) -> Tensor:
    """Forward: the sum of ``tensor`` over ``group`` (a new tensor); backward passes the gradient
    on. paddle's signature: ``op`` must be SUM (as paddle asserts); the stream and static-graph
    flags change nothing here."""
    if op != dist.ReduceOp.SUM:
        raise ValueError(f"_mp_allreduce: op={op!r}; only ReduceOp.SUM is supported (as in paddle)")
    if group_position(group, "_mp_allreduce")[1] == 1:
        return tensor
    return _AllReduce.apply(tensor, group)


def _c_split(x: Tensor, group: Optional[dist.Group] = None) -> Tensor:
    """Forward: this rank's block of ``x``'s last axis; backward all-gathers the gradient."""
    rank, nranks = group_position(group, "_c_split")
    if nranks == 1:
        return x
    return _Split.apply(x, group, rank, nranks)


def _c_concat(x: Tensor, group: Optional[dist.Group] = None) -> Tensor:
    """Forward: every rank's ``x`` concatenated along the last axis, in group-rank order;
    backward keeps this rank's block of the gradient."""
    rank, nranks = group_position(group, "_c_concat")
    if nranks == 1:
        return x
    return _Concat.apply(x, group, rank, nranks)


class _SoftmaxCrossEntropy(PyLayer):
    """Softmax cross-entropy over logits whose classes are split along the last axis: each rank
    holds ``logits[..., r*V/n:(r+1)*V/n]`` and the whole labels. The row maxima, the exponential
    sums and the labels' logits are combined over the group; no rank ever holds all V columns."""

    @staticmethod
    def forward(ctx: PyLayerContext, logits: Tensor, label: Tensor, group: Optional[dist.Group], rank: int,
                ignore_index: int, softmax_out: Optional[Dict[str, Tensor]] = None) -> Tensor:
        """The loss; the softmax (this rank's columns, no gradient) is put into ``softmax_out``
        under "softmax" when given (paddle's ``return_softmax``; a dict, which PyLayer does not
        take for an input as it would a list of Tensors)."""
        x = logits.array
        xp = array_module(x)
        work = x.astype(xp.float32) if x.dtype.itemsize < 4 else x
        width = x.shape[-1]
        ids = label.array.reshape(x.shape[:-1]).astype(xp.int64) - rank * width
        mine = (ids >= 0) & (ids < width)
        row_max = work.max(axis=-1, keepdims=True)
        dist.all_reduce(row_max, op=dist.ReduceOp.MAX, group=group)
        shifted = work - row_max
        exps = xp.exp(shifted)
        picked = xp.take_along_axis(shifted, xp.where(mine, ids, 0)[..., None], axis=-1)[..., 0] * mine
        totals = xp.stack([exps.sum(axis=-1), picked])  # one all-reduce for both sums
        dist.all_reduce(totals, group=group)
        kept = label.array.reshape(x.shape[:-1]) != ignore_index
        loss = (xp.log(totals[0]) - totals[1]) * kept
        softmax = exps / totals[0][..., None]
        ctx.saved = (softmax, ids, mine, kept, x.dtype)
        if softmax_out is not None:
            softmax_out["softmax"] = wrap(softmax.astype(x.dtype))
        return wrap(loss[..., None].astype(x.dtype))

    @staticmethod
    def backward(ctx: PyLayerContext, dy: Tensor) -> Any:
        softmax, ids, mine, kept, dtype = ctx.saved
        xp = array_module(softmax)
        grad = softmax.copy()
        rows = xp.nonzero(mine.reshape(-1))[0]
        flat = grad.reshape(-1, grad.shape[-1])
        flat[rows, ids.reshape(-1)[rows]] -= 1
        grad *= (dy.array[..., 0] * kept)[..., None]
        return grad.astype(dtype), None


def _c_softmax_with_cross_entropy(logits: Tensor, label: Tensor, group: Optional[dist.Group] = None,
                                  return_softmax: bool = False, ignore_index: int = -100) -> Any:
    """Per-sample loss [..., 1] of softmax cross-entropy over class-split ``logits`` [..., V/n]
    and the whole integer ``label`` ([...] or [..., 1]); 0 where the label is ``ignore_index``.
    With ``return_softmax``, ``(loss, softmax)``: this rank's columns of the softmax over all
    V classes, without gradient, as paddle's."""
    rank, nranks = group_position(group, "_c_softmax_with_cross_entropy")
    if not isinstance(logits, Tensor) or not isinstance(label, Tensor):
        raise TypeError("_c_softmax_with_cross_entropy: input and label must be Tensors, got "
                        f"{type(logits).__name__} and {type(label).__name__}")
    if logits.ndim == 0 or label.ndim not in (logits.ndim - 1, logits.ndim) or (
            label.ndim == logits.ndim and label.shape[-1] != 1) or tuple(label.shape[:logits.ndim - 1]) != tuple(
            logits.shape[:-1]):
        raise ValueError(f"ParallelCrossEntropy: label has shape {label.shape}; for input of shape {logits.shape} "
                         f"it must be {logits.shape[:-1]} or {logits.shape[:-1] + [1]}")
    if label.array.dtype.kind not in "iu":
        raise TypeError(f"ParallelCrossEntropy: label must hold integer class ids, got dtype {label.array.dtype}")
    ids = label.array
    valid = ids[ids != ignore_index]
    if valid.size and (int(valid.min()) < 0 or int(valid.max()) >= logits.shape[-1] * nranks):
        raise ValueError(f"ParallelCrossEntropy: label holds ids in [{int(valid.min())}, {int(valid.max())}]; "
                         f"they must lie in [0, {logits.shape[-1] * nranks}) ({logits.shape[-1]} classes on each of "
                         f"{nranks} ranks) or equal ignore_index={ignore_index}")
    if not return_softmax:
        return _SoftmaxCrossEntropy.apply(logits, label, group, rank, ignore_index)
    softmax: Dict[str, Tensor] = {}
    loss = _SoftmaxCrossEntropy.apply(logits, label, group, rank, ignore_index, softmax)
    return loss, softmax["softmax"]
