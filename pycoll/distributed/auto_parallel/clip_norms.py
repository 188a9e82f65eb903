"""Gradient clipping over auto-parallel's distributed parameters (``pycoll.parallel.clip_norms``):
a parameter's gradient is in pieces over the mesh dimensions that cut it (``split_groups``). It
serves eager training and DistModel (installed as the optimizers' default on import of
auto_parallel) and ShardingStage1's blocks (``optimizer.py``).
"""
from __future__ import annotations

from typing import Any, List


def split_groups(param: Any) -> List[Any]:
    """The groups of the mesh dimensions that cut ``param`` (none for a plain or replicated one)."""
    placements = getattr(param, "placements", None)
    if placements is None:
        return []
    mesh = param.process_mesh
    return [mesh.get_group(axis) for axis, p in enumerate(placements) if p.is_shard() and mesh.shape[axis] > 1]
