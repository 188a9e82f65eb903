"""A DistModel's state (``state_dict`` / ``set_state_dict`` over distributed parameters) and the
parts of its program listing that come from the model rather than from ops: the names of its
tensors, the parameters' set-up, the data-parallel gradient traffic and the optimizer's updates."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from pycoll.distributed.auto_parallel.dtensor import is_dist_tensor, make_dist
from pycoll.distributed.auto_parallel.program import Op, Tracer, Var, grad_var
from pycoll.distributed.auto_parallel.transitions import local_block
from pycoll.distributed.sharding import ShardedOptimizer
from pycoll.device import is_array
from pycoll.nn import Layer
from pycoll.optimizer.optimizer import LR_SCHEDULER_KEY, Optimizer, state_owner
from pycoll.optimizer.state_slots import FirstStepSlots
from pycoll.tensor import Tensor


def names(layer: Layer) -> Dict[int, str]:
    """id(tensor) -> structured name, for the parameters and buffers of ``layer``."""
    found = {id(t): n for n, t in layer.named_buffers()}
    found.update({id(p): n for n, p in layer.named_parameters()})
    return found


def _var(name: str, tensor: Tensor) -> Var:
    return Var(name, list(tensor._array.shape), list(tensor.shape), str(tensor.dtype))


def startup_ops(layer: Layer, model: Layer, where: str) -> List[Op]:
    """Each parameter and buffer as this rank holds it, then the data-parallel broadcast."""
    ops = []
    members = list(layer.named_parameters()) + list(layer.named_buffers())
    for name, t in members:
        note = f"placements {t.placements}" if is_dist_tensor(t) else "whole on every rank"
        kind = "parameter" if any(t is p for _, p in layer.named_parameters()) else "buffer"
        ops.append(Op("startup", kind, [], [_var(name, t)], "", note))
    if where and model is not layer:
        vs = [_var(name, t) for name, t in members]
        ops.append(Op("comm", "broadcast", vs, vs, f"broadcast from the first rank over {where}",
                      "DataParallel: the replicas start alike"))
    return ops


def note_gradient_traffic(tracer: Tracer, model: Layer, layer: Layer, where: str) -> None:
    """The gradient buckets DataParallel's reducer averaged in this backward."""
    reducer = getattr(model, "_reducer", None)
    if reducer is None:
        return
    kind = "reduce_scatter" if reducer.shard else "all_reduce"
    for i, indices in enumerate(reducer.bucket_indices()):
        grads = [grad_var(tracer.var(reducer.params[j])) for j in indices]
        size = sum(int(_numel(v.shape)) for v in grads)
        tracer.add("comm", "gradient_bucket", grads, grads, f"{kind}(avg) over {where}",
                   f"DataParallel bucket {i}: {size} elements")


def note_update(tracer: Tracer, optimizer: Any, layer: Layer, where: str) -> None:
    """One update op per trainable parameter, named after the optimizer (the innermost one
    of wrappers such as gradient merge, which say what they add); sharding's gather after."""
    inner, wrappers = optimizer, []
    while hasattr(inner, "_inner"):
        wrappers.append(inner)
        inner = inner._inner
    note = f"through {', '.join(type(w).__name__ for w in wrappers)}" if wrappers else ""
    params = [tracer.var(p) for _, p in layer.named_parameters() if not p.stop_gradient]
    for v in params:
        tracer.add("optimizer", type(inner).__name__.lower(), [v, grad_var(v)], [v], "", note)
    if any(isinstance(w, ShardedOptimizer) for w in wrappers):
        tracer.add("comm", "all_gather", params, params, f"all_gather over {where}",
                   "sharding: every parameter from the ranks' updated pieces (at stage 3 before "
                   "its layer's next forward)")


