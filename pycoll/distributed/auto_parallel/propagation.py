"""Placements through eager ops: paddle's dynamic semi-auto training loop.

An op on distributed tensors runs on the local pieces; this module then says what the result
is a piece of (``spmd_rules.py``: paddle's SPMD rules for pycoll's ops) and makes it a
distributed tensor with those placements. A batch split by rows across a mesh dimension
(``shard_dataloader``'s batches, ``shard_tensor(x, mesh, [Shard(0)])``) stays split through
elementwise ops, activations, matmul/linear, reshapes that keep its rows and indexing that takes
them whole; a reduction over the split (a loss: ``mean``, ``sum``, ``cross_entropy``'s
``reduction``) is ``Partial`` (AVG, SUM, MAX, MIN); an op on a Partial value first makes it
whole (a reshard to Replicate, as paddle does: ``loss * 0.5``, ``loss + penalty``); ops on
Replicate inputs give Replicate. An op that needs the whole of a split dimension (cumsum, sort,
topk, std, logsumexp, argmax along it; a max there that takes a gradient; a reshape that would
spread the split over several dimensions) has its operand made whole there first, as paddle's
rules reshard it, and keeps the splits of the other dimensions (``operand_rules``). An op the rules cannot place is refused by name (``Refused``),
never computed into a wrong whole.
Reading a distributed tensor (``numpy()``, ``item()``, ``float()``, printing) gives the whole
value, as in paddle; it is collective over its mesh, like paddle's.

Gradients follow the same rules backward. Where a split tensor meets one that is whole along
that mesh dimension (a replicated parameter, or any tensor computed from parameters), the whole
tensor's gradient is the sum of every rank's share: it is all-reduced over that dimension's
group right there, in the op's backward (so each parameter ends with the gradient of the whole
batch, exactly once). A gradient held by a piece is the whole value's derivative with respect to
that piece (reshard's convention): a backward from a Partial(AVG) value starts from 1/n on each
rank (``DistTensor.seed_grad``). Parameters cut for model parallelism count as whole inside their
own layers (``parameters_whole``: the tensor-parallel Linears of ``shard_layer`` compute with
their pieces), and as distributed tensors everywhere else.

It runs from the moment ``pycoll.distributed.auto_parallel`` is imported (``follow``), on ops
that take a distributed tensor. DistModel, whose DataParallel already averages the gradients,
runs its step in ``dtensor.local_only()``, where this module stands aside.
"""
from __future__ import annotations

import contextlib
import math
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import pycoll.distributed as dist
from pycoll import _graph
from pycoll._tensor_ops import add_input_hook, add_operands_hook, add_pair_hook, add_reshape_hook
from pycoll.distributed.auto_parallel.dtensor import DistTensor, computing_locally, make_dist, reshard
from pycoll.distributed.auto_parallel.operand_rules import needed
from pycoll.distributed.auto_parallel.placements import Placement, ReduceOp, Replicate, Shard
from pycoll.distributed.auto_parallel.program import describe_fn
from pycoll.distributed.auto_parallel.spmd_rules import Refused, Seen, along, reshape_split, seen_along, whole_target
from pycoll.nn import Parameter
from pycoll.tensor import Tensor

_handle: Optional[_graph.RemovableHandle] = None

_params_whole = 0  # inside a model-parallel layer (layers.py): its cut parameters count as whole

# the last op that told the operands hook its facts: (name, facts, ids of the operands it computes
# with); its record reads them (``_told_facts``)
_told: Optional[Tuple[str, Dict[str, Any], frozenset]] = None


def follow() -> None:
    """Start following splits through ops (once)."""
    global _handle
    if _handle is None:
        _handle = _graph.add_record_hook(_on_record)
        add_input_hook(_whole_partial)
        add_pair_hook(_blocks_where_split)
        add_reshape_hook(_array_target)
        add_operands_hook(_placed_operands)


def _one_mesh(name: str, placed: Sequence[Tensor]) -> Any:
    """The one process mesh of op ``name``'s distributed inputs. Refused: inputs of different
    meshes (paddle's ValueError: their pieces are of different tensors' cuts, and no rule combines
    them), and a rank off the mesh, which holds no piece of them nor would of the result: paddle
    skips such an op on such a rank (pipeline stages made of meshes of their own, joined by
    ``reshard`` from one mesh to the next); pycoll computes every op on every rank and says so
    rather than compute a result whose shape is wrong."""
    meshes = [t.process_mesh for t in placed]
    other = next((m for m in meshes if m != meshes[0]), None)
    if other is not None:
        raise ValueError(f"{name}: its distributed inputs lie on different process meshes ({meshes[0]} and "
                         f"{other}); all inputs must be on the same mesh")
    if meshes[0].coordinate() is None:
        raise NotImplementedError(
            f"{name}: this rank ({dist.get_rank()}) is not on the process mesh {meshes[0].process_ids} of its "
            f"distributed inputs: paddle skips the op on this rank (pipeline stages made of meshes of their own), "
            f"pycoll runs every op on every rank and cannot; run pipeline stages with fleet's PipelineLayer "
            f"(dist.reshard moves a tensor from one mesh to another)")
    return meshes[0]


