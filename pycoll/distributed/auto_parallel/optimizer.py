"""``shard_optimizer`` and the sharding stages it takes (paddle's ``ShardingStage1/2/3``).

In pycoll's eager loop the gradients are already those of the whole batch when ``step()`` runs
(``propagation.py`` sums them where the split batch meets the parameters). As in paddle, a stage
acts on the *distributed* parameters only (``shard_tensor`` / ``shard_layer`` made them; plain
parameters are stepped as they are):

- ``ShardingStage1``: each rank of the sharding dimension keeps the optimizer state of, and
  updates, its block of every distributed parameter that is whole along that dimension (cut
  along the parameter's first tensor dimension it is not already cut along: paddle's rule; one
  cut along all its dimensions already keeps its state as it is); the updated blocks are then
  all-gathered. ``state_dict()`` gives the state as distributed tensors
  with those placements.
- ``ShardingStage2`` (the gradients split too) in the eager loop updates as paddle's does, with
  stage 1's memory: each rank keeps its block of the optimizer state, the gradients stay whole
  (said once). Inside a DistModel (``dist.to_static`` takes the stage as ``strategy.sharding``,
  over its data-parallel dimension, with ``dist.sharding``'s ZeRO machinery) stages 2 and 3
  split the gradients and the parameters too.
- ``ShardingStage3`` (the parameters split between steps) in the eager loop updates as stage 2
  there (said once): the same updates as paddle's, whose eager stage 3 also makes the parameters
  distributed tensors split along their first dimension (pycoll's stay as they are: plain
  parameters plain). Inside a DistModel it splits the parameters too.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

import pycoll.distributed as dist
from pycoll.distributed.auto_parallel.clip_norms import split_groups
from pycoll.distributed.auto_parallel.dtensor import is_dist_tensor, make_dist
from pycoll.distributed.auto_parallel.mesh import ProcessMesh
from pycoll.distributed.auto_parallel.placements import Placement, Shard, block
from pycoll.distributed.auto_parallel.transitions import local_block
from pycoll.distributed.sharding.group_sharded import scaler_over
from pycoll._logging import logger
from pycoll.device import array_module
from pycoll.optimizer.optimizer import LR_SCHEDULER_KEY, state_owner
from pycoll.optimizer.state_slots import FirstStepSlots
from pycoll.optimizer.update_forms import UpdateForms
from pycoll.parallel.clip_norms import completing
from pycoll.runtime_config import get_flags
from pycoll.tensor import Tensor, wrap


_said_eager: set = set()  # the stages whose eager notice was given (once per process)


class _ShardingStage:
    stage = 0

    def __init__(self, sharding_mesh_dim: Union[int, str], mesh: Optional[ProcessMesh] = None):
        name = type(self).__name__
        if isinstance(sharding_mesh_dim, bool) or not isinstance(sharding_mesh_dim, (int, str)):
            raise TypeError(f"{name}: sharding_mesh_dim must be a mesh dimension's index or name, got "
                            f"{sharding_mesh_dim!r}")
        if mesh is not None and not isinstance(mesh, ProcessMesh):
            raise TypeError(f"{name}: mesh must be a dist.ProcessMesh or None, got {type(mesh).__name__}")
        if mesh is not None:
            mesh.dim_index(sharding_mesh_dim, f"{name}: sharding_mesh_dim")
        self.sharding_mesh_dim, self.mesh = sharding_mesh_dim, mesh

    def __repr__(self) -> str:
        return f"{type(self).__name__}(sharding_mesh_dim={self.sharding_mesh_dim!r}, mesh={self.mesh})"


class ShardingStage1(_ShardingStage):
    """Split the optimizer state over mesh dimension ``sharding_mesh_dim`` (ZeRO-1)."""
    stage = 1


class ShardingStage2(_ShardingStage):
    """Split the optimizer state and the gradients over ``sharding_mesh_dim`` (ZeRO-2)."""
    stage = 2


class ShardingStage3(_ShardingStage):
    """Split the optimizer state, the gradients and the parameters over ``sharding_mesh_dim`` (ZeRO-3)."""
    stage = 3


def _free_dim(param: Tensor) -> Optional[int]:
    """The first dimension of ``param`` no mesh dimension cuts yet (None: every one is cut)."""
    cut = [p.get_dim() for p in param.placements if p.is_shard()]
    return next((d for d in range(len(param.shape)) if d not in cut), None)


class _Rows:
    """A distributed parameter's block along one mesh dimension (stage 1; see the module's text)."""

    def __init__(self, param: Tensor, stage: _ShardingStage):
        mesh = param.process_mesh
        self.param, self.mesh = param, mesh
        self.axis = mesh.dim_index(stage.sharding_mesh_dim, "sharding_mesh_dim")
        if not param.placements[self.axis].is_replicated():
            raise ValueError(f"shard_optimizer: parameter {param.name!r} is {param.placements[self.axis]!r} along the "
                             f"sharding dimension {mesh.dim_names[self.axis]!r}; it must be Replicate there")
        self.dim = _free_dim(param)
        self.placements: List[Placement] = list(param.placements)
        self.placements[self.axis] = Shard(self.dim)
        self.group = mesh.get_group(self.axis)
        size = param._array.shape[self.dim]
        line = [mesh.coordinate(rank)[self.axis] for rank in self.group.ranks]  # block of each group rank
        self.bounds = [block(size, len(line), index) for index in line]
        lo, hi = self.bounds[self.group.rank]
        self.stand_in = wrap(self.rows(param._array, lo, hi))
        self.stand_in.name, self.stand_in.stop_gradient = param.name, False

    def rows(self, array: Any, lo: int, hi: int) -> Any:
        return array[(slice(None),) * self.dim + (slice(lo, hi),)]

    def before_step(self) -> None:
        lo, hi = self.bounds[self.group.rank]
        self.stand_in._set_data(self.rows(self.param._array, lo, hi))
        local_grad = self.param._grad
        self.stand_in.grad = None if local_grad is None else self.rows(local_grad._array, lo, hi)

    def after_step(self) -> None:
        """Every rank's updated block into the whole parameter (blocks padded to one size)."""
        whole = self.param._array
        lo, hi = self.bounds[self.group.rank]
        most = max(b - a for a, b in self.bounds)
        shape = list(whole.shape)
        shape[self.dim] = most
        mine = array_module(whole).zeros(shape, dtype=whole.dtype)
        self.rows(mine, 0, hi - lo)[...] = self.stand_in._array
        parts: List[Any] = []
        dist.all_gather(parts, mine, group=self.group)
        for (a, b), part in zip(self.bounds, parts):
            self.rows(whole, a, b)[...] = self.rows(part, 0, b - a)

    def as_state(self, value: Any) -> Tensor:
        return make_dist(value, self.mesh, self.placements, self.param.shape)

    def from_state(self, value: Any) -> Any:
        """This rank's rows of a saved entry: the parameter's local shape or already the rows."""
        array = value._array if isinstance(value, Tensor) else value
        if list(array.shape) == list(self.param._array.shape):
            return self.rows(array, *self.bounds[self.group.rank])
        return array


