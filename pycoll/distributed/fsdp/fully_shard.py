"""paddle's ``fully_shard`` (``paddle.distributed.fsdp``) on pycoll: the layer's parameters,
gradients and optimizer state are cut into one piece per rank of the mesh, with
``pycoll.distributed.sharding``'s level ``p_g_os`` (ZeRO stage 3: ``GroupShardedModel`` and
``ShardedOptimizer``). Training is data-parallel training: the same losses and parameters as
``pycoll.DataParallel``.

paddle 3.3.1 has two paths: once a ProcessMesh exists (as in its docstring example) the
auto-parallel one, which shards the parameters in place and returns the layer itself; else the
dygraph one, a ``FullyShard`` wrapper that needs fleet and a GPU. pycoll has one path and does
what the first does: the layer is sharded in place and returned. What each argument does here:

- ``mesh``: its ranks are the sharding group (a 1-D mesh; default: the global mesh
  ``dist.get_mesh()``, else every rank). Gradients are averaged over it.
- ``ignored_params``: held whole on every rank, never released; their gradients are averaged
  over the mesh as DataParallel's are (each rank updates its piece, the pieces are gathered
  after the step: the same values).
- ``mp_policy``: pycoll's sharding keeps, reduces and computes in the parameters' own dtype, so
  ``param_dtype`` and ``reduce_dtype`` must be None or that dtype (anything else is refused by
  name); ``output_dtype`` casts the layer's floating-point outputs; ``cast_forward_inputs``
  (with ``param_dtype`` given) casts its floating-point inputs to it.
- ``offload_policy``, ``reshard_after_forward``, ``enable_tensor_fusion_and_overlap``: memory
  and scheduling only, accepted and checked. A parameter is all-gathered before its layer's
  forward and let go once its gradient is final (or right after forward without a graph), and
  gradient buckets are reduce-scattered while backward runs, whatever they say.
- ``shard_placement_fn``: may return ``Shard(0)`` or None for each parameter (pycoll cuts the
  flattened parameter into even pieces); any other placement is refused by name.

What a user sees of a sharded layer (with several ranks; on one rank nothing is cut and the
layer and its optimizer are left as they were):

- between steps ``model.weight.shape`` is ``[0]`` (paddle: the global shape, its parameters being
  distributed tensors): each rank keeps only its piece, and the parameter is whole only while its
  layer runs. ``ignored_params`` stay whole.
- ``model.state_dict()`` holds whole tensors of the global shapes (new tensors gathered from the
  pieces), and ``model.set_state_dict(whole)`` loads each rank's piece (``full_state.py``). Both
  are collective over the mesh: call them on every rank, not under ``if rank == 0:``. A rank that
  skips one is stopped by pycoll's watchdog after ``PYCOLL_TIMEOUT`` seconds with a
  CollectiveError naming the unmatched all_gather.
- a taken-over optimizer's ``state_dict()`` is the whole state, keyed and shaped as the unsharded
  optimizer's (collective too), and its ``set_state_dict`` takes a whole state. A resumable
  checkpoint: on every rank ``w, s = model.state_dict(), opt.state_dict()``, then rank 0 saves
  both; to resume, build the model and optimizer, ``fully_shard``, and on every rank load both
  files with ``set_state_dict``.
- nesting (torch FSDP2's ``fully_shard`` on each block, then on the root) is refused with a
  ValueError naming the sharded sub-layers: one call on the root already gathers each
  sub-layer's parameters only around that sub-layer's forward, and nesting would need one
  optimizer stepping the pieces of several sharded models, which pycoll's sharding does not do.

``fully_shard(model, mesh)``, as paddle's docstring writes it, raises a TypeError in paddle
3.3.1 (every argument after ``module`` is keyword-only) and does here too: write ``mesh=mesh``.
An optimizer that holds the layer's parameters, built before or after ``fully_shard``, is taken
over at its first call after it (``takeover.py``): from then on it steps this rank's pieces.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, List, Optional, Set, Union

import pycoll.distributed as dist
from pycoll.autograd import is_grad_enabled
from pycoll.distributed.auto_parallel import ProcessMesh, Shard, get_mesh
from pycoll.distributed.fsdp.full_state import register_full_state_hooks
from pycoll.distributed.fsdp.takeover import TAKEN, take_over
from pycoll.distributed.sharding import GroupShardedModel
from pycoll.dtypes import convert_dtype, is_floating
from pycoll.nn import Layer
from pycoll.nn.parameter import Parameter
from pycoll.optimizer.optimizer import Optimizer, hand_over
from pycoll.parallel import DataParallel
from pycoll.tensor import Tensor

STATE = "_fully_shard_state"  # attribute of a sharded layer: its FullyShardState
OWNER = "_fully_shard_owner"  # attribute of a sharded layer's parameters: that layer


@dataclass
class MixedPrecisionPolicy:
    """paddle's mixed-precision policy (torch's fields and defaults; paddle 3.3.1's class takes
    no constructor arguments, only attribute assignment, which works here too)."""
    param_dtype: Any = None
    reduce_dtype: Any = None
    output_dtype: Any = None
    cast_forward_inputs: bool = True


@dataclass
class OffloadPolicy:
    """paddle's offload policy: accepted (memory placement only)."""
    pin_memory: bool = True


