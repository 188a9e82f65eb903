"""``HybridCommunicateGroup``: the data-, sharding- and model-parallel groups of a fleet job,
built in paddle's rank order (axes data, sharding, model; the model-parallel index varies
fastest: rank = (dp_index × sharding + sharding_index) × mp + mp_index)."""
from __future__ import annotations

import itertools
from typing import Dict, List, Optional

import pycoll.distributed as dist
from pycoll.distributed.parallel_mode import ParallelMode

AXES = ("data", "sharding", "model")


class HybridCommunicateGroup:
    """This rank's place on the dp × sharding × mp grid, and the groups along each axis. Every
    rank builds every group (``new_group`` is collective), in the same order."""

    def __init__(self, dp_degree: int, mp_degree: int, sharding_degree: int = 1):
        self._degrees = dict(zip(AXES, (dp_degree, sharding_degree, mp_degree)))
        rank = dist.get_rank()
        self._coords = dict(zip(AXES, _coordinates(rank, [dp_degree, sharding_degree, mp_degree])))
        self._groups: Dict[str, dist.Group] = {}
        for axis in ("model", "data", "sharding"):
            for members in self._lines(axis):
                group = dist.new_group(members)
                if group.rank >= 0:
                    self._groups[axis] = group

    def _lines(self, axis: str) -> List[List[int]]:
        """For each setting of the other axes, the global ranks along ``axis``, in rank order."""
        degrees = [self._degrees[a] for a in AXES]
        fixed = [range(d) if a != axis else [None] for a, d in zip(AXES, degrees)]
        lines = []
        for point in itertools.product(*fixed):
            moving = [range(d) if p is None else [p] for p, d in zip(point, degrees)]
            lines.append(sorted(_rank(c, degrees) for c in itertools.product(*moving)))
        return lines

    # paddle's getters
    def get_global_rank(self) -> int:
        return dist.get_rank()

    def get_data_parallel_rank(self) -> int:
        return self._coords["data"]

    def get_data_parallel_world_size(self) -> int:
        return self._degrees["data"]

    def get_data_parallel_group(self) -> dist.Group:
        return self._groups["data"]

    def get_data_parallel_group_src_rank(self) -> int:
        return self._groups["data"].ranks[0]

    def get_model_parallel_rank(self) -> int:
        return self._coords["model"]

    def get_model_parallel_world_size(self) -> int:
        return self._degrees["model"]

    def get_model_parallel_group(self) -> dist.Group:
        return self._groups["model"]

    def get_model_parallel_group_src_rank(self) -> int:
        return self._groups["model"].ranks[0]

    def get_sharding_parallel_rank(self) -> int:
        return self._coords["sharding"]

    def get_sharding_parallel_world_size(self) -> int:
        return self._degrees["sharding"]

    def get_sharding_parallel_group(self) -> dist.Group:
        return self._groups["sharding"]

    def get_sharding_parallel_group_src_rank(self) -> int:
        return self._groups["sharding"].ranks[0]

    def get_pipe_parallel_world_size(self) -> int:
        return 1  # fleet here has no pipeline parallelism: every rank is its only stage

    def get_stage_id(self) -> int:
        return 0

    def get_parallel_mode(self) -> Optional[int]:
        """paddle's ``ParallelMode``: TENSOR_PARALLEL with model parallelism (whatever else),
        else SHARDING_PARALLEL with sharding (dp beside it or not), else DATA_PARALLEL with data
        parallelism; None for a job with none (paddle returns nothing there either)."""
        dp, sharding, mp = (self._degrees[a] > 1 for a in AXES)
        if mp:
            return ParallelMode.TENSOR_PARALLEL
        if sharding:
            return ParallelMode.SHARDING_PARALLEL
        return ParallelMode.DATA_PARALLEL if dp else None

    def topology(self) -> List[List[int]]:
        """The grid: one row per (data, sharding) index pair, the global ranks by model index."""
        return self._lines("model")


def _coordinates(rank: int, degrees: List[int]) -> List[int]:
    coords = []
    for d in reversed(degrees):
        rank, c = divmod(rank, d)
        coords.append(c)
    return coords[::-1]


def _rank(coords: tuple, degrees: List[int]) -> int:
    rank = 0
    for c, d in zip(coords, degrees):
        rank = rank * d + c
    return rank
