"""``DistributedBatchSampler``: each rank iterates over its own share of a dataset (paddle's signature)."""
from __future__ import annotations

import math
from typing import Any, Iterator, List, Optional

import numpy as np


class DistributedBatchSampler:
    """Yield lists of sample indices, the dataset split evenly over ``num_replicas`` ranks.

    The index list is padded (by repeating its start) to a multiple of ``num_replicas`` so every
    rank gets the same number of samples and of batches; rank r takes every
    ``num_replicas``-th index starting at r. With ``shuffle`` the order is permuted by a
    generator seeded with the epoch (``set_epoch``), identically on every rank.
    """

    def __init__(self, dataset: Any, batch_size: int, num_replicas: Optional[int] = None,
                 rank: Optional[int] = None, shuffle: bool = False, drop_last: bool = False):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"DistributedBatchSampler: batch_size={batch_size!r}; it must be a positive int")
        if num_replicas is None or rank is None:
            import pycoll.distributed as dist

            num_replicas = dist.get_world_size() if num_replicas is None else num_replicas
            rank = dist.get_rank() if rank is None else rank
        if not isinstance(num_replicas, int) or num_replicas <= 0:
            raise ValueError(f"DistributedBatchSampler: num_replicas={num_replicas!r}; it must be a positive int")
        if not isinstance(rank, int) or not 0 <= rank < num_replicas:
            raise ValueError(f"DistributedBatchSampler: rank={rank!r}; it must be in [0, {num_replicas})")
        self.dataset = dataset
        self.batch_size = batch_size
        self.nranks = num_replicas
        self.local_rank = rank
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.epoch = 0
        self.num_samples = int(math.ceil(len(dataset) / num_replicas))
        self.total_size = self.num_samples * num_replicas

    def set_epoch(self, epoch: int) -> None:
        """Reshuffle for ``epoch`` (the same permutation on every rank)."""
        self.epoch = epoch

    def _indices(self) -> List[int]:
        indices = np.arange(len(self.dataset))
        if self.shuffle:
            np.random.default_rng(self.epoch).shuffle(indices)
        indices = indices.tolist()
        indices += indices[:self.total_size - len(indices)]
        return indices[self.local_rank:self.total_size:self.nranks]

    def __iter__(self) -> Iterator[List[int]]:
        batch: List[int] = []
        for index in self._indices():
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        full, rest = divmod(self.num_samples, self.batch_size)
        return full + (1 if rest and not self.drop_last else 0)
