"""Placements through eager ops: paddle's dynamic semi-auto training loop.

An op on distributed tensors runs on the local pieces; this module then says what the result
is a piece of (``spmd_rules.py``: paddle's SPMD rules for pycoll's ops) and makes it a
distributed tensor with those placements. A batch split by rows across a mesh dimension
(``shard_dataloader``'s batches, ``shard_tensor(x, mesh, [Shard(0)])``) stays split through
elementwise ops, activations, matmul/linear, reshapes that keep its rows and indexing that takes
them whole; a reduction over the split (a loss: ``mean``, ``sum``, ``cross_entropy``'s
``reduction``) is ``Partial`` (AVG, SUM, MAX, MIN), and so are the linear ops on it
(``loss * 0.5``, ``loss + penalty`` for an average); ops on Replicate inputs give Replicate. An
op the rules cannot place is refused by name (``Refused``), never computed into a wrong whole.
Reading a distributed tensor (``numpy()``, ``item()``, ``float()``, printing) gives the whole
value, as in paddle; it is collective over its mesh, like paddle's.

Gradients follow the same rules backward. Where a split tensor meets one that is whole along
that mesh dimension (a replicated parameter, or any tensor computed from parameters), the whole
tensor's gradient is the sum of every rank's share: it is all-reduced over that dimension's
group right there, in the op's backward (so each parameter ends with the gradient of the whole
batch, exactly once); below a mean over the split it is averaged instead, and the split inputs'
gradients are divided by the ranks. Parameters cut for model parallelism (the tensor-parallel
Linears of ``shard_layer``) count as whole along the data dimension and are summed in the same
way; their layers place their own results.

It runs from the moment ``pycoll.distributed.auto_parallel`` is imported (``follow``), on ops
that take a distributed tensor. DistModel, whose DataParallel already averages the gradients,
runs its step in ``local_only()``.
"""
from __future__ import annotations

import contextlib
import math
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from pycoll import _graph
from pycoll.distributed.auto_parallel.dtensor import DistTensor
from pycoll.distributed.auto_parallel.placements import Partial, Placement, ReduceOp, Replicate
from pycoll.distributed.auto_parallel.program import describe_fn
from pycoll.distributed.auto_parallel.spmd_rules import Refused, Seen, along, seen_along
from pycoll.nn import Parameter

_handle: Optional[_graph.RemovableHandle] = None
_suspended = 0

def follow() -> None:
    """Start following splits through ops (once)."""
    global _handle
    if _handle is None:
        _handle = _graph.add_record_hook(_on_record)


@contextlib.contextmanager
def local_only() -> Iterator[None]:
    """Ops on distributed tensors compute on the local pieces and give plain tensors (no
    placements, no gradient collectives): for code that synchronises by itself."""
    global _suspended
    _suspended += 1
    try:
        yield
    finally:
        _suspended -= 1


def _placements(tensor: Any) -> Optional[List[Placement]]:
    """``tensor``'s placements where they say where its values lie: a distributed tensor, or a
    parameter replicated on its mesh; None for what is whole (a plain tensor; a parameter cut
    for model parallelism, which its layer computes with: ``layers.py``)."""
    placements = getattr(tensor, "placements", None)
    if placements is None or (isinstance(tensor, Parameter) and not all(p.is_replicated() for p in placements)):
        return None
    return placements