def _numel(shape: List[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


# ---- state dicts -------------------------------------------------------------------------------
def _owner(key: str, params: Dict[str, Tensor]) -> Optional[Tensor]:
    """The parameter an optimizer state key ('<param name>_<state>_0') belongs to."""
    name = state_owner(key, params)
    return None if name is None else params[name]


def state_dict(layer: Layer, optimizer: Any, mode: str, slots: FirstStepSlots) -> Dict[str, Tensor]:
    """``slots``: the optimizer's entries handed out before its first step (a plain optimizer's;
    wrappers such as sharding's make their state at the first step only)."""
    if mode not in ("all", "param", "opt"):
        raise ValueError(f"state_dict: mode must be 'all', 'param' or 'opt', got {mode!r}")
    out: Dict[str, Tensor] = {}
    if mode in ("all", "param"):
        out.update(layer.state_dict())
    if mode in ("all", "opt") and optimizer is not None:
        params = {p.name: p for p in layer.parameters()}
        opt_state = optimizer.state_dict()
        if isinstance(optimizer, Optimizer):
            slots.add_to(opt_state, optimizer)
        for key, value in opt_state.items():
            p = _owner(key, params)
            if p is not None and is_dist_tensor(p) and isinstance(value, Tensor) and value._array.shape == p._array.shape:
                value = make_dist(value._array, p.process_mesh, p.placements, p.shape)
            out[key] = value
    return out


def _local(target: Tensor, value: Any, key: str) -> Any:
    """This rank's piece of ``value`` for ``target``: a distributed tensor of target's placements
    gives its piece, a whole value (Tensor or array of target's whole shape) its block."""
    if is_dist_tensor(value):
        same = (is_dist_tensor(target) and value.process_mesh == target.process_mesh
                and value.placements == target.placements) or (
            not is_dist_tensor(target) and all(p.is_replicated() for p in value.placements))
        if not same or value.shape != list(target.shape):
            where = (f"{target.placements} on {target.process_mesh}" if is_dist_tensor(target)
                     else "whole on every rank")
            raise ValueError(f"set_state_dict: {key!r} is {value.placements} of shape {value.shape} on "
                             f"{value.process_mesh}; the model holds it as {where}, shape {list(target.shape)}")
        return value._array
    arr = value._array if isinstance(value, Tensor) else value
    if not is_array(arr):
        raise TypeError(f"set_state_dict: {key!r} must be a Tensor or an array, got {type(value).__name__}")
    if list(arr.shape) != list(target.shape):
        raise ValueError(f"set_state_dict: {key!r} has shape {list(arr.shape)}; give its whole value, of "
                         f"shape {list(target.shape)}, or a distributed tensor")
    if is_dist_tensor(target):
        return local_block(arr, target.process_mesh, target.placements, target.process_mesh.coordinate())
    return arr


def set_state_dict(layer: Layer, optimizer: Any, values: Dict[str, Any]) -> None:
    if not isinstance(values, dict):
        raise TypeError(f"set_state_dict: state_dict must be a dict, got {type(values).__name__}")
    own = layer.state_dict()
    params = {p.name: p for p in layer.parameters()}
    pieces, opt_state, unknown = {}, {}, []
    for key, value in values.items():
        if key in own:
            pieces[key] = _local(own[key], value, key)
        elif optimizer is not None and key == LR_SCHEDULER_KEY:
            opt_state[key] = value  # the optimizer's learning-rate scheduler, as it saved it
        elif optimizer is not None and _owner(key, params) is not None:
            owner = _owner(key, params)
            arr = value._array if isinstance(value, Tensor) else value
            whole = is_dist_tensor(owner) and not is_dist_tensor(value) and list(arr.shape) == owner.shape
            opt_state[key] = _local(owner, value, key) if whole or is_dist_tensor(value) else arr
        else:
            unknown.append(key)
    if unknown:
        raise ValueError(f"set_state_dict: keys {unknown} are neither parameters, buffers nor optimizer "
                         f"state of this model")
    for key, arr in pieces.items():
        if arr.dtype != own[key].dtype:
            raise ValueError(f"set_state_dict: {key!r} has dtype {arr.dtype}, the model's is {own[key].dtype}")
    for key, arr in pieces.items():
        own[key].set_value(arr)
    if opt_state:
        optimizer.set_state_dict(opt_state)
