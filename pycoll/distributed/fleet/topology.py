"""``HybridCommunicateGroup``: the data- and model-parallel groups of a fleet job, built in
paddle's rank order (the model-parallel index varies fastest: rank = dp_index × mp + mp_index)."""
from __future__ import annotations

from typing import List

import pycoll.distributed as dist


class HybridCommunicateGroup:
    """This rank's place on the dp × mp grid, and the groups along each axis. Every rank builds
    every group (``new_group`` is collective), in the same order."""

    def __init__(self, dp_degree: int, mp_degree: int):
        self._dp, self._mp = dp_degree, mp_degree
        rank = dist.get_rank()
        self._dp_index, self._mp_index = divmod(rank, mp_degree)
        self._mp_group = self._dp_group = None
        for first in range(0, dp_degree * mp_degree, mp_degree):  # the model-parallel groups
            group = dist.new_group(list(range(first, first + mp_degree)))
            if group.rank >= 0:
                self._mp_group = group
        for column in range(mp_degree):  # the data-parallel groups: ranks holding the same blocks
            group = dist.new_group(list(range(column, dp_degree * mp_degree, mp_degree)))
            if group.rank >= 0:
                self._dp_group = group

    # paddle's getters
    def get_global_rank(self) -> int:
        return dist.get_rank()

    def get_data_parallel_rank(self) -> int:
        return self._dp_index

    def get_data_parallel_world_size(self) -> int:
        return self._dp

    def get_data_parallel_group(self) -> dist.Group:
        return self._dp_group

    def get_data_parallel_group_src_rank(self) -> int:
        return self._dp_group.ranks[0]

    def get_model_parallel_rank(self) -> int:
        return self._mp_index

    def get_model_parallel_world_size(self) -> int:
        return self._mp

    def get_model_parallel_group(self) -> dist.Group:
        return self._mp_group

    def get_model_parallel_group_src_rank(self) -> int:
        return self._mp_group.ranks[0]

    def get_pipe_parallel_world_size(self) -> int:
        return 1

    def get_sharding_parallel_world_size(self) -> int:
        return 1

    def get_parallel_mode(self) -> str:
        """paddle's names: ``"data"``, ``"model"`` (tensor) parallel, or both as ``"hybrid"``."""
        return {(True, False): "data", (False, True): "model"}.get((self._dp > 1, self._mp > 1),
                                                                 "hybrid" if self._dp > 1 else "data")

    def topology(self) -> List[List[int]]:
        """The grid: row d holds the global ranks of data-parallel index d, by model index."""
        return [list(range(d * self._mp, (d + 1) * self._mp)) for d in range(self._dp)]
