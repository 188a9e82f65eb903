"""The optimizer side of sharding: each rank keeps the state of, and updates, its own piece of
every parameter (ZeRO's layout); the model then makes the parameters whole again (an all-gather
after the step, or, for parameters held only in use at level ``p_g_os``, at their layer's next
forward).

Each step gives the same parameters as the unsharded optimizer: the inner optimizer, over
stand-ins for this rank's pieces, reads each parameter's ParamAttr rate factor and regularizer
from its stand-in (both elementwise); gradients are clipped here, group by group, with norms
summed over the ranks; and Lamb's trust ratio takes the whole parameter's norms."""
from __future__ import annotations

from typing import Any, Dict, List, Tuple

import numpy as np

import pycoll.distributed as dist
from pycoll._sparse_rows import record_for_piece
from pycoll.nn.clip import SumAcross
from pycoll.optimizer.optimizer import LR_SCHEDULER_KEY, MASTER_WEIGHTS_KEY, nested_state, state_owner
from pycoll.optimizer.state_slots import FirstStepSlots
from pycoll.optimizer.update_forms import UpdateForms
from pycoll.parallel.flat_block import FlatBlock
from pycoll.tensor import Tensor, wrap


class ShardedOptimizer(UpdateForms):
    """``optimizer`` stepping this rank's pieces of ``model``'s parameters (a GroupShardedModel).
    With ``offload`` the state is kept, and the update done, in host memory. Its
    ``state_dict`` holds this rank's pieces (1-D); ``whole_state_dict`` assembles the whole."""

    _steps_given_grads = False  # step() reads the gradients' reduced pieces (UpdateForms)

    def __init__(self, optimizer: Any, model: Any, offload: bool = False):
        trainable = {id(p) for p in model.trainable}
        unknown = [p.name for p in optimizer._parameter_list if id(p) not in trainable and not p.stop_gradient]
        if unknown:
            raise ValueError(f"sharding: the optimizer updates parameters the sharded model does not "
                             f"train: {unknown[:5]}; build the optimizer from model.parameters()")
        self._model = model
        self._group = model.shard_group
        self._frozen_at_wrap = [p for p in optimizer._parameter_list if id(p) not in trainable]
        self._parameter_list: List[Any] = [p for p in optimizer._parameter_list if id(p) in trainable]
        self._pieces: List[Any] = []  # (parameter, its stand-in: a Tensor over this rank's piece)
        for p in self._parameter_list:
            piece = model.piece(p)
            if piece.size:
                stand_in = wrap(piece)
                stand_in.name, stand_in.stop_gradient = p.name, False
                self._pieces.append((p, stand_in))
        self._inner = optimizer.over([t for _, t in self._pieces], state_on_host=offload)
        self._slots = FirstStepSlots()  # a state_dict() before the first step: see state_dict
        # grad_clip's norms need every rank's pieces: clipped here, group by group as the unsharded
        # optimizer clips, and not again by the inner optimizer
        self._clips = _clips_by_group(optimizer, self._parameter_list)
        self._user_grad_clip = optimizer._grad_clip
        self._inner._grad_clip = None
        self._inner._groups = [{k: v for k, v in g.items() if k != "grad_clip"} for g in self._inner._groups]
        if model._nranks > 1 and hasattr(self._inner, "complete_trust_norms_with"):  # Lamb
            self._inner.complete_trust_norms_with(self._whole_rows)
        held = optimizer.state_dict()  # state loaded (or stepped) before wrapping: this rank's pieces of it
        if any(key != LR_SCHEDULER_KEY for key in held):
            self.set_state_dict(held)

    def step(self) -> None:
        thawed = [p.name for p in self._frozen_at_wrap if not p.stop_gradient and p.grad is not None]
        if thawed:  # the pieces, the reducer and the state were laid out for the parameters trainable then
            raise RuntimeError(f"sharding: parameters {thawed[:5]} were frozen (stop_gradient=True) when the model "
                               f"was sharded and take a gradient now; the sharded optimizer cannot update them "
                               f"(they would stay as they are): unfreeze them before sharding, or shard anew")
        # a parameter frozen since the wrap (stop_gradient) is skipped, as the unsharded optimizer
        # skips it: its zeroed gradient (clear_grad's default) would still move it under momentum
        grads = {id(p): None if p.stop_gradient else self._model.grad_piece(p) for p in self._parameter_list}
        for clip, params in self._clips:  # every parameter in order, empty pieces too: aligned across ranks
            clipped = clip.clip_grads(params, [grads[id(p)] for p in params], self._norm_sums)
            grads.update((id(p), g) for p, g in zip(params, clipped))
        for param, stand_in in self._pieces:
            stand_in._set_data(self._model.piece(param))
            # what the inner optimizer reads of a parameter besides its value (ParamAttr's rate
            # factor and regularizer; a group's, set on the parameter); read at each step, as the
            # unsharded optimizer reads them. Both act elementwise, so on a piece as on the whole
            stand_in.optimize_attr = getattr(param, "optimize_attr", {"learning_rate": 1.0})
            stand_in.regularizer = getattr(param, "regularizer", None)
            grad = grads[id(param)]
            stand_in.grad = None if grad is None else wrap(grad)
            record_for_piece(param, stand_in, *self._model._bounds[id(param)], self._model._shapes[id(param)])
        self._slots.load(self._inner)
        self._inner.step()
        self._model.after_step()

    def _norm_sums(self, params: List[Any]) -> SumAcross:
        """The clip's ``norm_sums``: the sums of squares of ``params``' gradient pieces added up
        over the sharding group, then over the model-parallel ranks where the inner optimizer
        says its parameters are split."""
        model_parallel = self._inner.norm_sums_for(params)
        if model_parallel is None:
            return self._sum_across
        return lambda sums: model_parallel(self._sum_across(sums))

    def _whole_rows(self, names: List[str], rows: np.ndarray) -> np.ndarray:
        """``rows`` (one per piece of the parameters ``names``) added up over the ranks holding
        the other pieces: padded to a row per parameter of this optimizer, so that every rank
        sends the same shape whatever pieces it holds."""
        index = {p.name: i for i, p in enumerate(self._parameter_list)}
        at = [index[name] for name in names]
        full = np.zeros((len(index), rows.shape[1]), np.float64)
        full[at] = rows
        return self._sum_across(full.ravel()).reshape(full.shape)[at]

    def _sum_across(self, sums: np.ndarray) -> np.ndarray:
        """``sums`` (one float per entry) added up over the ranks that hold the other pieces."""
        if self._model._nranks == 1:
            return sums
        total = self._model._xp.asarray(sums, dtype=np.float64)
        dist.all_reduce(total, group=self._group)
        return np.asarray(total.tolist(), dtype=np.float64)

    def step_grads(self) -> List[Any]:
        """The gradients the next step uses: whole, or this rank's pieces (views, changed in place)."""
        pieces = (self._model.grad_piece(param) for param in self._parameter_list)
        return [grad for grad in pieces if grad is not None]

    def scale_grads(self, factor: float) -> None:
        """Multiply the gradients the next step uses (whole or this rank's pieces) by ``factor``."""
        for grad in self.step_grads():
            grad *= factor  # a view of the whole gradient, or the reducer's piece: in place

    def clear_grad(self, set_to_zero: bool = True) -> None:
        for param in self._parameter_list:
            param.clear_gradient(set_to_zero)
        self._model.clear_grad_pieces(set_to_zero)

    clear_gradients = clear_grad

    def state_dict(self) -> Dict[str, Any]:
        """This rank's pieces of the optimizer state (keyed as the unsharded optimizer's): each
        piece of an accumulator or master weight a FlatBlock, so that ``dist.save_state_dict``
        saves, and ``dist.load_state_dict`` fills, every rank's own piece; the scalar
        accumulators (beta powers) as they are, the same on every rank. Before the first step it
        holds zero-filled entries that a checkpoint can be read into in place (paddle's resume,
        ``dist.load_state_dict(opt.state_dict(), path)``), loaded at the first step."""
        state = self._inner.state_dict()
        self._slots.add_to(state, self._inner)
        blocks = {param.name: (self._model._bounds[id(param)][0], self._numel(param)) for param, _ in self._pieces}
        for param, stand_in in self._pieces:
            for key, name in self._inner._entries(stand_in.name, stand_in).items():
                if key in state and name in self._inner._accumulator_names:
                    state[key] = FlatBlock.over(state[key]._array, *blocks[param.name])
        if MASTER_WEIGHTS_KEY in state:
            state[MASTER_WEIGHTS_KEY] = {name: FlatBlock.over(value._array, *blocks[name])
                                         for name, value in state[MASTER_WEIGHTS_KEY].items()}
        return state

    def whole_state_dict(self) -> Dict[str, Any]:
        """The whole optimizer state, keyed as the unsharded optimizer's, assembled from every
        rank's pieces (collective; every rank gets it). Pieces are matched by parameter name, so
        every rank must have built the same model (as DataParallel requires anyway)."""
        states: List[Dict[str, np.ndarray]] = []
        mine = self._inner.state_dict()  # no slots: before the first step there is no state to gather
        scheduler = mine.pop(LR_SCHEDULER_KEY, None)  # the same on every rank: not gathered
        dist.all_gather_object(states, {k: v.numpy() for k, v in mine.items()}, group=self._group)
        whole: Dict[str, Any] = {} if scheduler is None else {LR_SCHEDULER_KEY: scheduler}
        for param in self._parameter_list:
            prefix = f"{param.name}_"
            for key in dict.fromkeys(k for state in states for k in state if k.startswith(prefix)):
                name = key[len(prefix):-2]
                if name in self._inner._scalar_accumulators:
                    whole[key] = next(state[key] for state in states if key in state)
                elif name in self._inner._accumulator_names:
                    pieces = [state[key] for state in states if key in state]
                    whole[key] = np.concatenate(pieces).reshape(self._model._shapes[id(param)])
        return {k: v if isinstance(v, (Tensor, dict)) else wrap(v) for k, v in whole.items()}

    def set_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Take this rank's pieces from ``state_dict``: a whole state (the unsharded optimizer's,
        or ``whole_state_dict``'s) or this rank's own ``state_dict``. Entries that belong to no
        parameter of this optimizer go to the inner optimizer as they are, which refuses a state
        saved from a model whose parameter names differ (as an unsharded optimizer does)."""
        self._slots.drop()
        pieces = {param.name: param for param, _ in self._pieces}
        elsewhere = {param.name for param in self._parameter_list} - set(pieces)  # no piece here
        mine: Dict[str, Any] = {}
        for key, value in nested_state(state_dict).items():
            if key == MASTER_WEIGHTS_KEY:
                mine[key] = {name: self._piece_of(pieces[name], master)
                             for name, master in value.items() if name in pieces}
                continue
            owner = state_owner(key, [*pieces, *elsewhere])
            if owner in pieces:
                mine[key] = self._piece_of(pieces[owner], value)
            elif owner is None:
                mine[key] = value  # the scheduler's state, or an entry of no parameter here
        self._inner.set_state_dict(mine)

    def _piece_of(self, param: Any, value: Any) -> Any:
        """This rank's piece of ``param``'s state entry ``value``: of a whole entry (the
        parameter's shape, or flattened as a checkpoint of FlatBlocks merges it) its block, else
        the entry as it is (already a piece, or a one-element accumulator). ValueError for
        another rank's piece (a FlatBlock of other bounds)."""
        lo, hi = self._model._bounds[id(param)]
        numel = self._numel(param)
        if isinstance(value, FlatBlock) and value._array.size == hi - lo < numel and value.block_offset != lo:
            raise ValueError(f"sharding: set_state_dict got the piece of {param.name!r} at elements "
                             f"[{value.block_offset}, {value.block_offset + hi - lo}), which another rank holds; "
                             f"this rank's is [{lo}, {hi})")
        arr = value.numpy() if isinstance(value, Tensor) else np.asarray(value)
        return arr.reshape(-1)[lo:hi] if arr.size == numel else arr

    def _numel(self, param: Any) -> int:
        """The elements of ``param`` whole (at level p_g_os its array is released between uses)."""
        return int(np.prod(self._model._shapes[id(param)]))

    def get_lr(self) -> float:
        return self._inner.get_lr()

    def set_lr(self, value: float) -> None:
        self._inner.set_lr(value)

    def set_lr_scheduler(self, scheduler: Any) -> None:
        """The learning rate from ``scheduler`` from now on, as the unsharded optimizer's."""
        self._inner.set_lr_scheduler(scheduler)

    @property
    def _learning_rate(self) -> Any:
        """The learning rate (a number or an LRScheduler), paddle's attribute."""
        return self._inner._learning_rate

    @property
    def _grad_clip(self) -> Any:
        """The optimizer's gradient clip, paddle's attribute (this optimizer applies it, group by group)."""
        return self._user_grad_clip


def _clips_by_group(optimizer: Any, params: List[Any]) -> List[Tuple[Any, List[Any]]]:
    """``(clip, its parameters)`` for each of ``optimizer``'s parameter groups that clips (its
    own ``grad_clip``, else the optimizer's), its parameters those of ``params`` in the group, in
    order: the unsharded optimizer clips each group's gradients apart, with a norm of its own."""
    group_of = {id(p): g for p, g in zip(optimizer._parameter_list, optimizer._group_index)}
    clips = []
    for g, options in enumerate(optimizer._groups):
        clip = options.get("grad_clip", optimizer._grad_clip)
        members = [p for p in params if group_of[id(p)] == g]
        if clip is not None and members:
            clips.append((clip, members))
    return clips
