"""``shard_optimizer`` and the sharding stages it takes (paddle's ``ShardingStage1/2/3``).

In pycoll's eager loop the gradients are already those of the whole batch when ``step()`` runs
(``propagation.py`` sums them where the split batch meets the parameters), so the optimizer
steps as it is. The sharding stages split the optimizer state (1), the gradients too (2) and the
parameters too (3) over a mesh dimension: pycoll does that inside a DistModel (``dist.to_static``
takes the stage as ``strategy.sharding``, over its data-parallel dimension, with
``dist.sharding``'s ZeRO machinery); an eager ``step()`` with a stage is refused by name.
"""
from __future__ import annotations

from typing import Any, Optional, Union

from pycoll.distributed.auto_parallel.mesh import ProcessMesh


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


class ShardOptimizer:
    """``optimizer`` as ``shard_optimizer`` returns it (see the module's text); everything but
    ``step`` is the wrapped optimizer's."""

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

    @property
    def sharding_stage(self) -> Optional[_ShardingStage]:
        return self._shard_fn

    def step(self) -> None:
        """One update; with ``gradient_accumulation_steps`` k the gradients accumulated over k
        backward passes are divided by k first (paddle's rule)."""
        if self._shard_fn is not None:
            raise NotImplementedError(
                f"shard_optimizer with {self._shard_fn!r}: pycoll shards the optimizer inside a DistModel; "
                f"pass this optimizer to dist.to_static(layer, loader, loss, optimizer), or call "
                f"dist.shard_optimizer(optimizer) without a stage for the eager loop")
        if self.gradient_accumulation_steps > 1:
            self._inner_opt.scale_grads(1.0 / self.gradient_accumulation_steps)
        self._inner_opt.step()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_inner_opt":
            raise AttributeError(name)
        return getattr(self._inner_opt, name)


def shard_optimizer(optimizer: Any, shard_fn: Optional[_ShardingStage] = None,
                    gradient_accumulation_steps: int = 1) -> ShardOptimizer:
    """paddle's ``dist.shard_optimizer``: ``optimizer`` for a model with distributed parameters
    or a split batch (see the module's text)."""
    return ShardOptimizer(optimizer, shard_fn, gradient_accumulation_steps)
