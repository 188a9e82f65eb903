"""paddle's ``paddle.batch``: a reader decorator that groups a sample reader's items into lists."""
from __future__ import annotations

from typing import Callable, Iterator, List, TypeVar

__all__ = ["batch"]

T = TypeVar("T")


def batch(reader: Callable[[], Iterator[T]], batch_size: int,
          drop_last: bool = False) -> Callable[[], Iterator[List[T]]]:
    """A reader yielding lists of ``batch_size`` consecutive items of ``reader()``; the last, shorter
    list too unless ``drop_last``. ``batch_size`` is read with ``int()`` and must be positive."""
    if not callable(reader):
        raise TypeError(f"batch: reader must be a callable returning an iterable of samples, got "
                        f"{type(reader).__name__}")
    batch_size = int(batch_size)
    if batch_size <= 0:
        raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")

    def batch_reader() -> Iterator[List[T]]:
        group: List[T] = []
        for item in reader():
            group.append(item)
            if len(group) == batch_size:
                yield group
                group = []
        if group and not drop_last:
            yield group

    return batch_reader