class ShardOptimizer(UpdateForms):
    """``optimizer`` as ``shard_optimizer`` returns it (see the module's text); what it does not
    define is the wrapped optimizer's."""

    def __init__(self, optimizer: Any, shard_fn: Optional[_ShardingStage] = None,
                 gradient_accumulation_steps: int = 1):
        if not (hasattr(optimizer, "step") and hasattr(optimizer, "_parameter_list")):
            raise TypeError(f"shard_optimizer: optimizer must be a pycoll optimizer, got {type(optimizer).__name__}")
        if shard_fn is not None and not isinstance(shard_fn, _ShardingStage):
            raise TypeError(f"shard_optimizer: shard_fn must be dist.ShardingStage1, ShardingStage2, "
                            f"ShardingStage3 or None, got {type(shard_fn).__name__}")
        steps = gradient_accumulation_steps
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise ValueError(f"shard_optimizer: gradient_accumulation_steps must be an int >= 1, got {steps!r}")
        self._inner_opt, self._shard_fn, self.gradient_accumulation_steps = optimizer, shard_fn, steps
        self._eager: Optional[Tuple[Any, Dict[int, _Rows]]] = None  # stage 1's optimizer over the blocks
        self._by_name: Optional[Dict[str, Tensor]] = None  # see _param_of
        self._slots = FirstStepSlots()  # a state_dict() before the first step

    @property
    def sharding_stage(self) -> Optional[_ShardingStage]:
        return self._shard_fn

    def step(self) -> None:
        """One update. As paddle 3.3.1's eager one, it takes the gradients accumulated over
        ``gradient_accumulation_steps`` backward passes as they are (their sum); only in paddle's
        align mode (``FLAGS_enable_auto_parallel_align_mode``) are they divided by that number."""
        if self.gradient_accumulation_steps > 1 and in_auto_parallel_align_mode():
            self._inner_opt.scale_grads(1.0 / self.gradient_accumulation_steps)
        optimizer, rows = self._stepper()
        self._slots.load(optimizer)
        for entry in rows.values():
            entry.before_step()
        optimizer.step()
        for entry in rows.values():
            entry.after_step()

    def _stepper(self) -> Tuple[Any, Dict[int, _Rows]]:
        """The optimizer a step runs, and the blocks it updates (made at the first step)."""
        if self._eager is not None:
            return self._eager
        params = self._inner_opt._parameter_list
        stage = self._shard_fn
        distributed = [p for p in params if is_dist_tensor(p) and not p.stop_gradient]
        if stage is not None and stage.stage > 1 and stage.stage not in _said_eager:
            _said_eager.add(stage.stage)
            kept = "the gradients stay whole" if stage.stage == 2 else "the gradients and the parameters stay whole"
            logger.warning(f"shard_optimizer({stage!r}) in the eager loop: each rank keeps its block of the optimizer "
                           f"state, as at stage 1, and {kept} (the same updates as paddle's); dist.to_static splits "
                           f"them too")
        if stage is None or not distributed:
            self._eager = (self._inner_opt, {})  # paddle's stages leave plain parameters alone too
        else:
            rows = {id(p): _Rows(p, stage) for p in distributed if _free_dim(p) is not None and  # else: as it is
                    p.process_mesh.get_dim_size(p.process_mesh.dim_index(stage.sharding_mesh_dim, "sharding_mesh_dim")) > 1}
            tensors = [rows[id(p)].stand_in if id(p) in rows else p for p in params]
            blocks = {id(entry.stand_in): entry for entry in rows.values()}
            stepper = self._inner_opt.over(tensors)
            # a clip's norms over the whole gradient: a block's pieces along the sharding dimension too
            stepper.complete_norms_with(completing(
                lambda t: split_groups(blocks[id(t)].param) + [blocks[id(t)].group] if id(t) in blocks
                else split_groups(t)))
            self._eager = (stepper, rows)
            held = self._inner_opt.state_dict()  # state loaded into the optimizer before: its blocks
            if any(key != LR_SCHEDULER_KEY for key in held):
                self.set_state_dict(held)
        return self._eager

    def state_dict(self) -> Dict[str, Any]:
        """The optimizer state; a distributed parameter's entries are distributed tensors with
        its placements (paddle's), or at stage 1 those of its block (Shard along the sharding
        dimension); the whole state's shape either way."""
        optimizer, rows = self._stepper()
        state = optimizer.state_dict()
        self._slots.add_to(state, optimizer)  # before the first step: paddle creates the state then
        for key, value in state.items():
            param = self._param_of(key)
            if param is None or optimizer.holds_one_value(key):
                continue
            entry = rows.get(id(param))
            if entry is not None and list(value._array.shape) == entry.stand_in.shape:
                state[key] = entry.as_state(value._array)
            elif entry is None and list(value._array.shape) == param._local_shape:
                state[key] = make_dist(value._array, param.process_mesh, param.placements, param.shape)
        return state

    def set_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Load a state saved by ``state_dict`` (distributed entries: their local pieces) or a
        whole one (an unsharded optimizer's: this rank's block of each entry is taken)."""
        optimizer, rows = self._stepper()
        self._slots.drop()
        mine = {}
        for key, value in state_dict.items():
            param = self._param_of(key)
            if is_dist_tensor(value):
                value = value._local_value()
            if param is not None and list(getattr(value, "shape", [])) == param.shape != param._local_shape:
                array = value._array if isinstance(value, Tensor) else value
                value = local_block(array, param.process_mesh, param.placements, param.process_mesh.coordinate())
            if param is not None and id(param) in rows:
                value = rows[id(param)].from_state(value)
            mine[key] = value
        optimizer.set_state_dict(mine)

    def _param_of(self, key: str) -> Optional[Tensor]:
        """The distributed parameter a state entry ``key`` ('<name>_<accumulator>_0') belongs to."""
        if self._by_name is None:
            self._by_name = {p.name: p for p in self._inner_opt._parameter_list if is_dist_tensor(p)}
        name = state_owner(key, self._by_name)
        return None if name is None else self._by_name[name]

    def set_lr(self, value: float) -> None:
        self._inner_opt.set_lr(value)
        if self._eager is not None and self._eager[0] is not self._inner_opt:
            self._eager[0].set_lr(value)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_inner_opt":
            raise AttributeError(name)
        return getattr(self._inner_opt, name)


def in_auto_parallel_align_mode() -> bool:
    """Whether paddle's align mode is on (``set_flags({"FLAGS_enable_auto_parallel_align_mode":
    True})``): a sharded optimizer then divides gradients accumulated over k steps by k."""
    return bool(get_flags("FLAGS_enable_auto_parallel_align_mode")["FLAGS_enable_auto_parallel_align_mode"])


def shard_optimizer(optimizer: Any, shard_fn: Optional[_ShardingStage] = None,
                    gradient_accumulation_steps: int = 1) -> ShardOptimizer:
    """paddle's ``dist.shard_optimizer``: ``optimizer`` for a model with distributed parameters
    or a split batch (see the module's text)."""
    return ShardOptimizer(optimizer, shard_fn, gradient_accumulation_steps)


def shard_scaler(scaler: Any) -> Any:
    """paddle's ``dist.shard_scaler``: ``scaler`` (a ``pycoll.amp.GradScaler``) made to skip a step
    on every rank when any rank finds inf or NaN in its gradients (the ranks hold different
    pieces of distributed gradients)."""
    return scaler_over(scaler, None)
