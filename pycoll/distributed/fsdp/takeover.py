"""How an optimizer built on a layer's parameters, before or after ``fully_shard``, comes to
step their shards. paddle marks the parameters (``_need_shard``) and its optimizer notices the
mark at its first step, then rebinds its own ``step`` and ``clear_grad`` to update the
parameters' slices (``FullyShardOptimizer``). pycoll does the same through the optimizer's
``hand_over``: at its next call, an optimizer holding a sharded parameter lets the sharded layer
take it over, and its methods become those of a ``ShardedOptimizer`` over it, which keeps the
state of, and updates, this rank's pieces.

Its ``state_dict()`` is then the whole state, keyed and shaped as the unsharded optimizer's
(``ShardedOptimizer.whole_state_dict``: gathered from every rank's pieces, collective over the
sharding group, as the layer's whole ``state_dict``); ``set_state_dict`` takes such a whole state
(or the unsharded optimizer's) and keeps this rank's pieces. So a checkpoint is the two whole
dicts, saved by one rank and loaded by every rank, also into a job of another size.
"""
from __future__ import annotations

from pycoll.distributed.sharding import GroupShardedModel, ShardedOptimizer
from pycoll.optimizer.optimizer import Optimizer

# what a taken-over optimizer answers through its ShardedOptimizer (minimize calls self.step)
REBOUND = ("step", "clear_grad", "clear_gradients", "step_grads", "scale_grads", "set_state_dict",
           "get_lr", "set_lr")
TAKEN = "_fully_shard_optimizer"  # attribute of a taken-over optimizer: its ShardedOptimizer


def take_over(optimizer: Optimizer, model: GroupShardedModel) -> ShardedOptimizer:
    """Make ``optimizer`` step ``model``'s pieces from now on: its state (stepped or loaded
    before) is cut to this rank's pieces and its methods answer through a ShardedOptimizer."""
    sharded = ShardedOptimizer(optimizer, model)
    for name in REBOUND:
        setattr(optimizer, name, getattr(sharded, name))
    optimizer.state_dict = sharded.whole_state_dict
    setattr(optimizer, TAKEN, sharded)
    return sharded
