"""``shard_layer``, and what a sharded ``nn.Linear`` weight means.

A Linear whose weight is ``Shard(1)`` along a mesh dimension of n > 1 ranks computes as
``ColumnParallelLinear`` over that dimension's group (each rank its block of output columns), one
whose weight is ``Shard(0)`` as ``RowParallelLinear`` (its block of input rows, the partial
products all-reduced). Both run on ``pycoll.parallel.mp_ops``' autograd collectives:

    column:  x -> c_identity -> linear(x, W_block, b_block) -> c_concat (unless kept, see below)
    row:     x -> c_split (unless kept) -> linear(x, W_block) -> mp_allreduce -> + b

A replicated bias of a column-parallel Linear enters as its block (``c_split``: its gradient is
gathered back whole). By default a column-parallel output is gathered whole, so any code may
follow it. ``to_static`` keeps it as the rank's block when its first step shows that it only
flows, through elementwise ops, into a row-parallel Linear of the same group (Megatron's
pairing: no communication between the two layers) — see ``keepable_pairs``.
"""
from __future__ import annotations

import copy
from typing import Any, Callable, List, Optional

import pycoll.distributed as dist
from pycoll.distributed.auto_parallel import propagation
from pycoll.distributed.auto_parallel.dtensor import is_dist_tensor, reshard, shard_tensor
from pycoll.distributed.auto_parallel.mesh import ProcessMesh
from pycoll.distributed.auto_parallel.placements import Replicate, Shard
from pycoll.distributed.auto_parallel.program import Tracer, comm_scope, current
from pycoll.distributed.auto_parallel.transitions import check_divides
from pycoll.nn import Layer, Linear
from pycoll.nn import functional as F
from pycoll.parallel.mp_ops import _c_concat, _c_identity, _c_split, _mp_allreduce
from pycoll.tensor import Tensor

# ops that act on each element alone (one tensor operand): a block of columns through them is
# the block of the whole's result. Dropout is not one: its random mask depends on the shape.
ELEMENTWISE = {"relu", "tanh", "sigmoid", "gelu", "abs", "square", "sqrt", "exp", "log", "clip",
               "cast", "neg", "pow", "add", "subtract", "multiply", "divide"}


class ShardedLinear:
    """A Linear's forward as a column- (``kind="column"``) or row-parallel layer over mesh
    dimension ``axis``. ``keep_block`` (column: return the block; row: take it) is set by
    to_static's plan; the last input and output are remembered while a Tracer records."""

    def __init__(self, layer: Linear, path: str, kind: str, mesh: ProcessMesh, axis: int):
        self.layer, self.path, self.kind, self.mesh, self.axis = layer, path, kind, mesh, axis
        self.keep_block = False
        self.seen_input: Optional[Tensor] = None
        self.seen_output: Optional[Tensor] = None
        self._group: Optional[dist.Group] = None

    def __deepcopy__(self, memo: dict) -> "ShardedLinear":
        # a copied layer gets a forward of its own; groups are made again, not copied
        return ShardedLinear(copy.deepcopy(self.layer, memo), self.path, self.kind, self.mesh, self.axis)

    @property
    def group(self) -> dist.Group:
        if self._group is None:
            line = self.mesh.line(self.axis)
            if line != sorted(line):  # the layers' collectives join blocks in group (sorted) order
                raise ValueError(f"{self.path}: a {self.kind}-parallel Linear needs the mesh's ranks along "
                                 f"{self.mesh.dim_names[self.axis]!r} in increasing order, got {line}")
            self._group = self.mesh.get_group(self.axis)
        return self._group

    def __call__(self, x: Any) -> Tensor:
        x = x if isinstance(x, Tensor) else Tensor(x)
        group, layer = self.group, self.layer
        rows = None  # a batch split along the dimension the weight is cut along, to split the result back
        if is_dist_tensor(x) and x.process_mesh == self.mesh and not x.placements[self.axis].is_replicated():
            # split or partial along the dimension the weight is cut along: whole there first
            if x.placements[self.axis].is_shard() and x.placements[self.axis].get_dim() < len(x.shape) - 1:
                rows = list(x.placements)
            x = reshard(x, self.mesh, [Replicate() if i == self.axis else p for i, p in enumerate(x.placements)])
        with propagation.parameters_whole(), comm_scope(f"{self.mesh.dim_names[self.axis]!r} {group.ranks}"):
            if self.kind == "column":
                bias = layer.bias
                if bias is not None and not _is_block(bias, self.axis):
                    bias = _c_split(bias, group)
                out = F.linear(_c_identity(x, group), layer.weight, bias)
                if not self.keep_block:
                    out = _c_concat(out, group)
            else:
                inner = x if self.keep_block else _c_split(x, group)
                out = _mp_allreduce(F.linear(inner, layer.weight), group=group)
                if layer.bias is not None:
                    out = out + layer.bias
        if rows is not None and is_dist_tensor(out):
            out = reshard(out, self.mesh, rows)
        if current() is not None:
            self.seen_input, self.seen_output = x, out
        return out