def _placed_operands(name: str, operands: Tuple[Any, ...], facts: Dict[str, Any]) -> Tuple[Any, ...]:
    """Op ``name``'s operands resharded where paddle's rule for it needs them elsewhere for their
    pieces to fit together (``operand_rules``; a plain operand counts as Replicate)."""
    global _told
    placed = [t for t in operands if isinstance(t, Tensor) and _placements(t) is not None]
    if computing_locally() or not placed:
        return operands
    mesh = _one_mesh(name, placed)
    shapes = [tuple(t.shape) if isinstance(t, Tensor) else None for t in operands]
    had = [_placements(t) if isinstance(t, Tensor) else None for t in operands]
    targets = [list(p) if p is not None else None for p in had]
    grad = _graph.is_grad_enabled() and any(isinstance(t, Tensor) and not t.stop_gradient for t in operands)
    for axis in range(mesh.ndim):
        if mesh.shape[axis] == 1:
            continue
        along = [p[axis] if p is not None else None for p in had]
        for i, want in enumerate(needed(name, shapes, along, {**facts, "ranks": mesh.shape[axis], "grad": grad})):
            if want is not None and want != (along[i] or Replicate()):
                targets[i] = targets[i] or [Replicate()] * mesh.ndim
                targets[i][axis] = want
    operands = tuple(t if target is None or target == had[i] else
                     reshard(t if had[i] is not None else _as_replicated(t, mesh), mesh, target)
                     for i, (t, target) in enumerate(zip(operands, targets)))
    _told = (name, facts, frozenset(id(t) for t in operands if isinstance(t, Tensor)))
    return operands


def _told_facts(name: str, inputs: Sequence[Any]) -> Dict[str, Any]:
    """The facts op ``name`` gave the operands hook, when its record's inputs are the operands it
    was given back (an op tells its reduced ``axes`` there and nowhere else: nansum)."""
    if _told is None or _told[0] != name or not any(id(t) in _told[2] for t in inputs if t is not None):
        return {}
    return _told[1]


def _array_target(x: Any, shape: List[int]) -> List[int]:
    """A reshape's target for the piece of ``x``: ``shape`` speaks of the whole tensor; each
    dimension a split moves to (``reshape_split``) holds this rank's even share of it. (Whether
    or not placements are followed: the piece is what the array holds.)"""
    placements = getattr(x, "placements", None)
    if placements is None:
        return shape
    mesh, whole = x.process_mesh, list(x.shape)
    target = list(whole_target(whole, shape))
    piece = list(target)
    for d in sorted({p.get_dim() for p in placements if p.is_shard()}):
        axes = [a for a, p in enumerate(placements) if p.is_shard(d) and mesh.shape[a] > 1]
        ranks = math.prod(mesh.shape[a] for a in axes)
        if ranks == 1:
            continue
        names = [mesh.dim_names[a] for a in axes]
        try:
            e = reshape_split(whole, d, target).get_dim()
        except Refused as exc:
            raise _refusal(str(exc), names) from None
        if whole[d] % ranks or target[e] % ranks:
            raise _refusal(f"reshape {whole} -> {target}: {whole[d] if whole[d] % ranks else target[e]} rows do not "
                           f"split evenly over {ranks} ranks", names) from None
        piece[e] = target[e] // ranks
    return piece


def _refusal(what: str, dim_names: List[str]) -> Refused:
    return Refused(f"pycoll cannot place the result of {what} (along mesh dimension {', '.join(map(repr, dim_names))}); "
                   f"reshard the input to Replicate first (dist.reshard(t, mesh, [dist.Replicate()])), or compute it "
                   f"in dist.local_map")


def _blocks_where_split(x: Any, y: Any) -> Tuple[Any, Any]:
    """An elementwise op's operands where one is split along a dimension the other spans whole
    (a plain tensor counts as Replicate, as paddle treats it): the whole one becomes its block
    there (a reshard, so its gradient is the whole one's), and the op runs on matching pieces."""
    if computing_locally() or _params_whole or not (isinstance(x, Tensor) and isinstance(y, Tensor)):
        return x, y
    if x.placements is None and y.placements is None:
        return x, y
    _one_mesh("an elementwise op", [t for t in (x, y) if t.placements is not None])
    y = _split_as(y, x)
    return _block_of(x, y), _block_of(y, x)


