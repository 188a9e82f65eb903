"""How an optimizer built on a layer's parameters before (or just after) ``fully_shard`` keeps
working. paddle marks the parameters (``_need_shard`` / ``_need_shard_auto``) and its optimizer
notices the mark at its first step, then rebinds its own ``step`` and ``clear_grad`` to update
the parameters' slices (``FullyShardOptimizer``). pycoll's optimizer has no such check, so the
sharded layer looks for the optimizers that hold its parameters (through the parameter lists
that refer to them) and rebinds the same way: each one's methods become those of a
``ShardedOptimizer`` over it, which keeps the state of, and updates, this rank's pieces.
"""
from __future__ import annotations

import gc
from typing import Any, List, Sequence

from pycoll.distributed.sharding import GroupShardedModel, ShardedOptimizer
from pycoll.optimizer.optimizer import Optimizer

# what a taken-over optimizer answers through its ShardedOptimizer (minimize calls self.step)
REBOUND = ("step", "clear_grad", "clear_gradients", "step_grads", "scale_grads", "state_dict",
           "set_state_dict", "get_lr", "set_lr")
TAKEN = "_fully_shard_optimizer"  # attribute of a taken-over optimizer: its ShardedOptimizer


def optimizers_over(params: Sequence[Any]) -> List[Optimizer]:
    """The live optimizers whose parameter list holds any of ``params`` and that are not taken
    over yet."""
    if not params:
        return []
    wanted = {id(p) for p in params}
    lists = [r for r in gc.get_referrers(*params) if type(r) is list]
    owners = gc.get_referrers(*lists) if lists else []
    # an instance refers to its attributes' list directly, or (before CPython 3.11) through its __dict__
    dicts = [d for d in owners if type(d) is dict and any(d.get("_parameter_list") is l for l in lists)]
    owners += gc.get_referrers(*dicts) if dicts else []
    found: List[Optimizer] = []
    for owner in owners:
        if isinstance(owner, Optimizer) and not hasattr(owner, TAKEN) and all(owner is not f for f in found) \
                and any(id(p) in wanted for p in owner._parameter_list):
            found.append(owner)
    return found


def take_over(optimizer: Optimizer, model: GroupShardedModel) -> ShardedOptimizer:
    """Make ``optimizer`` step ``model``'s pieces from now on: its state (stepped or loaded
    before) is cut to this rank's pieces and its methods answer through a ShardedOptimizer."""
    sharded = ShardedOptimizer(optimizer, model)
    for name in REBOUND:
        setattr(optimizer, name, getattr(sharded, name))
    setattr(optimizer, TAKEN, sharded)
    return sharded