class FullyShardState:
    """What ``fully_shard`` attaches to the layer: the sharded model (its ZeRO machinery:
    ``parameter_bytes()``, ``gradient_bytes()``, ``get_all_parameters()``) and the optimizers
    it took over."""

    def __init__(self, model: GroupShardedModel, output_dtype: Any, input_dtype: Any):
        self.model = model
        self.optimizers: List[Any] = []
        self._output_dtype, self._input_dtype = output_dtype, input_dtype

    def adopt(self, optimizer: Optimizer) -> bool:
        """Take ``optimizer`` over (``hand_over``'s taker), unless something already did."""
        if hasattr(optimizer, TAKEN):
            return False
        mine = {id(p) for p in self.model.trainable}
        others = [p.name for p in optimizer._parameter_list if id(p) not in mine and not p.stop_gradient]
        if others:
            raise ValueError(f"fully_shard: an optimizer over this sharded layer also updates parameters "
                             f"outside it ({others[:4]}{' ...' if len(others) > 4 else ''}); pycoll shards "
                             f"one layer per optimizer: call fully_shard once, on the root layer (its "
                             f"sub-layers' parameters are still gathered only around their own forward), "
                             f"or give each sharded layer its own optimizer")
        self.optimizers.append(take_over(optimizer, self.model))
        return True

    def before_forward(self, _layer: Layer, inputs: tuple) -> Optional[tuple]:
        return None if self._input_dtype is None else _cast(inputs, self._input_dtype)

    def after_forward(self, _layer: Layer, _inputs: tuple, outputs: Any) -> Any:
        if self._output_dtype is not None:
            outputs = _cast(outputs, self._output_dtype)
        reducer = self.model._reducer
        if reducer is not None and is_grad_enabled():  # as DataParallel's forward: gradients averaged
            reducer.prepare_for_backward(outputs)
        return outputs


def fully_shard(module: Layer, *, mesh: Optional[ProcessMesh] = None,
                reshard_after_forward: Union[bool, int, None] = None,
                shard_placement_fn: Optional[Callable[[Tensor], Optional[Shard]]] = None,
                mp_policy: Optional[MixedPrecisionPolicy] = None, offload_policy: Optional[OffloadPolicy] = None,
                ignored_params: Optional[Iterable[Tensor]] = None,
                enable_tensor_fusion_and_overlap: bool = True) -> Layer:
    """Shard ``module``'s parameters, gradients and optimizer state over ``mesh``'s ranks, in
    place; returns ``module``. Collective over the mesh's ranks (see the module's text)."""
    if isinstance(module, DataParallel) or not isinstance(module, Layer):
        raise TypeError(f"fully_shard: module must be a pycoll.nn.Layer not wrapped in DataParallel, "
                        f"got {type(module).__name__}")
    if hasattr(module, STATE):
        raise ValueError("fully_shard: module is already fully sharded")
    _refuse_nesting(module)
    group = _sharding_group(mesh)
    if reshard_after_forward is not None and not isinstance(reshard_after_forward, int):
        raise TypeError(f"fully_shard: reshard_after_forward must be a bool, an int or None, got "
                        f"{reshard_after_forward!r}")
    if isinstance(reshard_after_forward, int) and reshard_after_forward < 0:
        raise ValueError(f"fully_shard: reshard_after_forward={reshard_after_forward!r}; it must be >= 0")
    for name, value, kind in (("mp_policy", mp_policy, MixedPrecisionPolicy),
                              ("offload_policy", offload_policy, OffloadPolicy)):
        if value is not None and not isinstance(value, kind):
            raise TypeError(f"fully_shard: {name} must be a {kind.__name__} or None, got {value!r}")
    if not isinstance(enable_tensor_fusion_and_overlap, bool):
        raise TypeError(f"fully_shard: enable_tensor_fusion_and_overlap must be a bool, got "
                        f"{enable_tensor_fusion_and_overlap!r}")
    if shard_placement_fn is not None and not callable(shard_placement_fn):
        raise TypeError(f"fully_shard: shard_placement_fn must be callable or None, got {shard_placement_fn!r}")
    ignored = _ignored(module, ignored_params)
    sharded = [p for p in module.parameters() if not p.stop_gradient and id(p) not in ignored]
    _check_placements(shard_placement_fn, sharded)
    policy = mp_policy or MixedPrecisionPolicy()
    param_dtype = _policy_dtype(policy, "param_dtype", sharded)
    _policy_dtype(policy, "reduce_dtype", sharded)
    output_dtype = _dtype(policy.output_dtype, "mp_policy.output_dtype")
    several = dist.is_initialized() and dist.get_world_size(group) > 1
    model = GroupShardedModel(module, group, "p_g_os", {id(p) for p in sharded} if several else set())
    state = FullyShardState(model, output_dtype, param_dtype if policy.cast_forward_inputs else None)
    object.__setattr__(module, STATE, state)
    module.register_forward_pre_hook(state.before_forward)
    module.register_forward_post_hook(state.after_forward)
    for p in module.parameters():
        setattr(p, OWNER, module)
    if several:  # on one rank nothing is cut: the optimizer keeps stepping the whole parameters
        register_full_state_hooks(module, model)
        hand_over(model.trainable, state.adopt)
    return module