def _is_block(bias: Tensor, axis: int) -> bool:
    return is_dist_tensor(bias) and bias.placements[axis] == Shard(0)


def _sharded_axes(param: Tensor) -> List[int]:
    return [i for i, p in enumerate(param.placements) if not p.is_replicated()] if is_dist_tensor(param) else []


def sharded_beyond_linears(layer: Layer) -> bool:
    """Whether ``layer`` holds a sharded parameter that is not an ``nn.Linear``'s weight or bias
    (the auto-parallel guide's ``create_parameter`` + ``shard_tensor`` weights used in
    ``matmul``): :func:`parallelize` gives no meaning to those, the eager SPMD rules do."""
    for sub in layer.sublayers(include_self=True):
        params = dict(sub.named_parameters(include_sublayers=False))
        linear = isinstance(sub, Linear) and not set(params) - {"weight", "bias"}
        if not linear and any(_sharded_axes(p) for p in params.values()):
            return True
    return False


def parallelize(layer: Layer) -> List[ShardedLinear]:
    """Give every Linear of ``layer`` whose weight is sharded its parallel forward (once) and
    return them in layer order; any other sharded or Partial parameter is refused by name."""
    found = []
    for path, sub in layer.named_sublayers(include_self=True):
        existing = sub.__dict__.get("forward")
        if isinstance(existing, ShardedLinear):
            found.append(existing)
            continue
        params = dict(sub.named_parameters(include_sublayers=False))
        if not any(_sharded_axes(p) for p in params.values()):
            continue
        where = path or type(sub).__name__
        if not isinstance(sub, Linear) or set(params) - {"weight", "bias"}:
            names = [f"{where}.{k}" for k, p in params.items() if _sharded_axes(p)]
            raise ValueError(f"parameters {names} are sharded, but pycoll gives a meaning to sharded "
                             f"weights of nn.Linear only (Shard(1): column parallel, Shard(0): row "
                             f"parallel); replicate them")
        linear = _linear_plan(sub, where)
        if linear is not None:
            object.__setattr__(sub, "forward", linear)
            found.append(linear)
    return found


def _linear_plan(sub: Linear, where: str) -> Optional[ShardedLinear]:
    weight, bias = sub.weight, sub.bias
    axes = _sharded_axes(weight)
    mesh = getattr(weight, "process_mesh", None) or bias.process_mesh
    kinds = {0: "row", 1: "column"}
    if not axes:
        raise ValueError(f"{where}.bias has placements {bias.placements} but its weight is whole on every "
                         f"rank: shard the weight (Shard(1) or Shard(0)) or replicate the bias")
    if len(axes) != 1 or not weight.placements[axes[0]].is_shard():
        raise ValueError(f"{where}.weight has placements {weight.placements}: a Linear's "
                         f"weight may be Shard(0) or Shard(1) along one mesh dimension and Replicate "
                         f"along the others")
    axis = axes[0]
    kind = kinds[weight.placements[axis].get_dim()]
    if bias is not None and _sharded_axes(bias) and not (kind == "column" and _sharded_axes(bias) == [axis]
                                                         and bias.placements[axis] == Shard(0)):
        raise ValueError(f"{where}.bias has placements {bias.placements}; with a {kind}-parallel "
                         f"weight ({weight.placements}) it must be Replicate"
                         + (" or Shard(0) along the weight's mesh dimension" if kind == "column" else ""))
    if bias is not None and is_dist_tensor(bias) and bias.process_mesh != mesh:
        raise ValueError(f"{where}.bias lies on {bias.process_mesh}, its weight on {mesh}: use one mesh")
    check_divides(weight.shape, mesh, weight.placements, f"{where}.weight")
    if mesh.shape[axis] == 1:
        return None  # a block of one: the whole weight, nothing to do
    return ShardedLinear(sub, where, kind, mesh, axis)


