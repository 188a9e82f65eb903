"""Assigning gradients to communication buckets (pure bookkeeping, no communication)."""
from __future__ import annotations

from typing import List, Sequence


def assign_buckets(order: Sequence[int], nbytes: Sequence[int], dtypes: Sequence[object],
                   cap: int, last_cap: int) -> List[List[int]]:
    """Split the tensors ``order`` (indices, in the order their gradients become ready) into buckets.

    The last bucket, holding the tensors ready last, is filled from the end of ``order`` up to
    ``last_cap`` bytes, so the all-reduce left after backward is small; the others are filled in
    ``order`` up to ``cap`` bytes. A bucket holds one dtype and at least one tensor.
    """
    order = list(order)
    last: List[int] = []
    size = 0
    while order:
        i = order[-1]
        if last and (size + nbytes[i] > last_cap or dtypes[i] != dtypes[last[0]]):
            break
        last.insert(0, order.pop())
        size += nbytes[i]
    buckets: List[List[int]] = []
    current: List[int] = []
    size = 0
    for i in order:
        if current and (size + nbytes[i] > cap or dtypes[i] != dtypes[current[0]]):
            buckets.append(current)
            current, size = [], 0
        current.append(i)
        size += nbytes[i]
    if current:
        buckets.append(current)
    if last:
        buckets.append(last)
    return buckets