def _on_record(outputs: Sequence[Any], backward: Callable, inputs: Sequence[Any]) -> Callable:
    if _suspended or any(hasattr(o, "placements") for o in outputs):
        return backward  # a reshard or shard_tensor made it: already placed
    placed = [t for t in inputs if t is not None and _placements(t) is not None]
    if not placed:
        return backward
    mesh = placed[0].process_mesh
    if any(t.process_mesh != mesh for t in placed):
        return backward
    name = describe_fn(backward)["name"]
    out_shape = tuple(outputs[0]._array.shape)
    placements: List[Placement] = [Replicate()] * mesh.ndim
    whole_shape = list(out_shape)
    gradient_ops: Dict[int, int] = {}  # mesh axis -> how a whole input's gradient combines over it
    averaged: List[int] = []  # mesh axes where a mean over the split divides the split inputs' gradients
    for axis in range(mesh.ndim):
        seen = seen_along(inputs, axis, _placements)
        if all(s is None or s[1].is_replicated() for s in seen):
            continue
        try:
            placement = along(name, backward, seen, out_shape)
        except Refused as exc:
            raise Refused(f"pycoll cannot place the result of {exc} (along mesh dimension {mesh.dim_names[axis]!r}); reshard "
                          f"the input to Replicate first (dist.reshard(t, mesh, [dist.Replicate()])), or compute "
                          f"it in dist.local_map") from None
        placements[axis] = placement
        split = [(t, s) for t, s in zip(inputs, seen) if s is not None and s[1].is_shard()]
        if placement.is_shard():
            whole_shape[placement.get_dim()] = _whole_rows(split[0], placement.get_dim(), out_shape, mesh, axis)
        if placement.is_partial() and placement.reduce_type() in (ReduceOp.MAX, ReduceOp.MIN) and any(
                t is not None and not t.stop_gradient for t in inputs) and _graph.is_grad_enabled():
            raise Refused(f"pycoll cannot differentiate {name} across the split mesh dimension "
                          f"{mesh.dim_names[axis]!r}; reshard the input to Replicate first")
        if mesh.shape[axis] == 1:
            continue
        if split:
            gradient_ops[axis] = ReduceOp.AVG if placement == Partial(ReduceOp.AVG) else ReduceOp.SUM
            if placement == Partial(ReduceOp.AVG):
                averaged.append(axis)
        elif placement.is_partial() and placement.reduce_type() in (ReduceOp.SUM, ReduceOp.AVG):
            gradient_ops[axis] = placement.reduce_type()
    for out in outputs:
        _make_distributed(out, mesh, placements, whole_shape if out is outputs[0] else None)
    plans = {}
    for i, t in enumerate(inputs):
        if t is None or t.stop_gradient:
            continue
        cut = {a for a, p in enumerate(_placements(t) or []) if not p.is_replicated()}
        reduce = [(a, op) for a, op in gradient_ops.items() if a not in cut]
        scale = 1.0 / math.prod(mesh.shape[a] for a in averaged if a in cut)
        if reduce or scale != 1.0:
            plans[i] = (reduce, scale)
    return _synchronised(backward, mesh, plans) if plans else backward


def _whole_rows(split: Tuple[Any, Seen], dim: int, out_shape: Tuple[int, ...], mesh: Any, axis: int) -> int:
    """The whole size of a result's split dimension: the split input's whole size when the op
    kept its rows, else the local size times the ranks (even blocks only)."""
    tensor, (shape, shard) = split
    whole = tensor.shape[shard.get_dim()]
    if out_shape[dim] == shape[shard.get_dim()]:
        return whole
    if whole % mesh.shape[axis]:
        raise Refused(f"pycoll cannot place a result whose split dimension changes size when the input's "
                      f"{whole} rows are split unevenly over {mesh.shape[axis]} ranks")
    return out_shape[dim] * mesh.shape[axis]


def _make_distributed(out: Any, mesh: Any, placements: List[Placement], whole_shape: Optional[List[int]]) -> None:
    shape = list(whole_shape) if whole_shape is not None else list(out._array.shape)
    if whole_shape is None:
        for axis, p in enumerate(placements):
            if p.is_shard():
                shape[p.get_dim()] *= mesh.shape[axis]
    out.__class__ = DistTensor
    out._set_dist(mesh, placements, shape)


def _synchronised(backward: Callable, mesh: Any, plans: Dict[int, Tuple[List[Tuple[int, int]], float]]) -> Callable:
    """``backward`` with input i's gradient combined over the mesh axes of ``plans[i]`` (where
    it is whole and the batch split) and scaled by its factor (where a mean divides it)."""
    import pycoll.distributed as dist

    def synchronised_backward(g: Any) -> tuple:
        grads = list(backward(g))
        for i, (reduce, scale) in plans.items():
            if grads[i] is None:
                continue
            if reduce:
                combined = grads[i].copy()  # a writable buffer of its own (backwards may return views)
                for axis, op in reduce:
                    dist.all_reduce(combined, op=op, group=mesh.get_group(axis))
                grads[i] = combined
            if scale != 1.0:
                grads[i] = grads[i] * scale
        return tuple(grads)
    return synchronised_backward