def keepable_pairs(tracer: Tracer, linears: List[ShardedLinear], outputs: Any) -> List[ShardedLinear]:
    """The column-parallel Linears (from a step recorded with every output gathered) whose whole
    output only flows, through ELEMENTWISE ops of one tensor operand, into a row-parallel Linear
    of the same group — each returned with its row partner right after it."""
    returned = {id(t) for t in _tensors(outputs)}
    rows = {id(r.seen_input): r for r in linears if r.kind == "row" and r.seen_input is not None}
    keep: List[ShardedLinear] = []
    for col in linears:
        if col.kind != "column" or col.seen_output is None:
            continue
        current_id = id(col.seen_output)
        while current_id not in returned:
            users = tracer.consumers.get(current_id, [])
            row = rows.get(current_id)
            if row is not None and len(users) == 1 and users[0].name == "c_split":
                if row.axis == col.axis and row.mesh == col.mesh:
                    keep += [col, row]
                break
            if len(users) != 1 or users[0].name not in ELEMENTWISE or len(users[0].inputs) != 1:
                break
            current_id = users[0].out_ids[0]
    return keep


def _tensors(obj: Any) -> List[Tensor]:
    if isinstance(obj, Tensor):
        return [obj]
    if isinstance(obj, dict):
        obj = list(obj.values())
    if isinstance(obj, (list, tuple)):
        return [t for item in obj for t in _tensors(item)]
    return []


def shard_layer(layer: Layer, process_mesh: ProcessMesh,
                shard_fn: Optional[Callable[[str, Layer, ProcessMesh], None]] = None,
                input_fn: Optional[Callable[[Any, ProcessMesh], Any]] = None,
                output_fn: Optional[Callable[[Any, ProcessMesh], Any]] = None) -> Layer:
    """paddle's ``shard_layer``: ``shard_fn(name, sublayer, process_mesh)`` runs on every sublayer
    (and the layer itself, name ``""``) to shard its parameters with ``shard_tensor``; the
    parameters and buffers it leaves become Replicate on ``process_mesh``. ``input_fn(inputs,
    mesh)`` / ``output_fn(outputs, mesh)`` become forward pre / post hooks. Sharded Linear
    weights then compute as described in the module's text; where other parameters are sharded
    too (an Embedding's), the whole layer computes under paddle's placement rules op by op
    (``sharded_beyond_linears``). Returns ``layer`` itself. Make the optimizer afterwards: the
    parameters are new objects."""
    if not isinstance(layer, Layer):
        raise TypeError(f"shard_layer: layer must be a pycoll.nn.Layer, got {type(layer).__name__}")
    if not isinstance(process_mesh, ProcessMesh):
        raise TypeError(f"shard_layer: process_mesh must be a dist.ProcessMesh, got {type(process_mesh).__name__}")
    process_mesh.check_in_job("process_mesh")
    for arg, fn in (("shard_fn", shard_fn), ("input_fn", input_fn), ("output_fn", output_fn)):
        if fn is not None and not callable(fn):
            raise TypeError(f"shard_layer: {arg} must be callable or None, got {type(fn).__name__}")
    replicate = [Replicate()] * process_mesh.ndim
    for name, sub in list(layer.named_sublayers(include_self=True)):
        if shard_fn is not None:
            shard_fn(name, sub, process_mesh)
        for key, param in list(sub.named_parameters(include_sublayers=False)):
            if not is_dist_tensor(param):
                setattr(sub, key, shard_tensor(param, process_mesh, replicate))
        persistable = sub.state_dict(include_sublayers=False)
        for key, buffer in list(sub.named_buffers(include_sublayers=False)):
            if not is_dist_tensor(buffer):
                sub.register_buffer(key, shard_tensor(buffer, process_mesh, replicate),
                                    persistable=key in persistable)
    if input_fn is not None:
        layer.register_forward_pre_hook(lambda _, inputs: input_fn(inputs, process_mesh))
    if output_fn is not None:
        layer.register_forward_post_hook(lambda _, inputs, outputs: output_fn(outputs, process_mesh))
    if not sharded_beyond_linears(layer):
        parallelize(layer)
    return layer
