"""The model side of sharding: DataParallel whose gradients go to their owners (levels ``os_g``
and ``p_g_os``) and, at ``p_g_os``, parameters that live only on their owner between uses.

At ``p_g_os`` a rank holds the memory of the parameters it owns. Before a layer's forward its
parameters are broadcast from their owners (every rank runs the same layers in the same order);
a parameter this rank does not own is let go again as soon as it is no longer needed: right
after the forward when no graph is recorded, else the moment its gradient is final in backward
(the graph's backward functions hold the values they need until then; this is torch FSDP's
SHARD_GRAD_OP timing rather than paddle's re-gather in backward). The optimizer step lets go of
any that are still held, since only the owner's copy is updated.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Set

import pycoll.distributed as dist
from pycoll.autograd import is_grad_enabled
from pycoll.nn import Layer
from pycoll.parallel import DataParallel


class GroupShardedModel(DataParallel):
    """``layers`` under DataParallel over ``group``, each parameter's gradient reduced to
    ``owner_of[id(param)]`` (a global rank) when ``level`` is ``os_g`` or ``p_g_os`` (all-reduced
    at ``os``); at ``p_g_os`` the parameters in ``lazy`` are held only while in use."""

    def __init__(self, layers: Layer, group: Optional[dist.Group], level: str, owner_of: Dict[int, int],
                 lazy: Set[int], **data_parallel: Any):
        self.owner_of = owner_of
        self._level = level
        super().__init__(layers, group=group, **data_parallel)
        self._lazy = [p for p in layers.parameters() if id(p) in lazy]
        self._shapes = {id(p): tuple(p.shape) for p in self._lazy}
        for layer in layers.sublayers(include_self=True):
            mine = [p for p in layer._parameters.values() if p is not None and id(p) in lazy]
            if mine:
                layer.register_forward_pre_hook(lambda _layer, _inputs, mine=mine: self._gather(mine))
                layer.register_forward_post_hook(lambda _layer, _inputs, _outputs, mine=mine: self._after_forward(mine))
        for p in self._lazy:
            p.register_grad_ready_hook(self._release)
        self.release_parameters()

    def _gradient_owners(self, params: List[Any]) -> Optional[List[int]]:
        return None if self._level == "os" else [self.owner_of[id(p)] for p in params]

    def _gather(self, params: List[Any]) -> None:
        """Bring ``params`` to every rank, from their owners."""
        me = dist.get_rank()
        for p in params:
            owner = self.owner_of[id(p)]
            if owner != me and p.size == 0:
                p._set_data((self._group or dist.get_group(0)).array_module.empty(self._shapes[id(p)], dtype=p.dtype))
            dist.broadcast(p, src=owner, group=self._group)

    def _after_forward(self, params: List[Any]) -> None:
        if not is_grad_enabled():
            for p in params:
                self._release(p)

    def _release(self, param: Any) -> None:
        if self.owner_of[id(param)] != dist.get_rank():
            param._clear_data()

    def release_parameters(self) -> None:
        """Let go of every parameter this rank does not own (level p_g_os; nothing otherwise)."""
        for p in self._lazy:
            self._release(p)

    def get_all_parameters(self, convert2cpu: bool = False) -> None:
        """Bring every parameter to every rank (paddle's name): before saving or inspecting the
        whole model at level p_g_os. Collective. The next optimizer step lets them go again.
        ``convert2cpu`` is accepted for paddle's signature; gathered parameters stay where the
        model is."""
        self._gather(self._lazy)
