"""Process groups: a set of global ranks, the engine over their communicator, and a timeout."""
from __future__ import annotations

from typing import Any, List


class Group:
    """A communication group (paddle's ``Group``).

    ``ranks`` are global ranks in group order; ``rank`` is this process's rank in the group, or
    -1 when it is not a member (then it has no engine and may not call collectives on it).
    """

    def __init__(self, gid: int, ranks: List[int], global_rank: int, backend: Any, timeout: float):
        self.id = gid
        self.ranks = list(ranks)
        self.nranks = len(self.ranks)
        self._index = {r: i for i, r in enumerate(self.ranks)}
        self.rank = self._index.get(global_rank, -1)
        self.backend = backend
        self.timeout = timeout
        self.seq = 0  # collectives started on this group by this rank
        if hasattr(backend, "owner"):  # a stream-ordered engine numbers its watched calls with seq
            backend.owner = self

    @property
    def world_size(self) -> int:
        return self.nranks

    @property
    def name(self) -> str:
        return "world" if self.id == 0 else f"group {self.id}"

    def is_member(self) -> bool:
        return self.rank >= 0

    def get_group_rank(self, global_rank: int) -> int:
        """The rank in this group of ``global_rank``, or -1 when it is not a member."""
        return self._index.get(global_rank, -1)

    def describe(self) -> str:
        """Name and ranks, for error messages."""
        return f"{self.name} (ranks {self.ranks})"

    def __repr__(self) -> str:
        return f"Group(id={self.id}, ranks={self.ranks}, rank={self.rank}, backend={getattr(self.backend, 'name', None)})"
