"""paddle.io's index samplers: what a BatchSampler(sampler=...) groups into batches.

The random ones draw from NumPy's global generator, as paddle's do (``np.random.seed`` repeats
them, and gives paddle's draws); ``SubsetRandomSampler`` follows paddle's ``randperm``, pycoll's
generator (``pycoll.seed``)."""
from __future__ import annotations

from typing import Any, Generic, Iterator, Optional, Sequence, TypeVar

import numpy as np

from pycoll.random import get_rng


Index = TypeVar("Index")


class Sampler(Generic[Index]):
    """The base: subclasses define ``__iter__`` (indices) and, where known, ``__len__``. Generic
    in what it yields, as paddle's (``Sampler[int]``; a batch sampler yields lists)."""

    def __init__(self, data_source: Any = None):
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequenceSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source: Any):
        super().__init__(data_source)

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


class RandomSampler(Sampler):
    """``num_samples`` (default: all) indices of ``data_source`` in random order, each once, or
    drawn with ``replacement``; ``generator`` (an iterator of indices) replaces the draw."""

    def __init__(self, data_source: Any, replacement: bool = False, num_samples: Optional[int] = None,
                 generator: Any = None):
        super().__init__(data_source)
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement must be a bool, got {replacement!r}")
        self.replacement, self._num_samples, self.generator = replacement, num_samples, generator
        n = self.num_samples
        if isinstance(n, bool) or not isinstance(n, int) or n <= 0:
            raise ValueError(f"RandomSampler: num_samples={n!r}; it must be a positive int")
        if not replacement and n > len(data_source):
            raise ValueError(f"RandomSampler: num_samples={n} is more than the {len(data_source)} samples "
                             f"of data_source; without replacement it can be at most that")

    @property
    def num_samples(self) -> int:
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        if self.generator is not None:
            for _, index in zip(range(self.num_samples), self.generator):
                yield index
            return
        yield from np.random.choice(np.arange(len(self.data_source)), self.num_samples,
                                    replace=self.replacement).tolist()

    def __len__(self) -> int:
        return self.num_samples


class WeightedRandomSampler(Sampler):
    """``num_samples`` indices into ``weights``, index i drawn with probability weights[i] / sum."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True):
        weights = np.asarray(weights.numpy() if hasattr(weights, "numpy") else weights, dtype=np.float64)
        if weights.ndim != 1 or not len(weights) or np.any(weights < 0) or not np.all(np.isfinite(weights)) \
                or not weights.sum() > 0:
            raise ValueError(f"WeightedRandomSampler: weights must be a 1-D list of finite numbers >= 0, "
                             f"not all zero; got {weights.tolist()}")
        if isinstance(num_samples, bool) or not isinstance(num_samples, int) or num_samples <= 0:
            raise ValueError(f"WeightedRandomSampler: num_samples={num_samples!r}; it must be a positive int")
        if not isinstance(replacement, bool):
            raise TypeError(f"WeightedRandomSampler: replacement must be a bool, got {replacement!r}")
        if not replacement and np.count_nonzero(weights) < num_samples:
            raise ValueError(f"WeightedRandomSampler: num_samples={num_samples} without replacement needs as "
                             f"many positive weights, got {np.count_nonzero(weights)}")
        super().__init__(None)
        self.weights, self.num_samples, self.replacement = weights, num_samples, replacement

    def __iter__(self) -> Iterator[int]:
        return iter(np.random.choice(len(self.weights), self.num_samples, self.replacement,
                                     self.weights / self.weights.sum()).tolist())

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The entries of ``indices`` in random order (pycoll's generator: ``pycoll.seed``)."""

    def __init__(self, indices: Sequence[int]):
        if len(indices) == 0:
            raise ValueError("SubsetRandomSampler: indices is empty")
        super().__init__(None)
        self.indices = indices

    def __iter__(self) -> Iterator[int]:
        for i in get_rng().permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self) -> int:
        return len(self.indices)