def _refuse_nesting(module: Layer) -> None:
    """pycoll shards a layer tree as one unit: one sharded model, whose one optimizer steps every
    piece. torch FSDP2's nesting (fully_shard each block, then the root) would need an optimizer
    over several sharded models, so it is refused with what to do instead."""
    inner = [name or "(the module itself)" for name, layer in module.named_sublayers(include_self=True)
             if hasattr(layer, STATE)]
    if inner:
        raise ValueError(f"fully_shard: sub-layers {inner} of module are already fully sharded; pycoll does not "
                         f"nest fully_shard calls: build the model unsharded and call fully_shard once, on the "
                         f"root (it already gathers each sub-layer's parameters only just before that "
                         f"sub-layer's forward, as nested calls would)")
    outer = {id(owner): owner for owner in (getattr(p, OWNER, None) for p in module.parameters())
             if owner is not None}
    if outer:
        names = [type(owner).__name__ for owner in outer.values()]
        raise ValueError(f"fully_shard: module's parameters are already sharded by fully_shard on an enclosing "
                         f"layer ({', '.join(names)}); pycoll does not nest fully_shard calls: the call on the "
                         f"root alone shards every sub-layer")


def _sharding_group(mesh: Optional[ProcessMesh]) -> Optional[dist.Group]:
    """The group of ``mesh``'s ranks (None: the world), this rank being one of them."""
    mesh = mesh if mesh is not None else get_mesh()
    if mesh is None:
        return None
    if not isinstance(mesh, ProcessMesh):
        raise TypeError(f"fully_shard: mesh must be a dist.ProcessMesh or None, got {mesh!r}")
    if mesh.ndim != 1:
        raise ValueError(f"fully_shard: mesh has shape {mesh.shape}; pycoll shards over a 1-D mesh (its ranks "
                         f"are the sharding group)")
    mesh.check_in_job("fully_shard: mesh")
    if dist.get_rank() not in mesh.process_ids:
        raise ValueError(f"fully_shard: this rank ({dist.get_rank()}) is not in mesh {mesh.process_ids}")
    return mesh.get_group()


def _ignored(module: Layer, ignored_params: Optional[Iterable[Tensor]]) -> Set[int]:
    if ignored_params is None:
        return set()
    if isinstance(ignored_params, Tensor) or not hasattr(ignored_params, "__iter__"):
        raise TypeError(f"fully_shard: ignored_params must be an iterable of the module's parameters, got "
                        f"{type(ignored_params).__name__}")
    own = {id(p) for p in module.parameters()}
    ignored = list(ignored_params)
    strangers = [p if not isinstance(p, Parameter) else p.name for p in ignored
                 if not isinstance(p, Parameter) or id(p) not in own]
    if strangers:
        raise ValueError(f"fully_shard: ignored_params holds {strangers[:5]}, which are not parameters of module")
    return {id(p) for p in ignored}


def _check_placements(shard_placement_fn: Optional[Callable[[Tensor], Any]], params: List[Parameter]) -> None:
    if shard_placement_fn is None:
        return
    for p in params:
        placement = shard_placement_fn(p)
        if placement is not None and not (isinstance(placement, Shard) and placement.get_dim() == 0):
            raise ValueError(f"fully_shard: shard_placement_fn gave {placement!r} for parameter {p.name!r}; pycoll "
                             f"shards every parameter as Shard(0): return Shard(0) or None")


def _dtype(value: Any, name: str) -> Any:
    try:
        dtype = convert_dtype(value)
    except TypeError:
        raise TypeError(f"fully_shard: {name} must be a dtype or None, got {value!r}") from None
    if dtype is not None and not is_floating(dtype):
        raise ValueError(f"fully_shard: {name}={value!r}; it must be a floating-point dtype")
    return dtype


def _policy_dtype(policy: MixedPrecisionPolicy, field: str, params: List[Parameter]) -> Any:
    """``policy.<field>``: None, or the dtype every sharded parameter already has (pycoll's
    sharding holds, reduces and computes in the parameters' own dtype)."""
    dtype = _dtype(getattr(policy, field), f"mp_policy.{field}")
    others = sorted({str(p.dtype) for p in params if p.dtype != dtype})
    if dtype is not None and others:
        raise ValueError(f"fully_shard: mp_policy.{field}={dtype}, but the sharded parameters are {others}; "
                         f"pycoll's sharding keeps and reduces them in their own dtype: leave {field} None")
    return dtype


def _cast(value: Any, dtype: Any) -> Any:
    """``value``'s floating-point tensors (in tuples and lists too) as ``dtype``."""
    if isinstance(value, Tensor):
        return value.astype(dtype) if is_floating(value.dtype) and value.dtype != dtype else value
    if isinstance(value, (tuple, list)):
        return type(value)(_cast(v, dtype) for v in value)
    return value
