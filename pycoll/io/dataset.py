"""paddle.io's datasets: ``Dataset`` (indexed), ``IterableDataset`` (streamed),
``TensorDataset`` (rows of tensors), and the ones made of others: ``ComposeDataset`` (fields side
by side), ``ConcatDataset`` (one after another), ``ChainDataset`` (streams one after another),
``Subset`` and ``random_split``."""
from __future__ import annotations

import bisect
import itertools
import math
import numbers
from typing import Any, Generic, Iterable, Iterator, List, Sequence, Tuple, TypeVar

from pycoll._tensor_ops import untraced
from pycoll.random import get_rng
from pycoll.tensor import Tensor, wrap


Sample = TypeVar("Sample")


class Dataset(Generic[Sample]):
    """A map-style dataset: subclasses define ``__getitem__(index)`` and ``__len__()``.
    Generic in its sample type, as paddle's: ``class Pairs(Dataset[Tuple[int, int]])``."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")


class NoLength(TypeError, ValueError):
    """``len()`` of a stream: a TypeError, as ``len()`` of any object without one (torch's, and
    what ``list()`` and ``operator.length_hint`` pass over), and the ValueError paddle's
    DataLoader raises."""


class IterableDataset(Dataset[Sample]):
    """A stream of samples: subclasses define ``__iter__()``; it has no length or index."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __getitem__(self, index: int) -> Any:
        raise TypeError(f"{type(self).__name__} is an IterableDataset: iterate over it, it has no index")

    def __len__(self) -> int:
        raise NoLength(f"{type(self).__name__} is an IterableDataset: it has no length")


class TensorDataset(Dataset):
    """Sample i is the tuple of row i of each of ``tensors`` (which share their first dimension)."""

    def __init__(self, tensors: Sequence[Any]):
        if not isinstance(tensors, (list, tuple)) or not tensors:
            raise TypeError("TensorDataset: tensors must be a non-empty list of tensors or arrays")
        rows = {len(t) for t in tensors}
        if len(rows) != 1:
            raise ValueError(f"TensorDataset: the tensors' first dimensions differ ({sorted(rows)}); "
                             f"they must be equal")
        self.tensors: List[Any] = list(tensors)

    def __getitem__(self, index: int) -> Tuple[Any, ...]:
        return tuple(_row(t, index) for t in self.tensors)

    def __len__(self) -> int:
        return len(self.tensors[0])


def _row(t: Any, index: Any) -> Any:
    """``t[index]``; for a Tensor no op watches (no gradient, no auto-parallel) and an int index,
    the row of its array, wrapped: an epoch indexes every row, and an indexing op's bookkeeping
    (recording, the view registry) was most of its time."""
    if isinstance(t, Tensor) and isinstance(index, numbers.Integral) and not isinstance(index, bool) \
            and untraced((t,)):
        try:
            return wrap(t._array[int(index), ...])
        except IndexError:
            pass  # t[index] says it with the tensor's shape
    return t[index]


def _indexed(datasets: Iterable[Any], what: str) -> List[Any]:
    datasets = list(datasets)
    if not datasets:
        raise ValueError(f"{what}: datasets is empty")
    streamed = [i for i, d in enumerate(datasets) if isinstance(d, IterableDataset)]
    if streamed:
        raise TypeError(f"{what}: datasets[{streamed[0]}] is an IterableDataset; it needs indexed datasets")
    return datasets


class ComposeDataset(Dataset):
    """Sample i is the fields of sample i of each of ``datasets`` (of one length), in one tuple."""

    def __init__(self, datasets: Sequence[Any]):
        self.datasets = _indexed(datasets, "ComposeDataset")
        lengths = {len(d) for d in self.datasets}
        if len(lengths) != 1:
            raise ValueError(f"ComposeDataset: the datasets' lengths differ ({sorted(lengths)})")

    def __getitem__(self, index: int) -> Tuple[Any, ...]:
        fields: List[Any] = []
        for d in self.datasets:
            sample = d[index]
            fields.extend(sample if isinstance(sample, (list, tuple)) else [sample])
        return tuple(fields)

    def __len__(self) -> int:
        return len(self.datasets[0])


class ConcatDataset(Dataset):
    """The samples of ``datasets`` one dataset after another."""

    def __init__(self, datasets: Iterable[Any]):
        self.datasets = _indexed(datasets, "ConcatDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    @staticmethod
    def cumsum(sequence: Sequence[Any]) -> List[int]:
        """The running totals of the lengths of ``sequence``'s items (paddle's helper)."""
        return list(itertools.accumulate(len(item) for item in sequence))

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"ConcatDataset: index out of range for {len(self)} samples")
        which = bisect.bisect_right(self.cumulative_sizes, index)
        return self.datasets[which][index - (self.cumulative_sizes[which - 1] if which else 0)]

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]


class ChainDataset(IterableDataset):
    """The samples of the streamed ``datasets`` (IterableDatasets, as paddle requires: a
    map-style one may never stop when iterated), one after another."""

    def __init__(self, datasets: Iterable[Any]):
        self.datasets = list(datasets)
        for i, d in enumerate(self.datasets):
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset: datasets[{i}] is a {type(d).__name__}; ChainDataset chains "
                                f"IterableDatasets only (ConcatDataset joins map-style ones)")

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            yield from d


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset: Any, indices: Sequence[int]):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, index: int) -> Any:
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(dataset: Any, lengths: Sequence[float], generator: Any = None) -> List[Subset]:
    """``dataset`` cut into Subsets of ``lengths`` samples (or of those fractions of it, the
    remainder spread from the first), over a random permutation (pycoll's generator:
    ``pycoll.seed``; ``generator`` is accepted for paddle's signature)."""
    total = len(dataset)
    lengths = list(lengths)
    if lengths and math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        if any(not 0 <= f <= 1 for f in lengths):
            raise ValueError(f"random_split: lengths {lengths} as fractions must each be in [0, 1]")
        counts = [int(math.floor(total * f)) for f in lengths]
        for i in range(total - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if any(isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0 for n in lengths):
        raise ValueError(f"random_split: lengths {lengths} must be counts of samples (ints >= 0) adding up to "
                         f"{total}, or fractions adding up to 1")
    if sum(lengths) != total:
        raise ValueError(f"random_split: lengths {lengths} add up to {sum(lengths)}, the dataset has {total}")
    order = get_rng().permutation(total).tolist()
    ends = list(itertools.accumulate(lengths))
    return [Subset(dataset, order[end - n:end]) for end, n in zip(ends, lengths)]
