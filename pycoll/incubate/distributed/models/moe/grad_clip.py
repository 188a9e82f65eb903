"""paddle's ``ClipGradForMOEByGlobalNorm``: a global-norm gradient clip for a model whose expert
parameters are spread over ``moe_group``. The squares of the expert gradients (those
``is_expert_param_func`` picks) are summed over the group's ranks, the others are taken from
this rank alone; every gradient is then scaled by ``clip_norm / max(norm, clip_norm)``.

The summing over the group is ``clip_norms.completing``'s: an expert's gradient is counted like
a parameter held in pieces over the group. Every rank of the group must clip expert gradients
at each step (the sum is a collective). It needs the parameters: call it as paddle's clips are
called, ``clip(params_grads)``; an optimizer that hands its clip gradients alone can use it only
where ``moe_group`` has one rank.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional, Sequence, Tuple

import pycoll.distributed as dist
from pycoll.nn.clip import ClipGradByGlobalNorm, SumAcross
from pycoll.parallel.clip_norms import completing
from pycoll.tensor import wrap

__all__ = ["ClipGradByGlobalNorm", "ClipGradForMOEByGlobalNorm"]


def _then(first: Optional[SumAcross], second: Optional[SumAcross]) -> Optional[SumAcross]:
    if first is None or second is None:
        return first or second
    return lambda sums: second(first(sums))


class ClipGradForMOEByGlobalNorm(ClipGradByGlobalNorm):
    def __init__(self, clip_norm: float, is_expert_param_func: Optional[Callable[[Any], bool]] = None,
                 moe_group: Optional[dist.Group] = None, group_name: str = "default_moe_group"):
        super().__init__(clip_norm, group_name)
        if moe_group is not None and not isinstance(moe_group, dist.Group):
            raise TypeError(f"ClipGradForMOEByGlobalNorm: moe_group must be a Group or None, got "
                            f"{type(moe_group).__name__}")
        if is_expert_param_func is not None and not callable(is_expert_param_func):
            raise TypeError(f"ClipGradForMOEByGlobalNorm: is_expert_param_func must be callable, got "
                            f"{type(is_expert_param_func).__name__}")
        self.moe_group = moe_group
        if self._spread() and is_expert_param_func is None:
            raise ValueError("ClipGradForMOEByGlobalNorm: moe_group has more than one rank, so "
                             "is_expert_param_func (param -> bool) must say which parameters are experts'")
        self.is_expert_param_func = is_expert_param_func

    def __str__(self) -> str:
        return f"Gradient Clip By GlobalNorm, global_norm={self.clip_norm:f}"

    def _spread(self) -> bool:
        return self.moe_group is not None and self.moe_group.nranks > 1

    def clip(self, grads: Sequence[Optional[Any]], sum_across: Optional[SumAcross] = None,
             params: Optional[Sequence[Any]] = None) -> List[Optional[Any]]:
        """``grads`` (arrays) scaled to a global norm of at most ``clip_norm``; ``params``, the
        parameters of ``grads`` in order, are needed where ``moe_group`` spans ranks."""
        if self._spread():
            if params is None or len(params) != len(grads):
                raise ValueError("ClipGradForMOEByGlobalNorm: with a moe_group of several ranks the clip needs "
                                 "each gradient's parameter to pick the experts'; call clip(params_grads)")
            experts = completing(lambda p: [self.moe_group] if self.is_expert_param_func(p) else [])(list(params))
            sum_across = _then(sum_across, experts)
        return super().clip(grads, sum_across)

    def __call__(self, params_grads: Sequence[Tuple[Any, Any]]) -> List[Tuple[Any, Any]]:
        """paddle's call: the ``(param, grad)`` pairs with a gradient, the gradients of those
        whose ``need_clip`` is not False clipped (new Tensors), the others as they were."""
        present = [(p, g) for p, g in params_grads if g is not None]
        clipped = [i for i, (p, _) in enumerate(present) if getattr(p, "need_clip", True)]
        done = self.clip([present[i][1].array for i in clipped], params=[present[i][0] for i in clipped])
        out = list(present)
        for i, grad in zip(clipped, done):
            out[i] = (present[i][0], wrap(grad))
        return out


ClipGradByGlobalNorm = ClipGradForMOEByGlobalNorm  # paddle's alias in this module
