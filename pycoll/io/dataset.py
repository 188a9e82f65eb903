"""paddle.io's datasets: ``Dataset`` (indexed), ``IterableDataset`` (streamed) and
``TensorDataset`` (rows of tensors)."""
from __future__ import annotations

from typing import Any, Iterator, List, Sequence, Tuple


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__(index)`` and ``__len__()``."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")


class IterableDataset(Dataset):
    """A stream of samples: subclasses define ``__iter__()``; it has no length or index."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __getitem__(self, index: int) -> Any:
        raise TypeError(f"{type(self).__name__} is an IterableDataset: iterate over it, it has no index")

    def __len__(self) -> int:
        raise TypeError(f"{type(self).__name__} is an IterableDataset: it has no length")


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
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return len(self.tensors[0])
