"""Which rank owns which parameter: paddle's greedy split (pure bookkeeping, no communication)."""
from __future__ import annotations

from typing import List


def owners(sizes: List[int], nranks: int) -> List[int]:
    """The owner (an index into the group's ranks) of each of parameters of ``sizes`` elements:
    from the largest down, each to the rank that owns the fewest elements so far."""
    load = [0] * nranks
    owner = [0] * len(sizes)
    for i in sorted(range(len(sizes)), key=lambda i: (-sizes[i], i)):
        owner[i] = min(range(nranks), key=lambda r: (load[r], r))
        load[owner[i]] += sizes[i]
    return owner
