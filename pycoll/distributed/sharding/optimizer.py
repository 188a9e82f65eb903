"""The optimizer side of sharding: each rank keeps the state of, and updates, the parameters it
owns; the others then come from their owners (broadcast after the step, or, for parameters held
only while in use at level ``p_g_os``, at their layer's next forward)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional

import pycoll.distributed as dist


class ShardedOptimizer:
    """``optimizer`` stepping this rank's share of the parameters over ``group``. ``owner_of``
    maps ``id(param)`` to its owner's global rank; ``model`` (a GroupShardedModel, if any) is
    told to let go of the parameters it holds only while in use. With ``offload`` the state is kept, and the
    update done, in host memory. Its ``state_dict`` is this rank's share."""

    def __init__(self, optimizer: Any, group: Optional[dist.Group], owner_of: Dict[int, int],
                 model: Any = None, offload: bool = False):
        self._group = group
        self._parameter_list: List[Any] = [p for p in optimizer._parameter_list if id(p) in owner_of]
        unknown = [p.name for p in optimizer._parameter_list if id(p) not in owner_of and not p.stop_gradient]
        if unknown:
            raise ValueError(f"sharding: the optimizer updates parameters the sharded model does not "
                             f"train: {unknown[:5]}; build the optimizer from model.parameters()")
        self._owner_of = owner_of
        self._model = model
        self._lazy = {id(p) for p in model._lazy} if model is not None else set()
        me = dist.get_rank()
        self._inner = optimizer.restricted_to([p for p in self._parameter_list if owner_of[id(p)] == me],
                                              state_on_host=offload)

    def step(self) -> None:
        self._inner.step()
        for param in self._parameter_list:
            if id(param) not in self._lazy:
                dist.broadcast(param, src=self._owner_of[id(param)], group=self._group)
        if self._model is not None:
            self._model.release_parameters()

    def clear_grad(self, set_to_zero: bool = True) -> None:
        for param in self._parameter_list:
            param.clear_gradient(set_to_zero)

    clear_gradients = clear_grad

    def state_dict(self) -> Dict[str, Any]:
        """This rank's share of the optimizer state."""
        return self._inner.state_dict()

    def set_state_dict(self, state_dict: Dict[str, Any]) -> None:
        """Take this rank's share from ``state_dict`` (a whole or a sharded one)."""
        self._inner.set_state_dict(state_dict)

    def get_lr(self) -> float:
        return self._inner.get_lr()

    def set_lr(self, value: float) -> None:
        self._inner.set_lr(value)