def _split_as(t: Tensor, other: Tensor) -> Tensor:
    """``t`` resharded, along each mesh dimension where both operands are split but along
    different (right-aligned) dimensions, to ``other``'s split there, or to Replicate where
    ``t`` does not span that dimension: the pieces then meet the right rows."""
    if t.placements is None or other.placements is None or t.process_mesh != other.process_mesh:
        return t
    target, offset = list(t.placements), other.ndim - t.ndim
    for axis, (mine, theirs) in enumerate(zip(t.placements, other.placements)):
        if not (mine.is_shard() and theirs.is_shard()) or mine.get_dim() + offset == theirs.get_dim():
            continue
        dim = theirs.get_dim() - offset
        spans = 0 <= dim < t.ndim and t.shape[dim] == other.shape[theirs.get_dim()] > 1
        target[axis] = Shard(dim) if spans else Replicate()
    return t if target == list(t.placements) else reshard(t, t.process_mesh, target)


def _block_of(t: Tensor, other: Tensor) -> Tensor:
    """``t`` cut as ``other`` is along each mesh dimension that splits ``other`` where ``t`` is
    whole (Replicate, or plain) and spans that tensor dimension (shapes aligned from the right)."""
    if other.placements is None or t.ndim == 0:
        return t
    mesh = other.process_mesh
    if t.placements is not None and t.process_mesh != mesh:
        return t
    target = list(t.placements) if t.placements is not None else [Replicate()] * mesh.ndim
    offset = other.ndim - t.ndim
    changed = False
    for axis, placement in enumerate(other.placements):
        if not placement.is_shard() or not target[axis].is_replicated() or mesh.shape[axis] == 1:
            continue
        dim = placement.get_dim() - offset
        if 0 <= dim < t.ndim and t.shape[dim] == other.shape[placement.get_dim()] > 1:
            target[axis], changed = Shard(dim), True
    if not changed:
        return t
    whole = t if t.placements is not None else _as_replicated(t, mesh)
    return reshard(whole, mesh, target)


def _as_replicated(t: Tensor, mesh: Any) -> Tensor:
    """A plain tensor as a distributed one, whole on every rank (its gradient passes back as is)."""
    out = make_dist(t._array, mesh, [Replicate()] * mesh.ndim, t.shape)
    _graph.record((out,), lambda g: (g,), [t])
    return out


def _whole_partial(tensor: Any) -> Any:
    """An op's operand that holds Partial values, resharded to its whole value first (paddle's
    rule: the result of an op on a Partial value is computed from the whole)."""
    placements = getattr(tensor, "placements", None)
    if computing_locally() or placements is None or not any(p.is_partial() for p in placements):
        return tensor
    return reshard(tensor, tensor.process_mesh, [Replicate() if p.is_partial() else p for p in placements])


@contextlib.contextmanager
def parameters_whole() -> Iterator[None]:
    """Within a model-parallel layer's forward, which computes with the pieces of its cut
    parameters itself, those parameters count as whole tensors."""
    global _params_whole
    _params_whole += 1
    try:
        yield
    finally:
        _params_whole -= 1


def _placements(tensor: Any) -> Optional[List[Placement]]:
    """``tensor``'s placements: None for what is whole (a plain tensor; inside a model-parallel
    layer, a parameter it cuts: ``parameters_whole``)."""
    placements = getattr(tensor, "placements", None)
    if placements is None or (_params_whole and isinstance(tensor, Parameter)
                              and not all(p.is_replicated() for p in placements)):
        return None
    return placements


