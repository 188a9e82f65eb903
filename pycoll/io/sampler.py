"""Batch samplers (paddle's signatures): ``BatchSampler`` over a whole dataset, and
``DistributedBatchSampler``, with which each rank iterates over its own share of it."""
from __future__ import annotations

import math
from typing import Any, Iterable, Iterator, List, Optional

import numpy as np

from pycoll.io.samplers import RandomSampler, Sampler, SequenceSampler


class BatchSampler(Sampler[List[Any]]):
    """Lists of indices of what ``sampler`` yields, ``batch_size`` at a time. Given ``dataset``
    instead, the sampler is paddle's: a ``SequenceSampler`` over it, or with ``shuffle`` a
    ``RandomSampler``, a new permutation each epoch from NumPy's global generator (so
    ``np.random.seed`` repeats paddle's order)."""

    def __init__(self, dataset: Any = None, sampler: Any = None, shuffle: bool = False,
                 batch_size: int = 1, drop_last: bool = False):
        if (dataset is None) == (sampler is None):
            raise ValueError("BatchSampler: give exactly one of dataset and sampler")
        _flags(shuffle, drop_last, "BatchSampler")
        if sampler is not None and shuffle:
            raise ValueError("BatchSampler: shuffle=True goes with dataset, not with a sampler "
                             "(the sampler chooses the order)")
        if sampler is None:
            sampler = RandomSampler(dataset) if shuffle else SequenceSampler(dataset)
        self.dataset, self.sampler, self.shuffle = dataset, sampler, bool(shuffle)
        self.batch_size = _positive(batch_size, "BatchSampler: batch_size")
        self.drop_last = bool(drop_last)

    def __iter__(self) -> Iterator[List[Any]]:
        return batches(self.sampler, self.batch_size, self.drop_last)

    def __len__(self) -> int:
        return batch_count(len(self.sampler), self.batch_size, self.drop_last)


class DistributedBatchSampler(BatchSampler):
    """Yield lists of sample indices, the dataset split evenly over ``num_replicas`` ranks
    (paddle's order, sample for sample).

    The index list is padded (by repeating its start) to a multiple of ``num_replicas`` so every
    rank gets the same number of samples and of batches. Each global step's ``batch_size *
    num_replicas`` indices are dealt out in blocks: rank r takes the r-th block of
    ``batch_size``, and the last, shorter step is cut into equal blocks the same way. With
    ``shuffle`` the padded list is first permuted by ``numpy.random.RandomState(epoch)``,
    identically on every rank, and each pass moves to the next epoch (``set_epoch`` sets it).
    """

    def __init__(self, dataset: Any, batch_size: int, num_replicas: Optional[int] = None,
                 rank: Optional[int] = None, shuffle: bool = False, drop_last: bool = False):
        _positive(batch_size, "DistributedBatchSampler: batch_size")
        _flags(shuffle, drop_last, "DistributedBatchSampler")
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
        count = len(self.dataset)
        indices = list(range(count))
        pad = self.total_size - count
        indices += (indices * math.ceil(pad / count))[:pad] if count else []
        if self.shuffle:
            np.random.RandomState(self.epoch).shuffle(indices)
            self.epoch += 1
        step = self.batch_size * self.nranks
        tail = self.total_size % step  # the last global step, shorter: equal blocks of it
        mine = []
        for start in range(self.local_rank * self.batch_size, self.total_size - tail, step):
            mine += indices[start:start + self.batch_size]
        share = tail // self.nranks
        rest = indices[self.total_size - tail:]
        return mine + rest[self.local_rank * share:(self.local_rank + 1) * share]

    def __iter__(self) -> Iterator[List[int]]:
        return batches(self._indices(), self.batch_size, self.drop_last)

    def __len__(self) -> int:
        return batch_count(self.num_samples, self.batch_size, self.drop_last)


def batches(indices: Iterable[Any], batch_size: int, drop_last: bool) -> Iterator[List[Any]]:
    """``indices`` in lists of ``batch_size``; the shorter last one unless ``drop_last``."""
    batch: List[Any] = []
    for index in indices:
        batch.append(index)
        if len(batch) == batch_size:
            yield batch
            batch = []
    if batch and not drop_last:
        yield batch


def batch_count(samples: int, batch_size: int, drop_last: bool) -> int:
    full, rest = divmod(samples, batch_size)
    return full + (1 if rest and not drop_last else 0)


def _flags(shuffle: Any, drop_last: Any, owner: str) -> None:
    """TypeError unless ``shuffle`` and ``drop_last`` are bools (paddle asserts they are)."""
    for name, value in (("shuffle", shuffle), ("drop_last", drop_last)):
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{owner}: {name}={value!r} ({type(value).__name__}); it must be a bool")


def _positive(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{what}={value!r}; it must be a positive int")
    return value
