"""Data parallelism through eager ops: paddle's dynamic semi-auto training loop.

A batch split by rows across a mesh dimension (``shard_dataloader``'s batches, or
``shard_tensor(x, mesh, [Shard(0)])`` of data) keeps its split through the ops that take it, as
paddle's SPMD rules keep it:

- an op's result is split like its split input (the split dimension found by aligning shapes:
  elementwise ops, matmul/linear, activations, reshapes that keep the leading rows);
- a reduction over the split (a loss: ``mean``, ``sum``, ``cross_entropy``/``mse_loss``'s
  ``reduction``) is ``Partial``: AVG for a mean, SUM for a sum, MAX/MIN for ``max``/``min``;
- a scalar computed from a Partial one stays Partial of the same kind (``loss * 0.5``,
  ``loss + penalty``).

Reading such a tensor (``numpy()``, ``item()``, ``float()``, printing) gives the whole value, as
in paddle; it is collective over its mesh, like paddle's.

Gradients follow the same rules backward. Where a split tensor meets one that is whole on every
rank of that mesh dimension (a replicated parameter, or any tensor computed from parameters),
the whole tensor's gradient is the sum of every rank's share: it is all-reduced over that
dimension's group right there, in the op's backward (so each parameter ends with the gradient of
the whole batch, exactly once). A Partial(AVG) result's gradient is divided by the number of
ranks it averages. Parameters sharded across another mesh dimension (the tensor-parallel Linears
of ``shard_layer``) are summed over the data dimension in the same way.

It runs from the moment ``pycoll.distributed.auto_parallel`` is imported (``follow``), on ops
that take a split tensor. DistModel, whose DataParallel already averages the gradients, runs its
step in ``local_only()``.
"""
from __future__ import annotations

import contextlib
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

from pycoll import _graph
from pycoll.distributed.auto_parallel.dtensor import DistTensor
from pycoll.distributed.auto_parallel.placements import Partial, Placement, ReduceOp, Replicate, Shard
from pycoll.distributed.auto_parallel.program import closure_value, describe_fn
from pycoll.nn import Parameter

_handle: Optional[_graph.RemovableHandle] = None
_suspended = 0

# a reduction's name (from its backward) -> how its result combines across the ranks of the split
_REDUCE_KINDS = {"sum": ReduceOp.SUM, "mean": ReduceOp.AVG, "max": ReduceOp.MAX, "min": ReduceOp.MIN,
                 "amax": ReduceOp.MAX, "amin": ReduceOp.MIN}
_REDUCTION_ARG = {"mean": ReduceOp.AVG, "sum": ReduceOp.SUM}  # a loss's ``reduction``


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


def _splits(tensor: Any) -> Dict[int, Placement]:
    """The mesh dimensions along which ``tensor`` (a data tensor, not a parameter) is split or
    partial, with its placement there."""
    placements = getattr(tensor, "placements", None)
    if placements is None or isinstance(tensor, Parameter):
        return {}
    shape = tensor.process_mesh.shape
    return {axis: p for axis, p in enumerate(placements) if not p.is_replicated() and shape[axis] > 1}


def _reduce_kind(backward: Callable) -> int:
    name = describe_fn(backward)["name"]
    if name in _REDUCE_KINDS:
        return _REDUCE_KINDS[name]
    return _REDUCTION_ARG.get(closure_value(backward, "reduction"), ReduceOp.AVG)


def _output_placement(split: Shard, local_in: Sequence[int], local_out: Sequence[int],
                      backward: Callable) -> Placement:
    """Where a result lies along a mesh dimension that split one input at ``split.get_dim()``."""
    dim = split.get_dim()
    rows = local_in[dim]
    right = dim + len(local_out) - len(local_in)  # broadcasting aligns shapes from the right
    if len(local_out) and 0 <= right < len(local_out) and local_out[right] == rows:
        return Shard(right)
    if dim < len(local_out) and local_out[dim] and local_out[dim] % rows == 0:
        return Shard(dim)  # the leading rows kept, maybe merged with the dimensions after them
    return Partial(_reduce_kind(backward))


def _on_record(outputs: Sequence[Any], backward: Callable, inputs: Sequence[Any]) -> Callable:
    if _suspended or any(hasattr(o, "placements") for o in outputs):
        return backward  # a reshard or shard_tensor made it: already placed
    split_inputs = [(t, s) for t in inputs if t is not None for s in (_splits(t),) if s]
    if not split_inputs:
        return backward
    mesh = split_inputs[0][0].process_mesh
    if any(t.process_mesh != mesh for t, _ in split_inputs):
        return backward
    placements: List[Placement] = [Replicate()] * mesh.ndim
    scale = 1.0
    gradient_ops: Dict[int, int] = {}  # mesh axis -> how a whole input's gradient sums over it
    for axis in sorted({a for _, s in split_inputs for a in s}):
        sharded = [(t, s[axis]) for t, s in split_inputs if axis in s and s[axis].is_shard()]
        if sharded:
            t, shard = sharded[0]
            placements[axis] = _output_placement(shard, t._array.shape, outputs[0]._array.shape, backward)
            averaged = placements[axis] == Partial(ReduceOp.AVG)  # a mean over the whole batch
            if averaged:
                scale /= mesh.shape[axis]
            gradient_ops[axis] = ReduceOp.AVG if averaged else ReduceOp.SUM
        else:
            kind = next(s[axis] for _, s in split_inputs if axis in s).reduce_type()
            placements[axis] = Partial(kind)
            if kind in (ReduceOp.SUM, ReduceOp.AVG):
                gradient_ops[axis] = kind
    for out in outputs:
        _make_distributed(out, mesh, placements)
    whole = [i for i, t in enumerate(inputs)
             if t is not None and not t.stop_gradient and not (set(_splits(t)) & set(gradient_ops))]
    if not whole and scale == 1.0:
        return backward
    split_at = [i for i, t in enumerate(inputs) if t is not None and set(_splits(t)) & set(gradient_ops)]
    return _synchronised(backward, mesh, gradient_ops, whole, split_at, scale)


def _make_distributed(out: Any, mesh: Any, placements: List[Placement]) -> None:
    shape = list(out._array.shape)
    for axis, p in enumerate(placements):
        if p.is_shard():
            shape[p.get_dim()] *= mesh.shape[axis]
    out.__class__ = DistTensor
    out._set_dist(mesh, placements, shape)


def _synchronised(backward: Callable, mesh: Any, gradient_ops: Dict[int, int], whole: List[int],
                  split_at: List[int], scale: float) -> Callable:
    """``backward`` with the gradients of the whole inputs (positions ``whole``) combined over
    the split mesh dimensions, and those of the split inputs scaled by ``scale``."""
    import pycoll.distributed as dist

    def synchronised_backward(g: Any) -> tuple:
        grads = list(backward(g))
        for i in whole:
            if grads[i] is None:
                continue
            combined = grads[i].copy()  # a writable buffer of its own (backwards may return views)
            for axis, op in gradient_ops.items():
                dist.all_reduce(combined, op=op, group=mesh.get_group(axis))
            grads[i] = combined
        if scale != 1.0:
            for i in split_at:
                if grads[i] is not None:
                    grads[i] = grads[i] * scale
        return tuple(grads)
    return synchronised_backward
