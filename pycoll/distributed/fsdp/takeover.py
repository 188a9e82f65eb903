"""How an optimizer built on a layer's parameters, before or after ``fully_shard``, comes to
step their shards. paddle marks the parameters (``_need_shard``) and its optimizer notices the
mark at its first step, then rebinds its own ``step`` and ``clear_grad`` to update the
parameters' slices (``FullyShardOptimizer``). pycoll does the same through the optimizer's
``hand_over``: at its next call, an optimizer holding a sharded parameter lets the sharded layer
take it over, and its methods become those of a ``ShardedOptimizer`` over it, which keeps the
state of, and updates, this rank's pieces.
"""
from __future__ import annotations

from pycoll.distributed.sharding import GroupShardedModel, ShardedOptimizer
from pycoll.optimizer.optimizer import Optimizer

# what a taken-over optimizer answers through its ShardedOptimizer (minimize calls self.step)
REBOUND = ("step", "clear_grad", "clear_gradients", "step_grads", "scale_grads", "state_dict",
           "set_state_dict", "get_lr", "set_lr")
TAKEN = "_fully_shard_optimizer"  # attribute of a taken-over optimizer: its ShardedOptimizer


def take_over(optimizer: Optimizer, model: GroupShardedModel) -> ShardedOptimizer:
    """Make ``optimizer`` step ``model``'s pieces from now on: its state (stepped or loaded
    before) is cut to this rank's pieces and its methods answer through a ShardedOptimizer."""
    sharded = ShardedOptimizer(optimizer, model)
    for name in REBOUND:
        setattr(optimizer, name, getattr(sharded, name))
    setattr(optimizer, TAKEN, sharded)
    return sharded