def _on_record(outputs: Sequence[Any], backward: Callable, inputs: Sequence[Any]) -> Callable:
    if computing_locally() or any(o.placements is not None for o in outputs):
        return backward  # a reshard or shard_tensor made it: already placed
    placed = [t for t in inputs if t is not None and _placements(t) is not None]
    if not placed:
        return backward
    name = describe_fn(backward)["name"]
    mesh = _one_mesh(name, placed)
    told = _told_facts(name, inputs)
    out_shape = tuple(outputs[0]._array.shape)
    placements: List[Placement] = [Replicate()] * mesh.ndim
    whole_shapes = [list(out._array.shape) for out in outputs]
    summed: List[int] = []  # mesh axes over which a whole input's gradient is the sum of the ranks'
    for axis in range(mesh.ndim):
        seen = seen_along(inputs, axis, _placements)
        if all(s is None or s[1].is_replicated() for s in seen):
            continue
        try:
            placement = along(name, backward, seen, out_shape, told)
        except Refused as exc:
            if mesh.shape[axis] == 1:  # one rank along it: every piece is the whole
                continue
            raise _refusal(str(exc), [mesh.dim_names[axis]]) from None
        placements[axis] = placement
        split = [(t, s) for t, s in zip(inputs, seen) if s is not None and s[1].is_shard()]
        if placement.is_partial() and placement.reduce_type() == ReduceOp.AVG and any(
                t.shape[s[1].get_dim()] % mesh.shape[axis] for t, s in split):
            # the mean of the ranks' means is the whole mean only when every rank holds as many rows
            raise Refused(f"pycoll cannot take the mean ({name}) across a split along mesh dimension "
                          f"{mesh.dim_names[axis]!r} that is uneven ({[t.shape for t, _ in split]} over "
                          f"{mesh.shape[axis]} ranks); split evenly, or reshard to Replicate first")
        if name == "reshape":  # its target: the whole shape
            whole_shapes[0] = list(whole_target(inputs[0].shape, describe_fn(backward)["shape"]))
        elif placement.is_shard():
            for shape, out in zip(whole_shapes, outputs):  # split's pieces: each its own rows
                shape[placement.get_dim()] = _whole_rows(split[0], placement.get_dim(), out._array.shape, mesh, axis)
        if mesh.shape[axis] > 1 and (split or placement.is_partial()):
            summed.append(axis)
    for out, shape in zip(outputs, whole_shapes):
        _make_distributed(out, mesh, placements, shape)
    if name == "linear" and len(inputs) > 2 and inputs[2] is not None and any(p.is_partial() for p in placements):
        backward = _bias_once(outputs[0], inputs[2], backward, mesh, placements)
    plans = {}
    for i, t in enumerate(inputs):
        if t is None or t.stop_gradient:
            continue
        cut = {a for a, p in enumerate(_placements(t) or []) if not p.is_replicated()}
        axes = [a for a in summed if a not in cut]
        if axes:
            plans[i] = axes
    return _synchronised(backward, mesh, plans) if plans else backward


def _bias_once(out: Tensor, bias: Tensor, backward: Callable, mesh: Any, placements: List[Placement]) -> Callable:
    """A row-parallel linear's result (Partial: the ranks' products of their slices) holds its
    whole bias on the first rank of its partial mesh dimensions only, so that their sum adds it
    once (paddle's Replicate -> Partial); elsewhere the bias takes no part, and its gradient
    there is zero (``_synchronised`` sums the ranks' shares)."""
    coordinate = mesh.coordinate()
    if all(coordinate[a] == 0 for a, p in enumerate(placements) if p.is_partial()):
        return backward
    out._array -= bias._array

    def bias_once_backward(g: Any) -> tuple:
        grads = list(backward(g))
        if grads[2] is not None:
            grads[2] = grads[2] * 0
        return tuple(grads)
    bias_once_backward.__pycoll_op__ = describe_fn(backward)  # type: ignore[attr-defined]
    return bias_once_backward


def _whole_rows(split: Tuple[Any, Seen], dim: int, out_shape: Tuple[int, ...], mesh: Any, axis: int) -> int:
    """The whole size of a result's split dimension: the split input's whole size when the op
    kept its rows, else the local size times the ranks (even blocks only)."""
    tensor, (whole_shape, shard) = split
    whole = whole_shape[shard.get_dim()]
    if out_shape[dim] == tensor._array.shape[shard.get_dim()]:
        return whole
    if whole % mesh.shape[axis]:
        raise Refused(f"pycoll cannot place a result whose split dimension changes size when the input's "
                      f"{whole} rows are split unevenly over {mesh.shape[axis]} ranks")
    return out_shape[dim] * mesh.shape[axis]


def _make_distributed(out: Any, mesh: Any, placements: List[Placement], whole_shape: List[int]) -> None:
    out.__class__ = DistTensor
    out._set_dist(mesh, placements, list(whole_shape))


def _synchronised(backward: Callable, mesh: Any, plans: Dict[int, List[int]]) -> Callable:
    """``backward`` with input i's gradient summed over the mesh axes ``plans[i]``: where it is
    whole and meets split or partial pieces, every rank's share is part of its gradient."""
    import pycoll.distributed as dist

    def synchronised_backward(g: Any) -> tuple:
        grads = list(backward(g))
        for i, axes in plans.items():
            if grads[i] is None:
                continue
            combined = grads[i].copy()  # a writable buffer of its own (backwards may return views)
            for axis in axes:
                dist.all_reduce(combined, group=mesh.get_group(axis))
            grads[i] = combined
        return tuple(grads)
    synchronised_backward.__pycoll_op__ = describe_fn(backward)  # type: ignore[attr-defined]  # the op's name
    return synchronised_backward
