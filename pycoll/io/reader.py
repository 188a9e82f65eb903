"""paddle.io's ``DataLoader`` (paddle's module ``paddle.io.reader``): batches of a dataset as
Tensors, read in the training process or in worker processes (``workers.py``)."""
from __future__ import annotations

import numbers
from typing import Any, Callable, Iterator, List, Optional

import numpy as np

from pycoll.io.collate import default_collate_fn, default_convert_fn, to_tensors
from pycoll.io.dataset import IterableDataset, NoLength
from pycoll.io.sampler import BatchSampler, batches
from pycoll.io.workers import IndexedWorkers, StreamWorkers
from pycoll.profiler.recorder import RecordEvent
from pycoll.profiler.states import TracerEventType
from pycoll.profiler.timer import benchmark

class DataLoader:
    """Iterate over ``dataset`` in batches (paddle's signature; the static-graph arguments
    ``feed_list``, ``places``, ``use_buffer_reader``, ``use_shared_memory`` and the buffer size
    ``reader_buffer_size`` are accepted and unused: batches are read when asked for).

    Either ``batch_sampler`` (e.g. a ``DistributedBatchSampler``) chooses each batch's indices
    (``batch_size`` then reads None, as paddle's), or ``batch_size``, ``shuffle`` and ``drop_last``
    make a ``BatchSampler`` (``batch_size=None``: each sample comes out alone, through
    ``collate_fn`` (default :func:`default_convert_fn`), its arrays as Tensors, unbatched; the
    loader's ``batch_size`` and ``batch_sampler`` read None). ``collate_fn`` (default
    :func:`default_collate_fn`) makes a batch of the samples; the batch's arrays come out as new
    Tensors on the current device, never sharing memory with the dataset (``collate.to_tensors``),
    tuples as lists. With ``num_workers`` > 0 worker processes read the batches (see
    ``workers.py``): an ``IterableDataset`` is then read by each worker, from its own copy
    (``get_worker_info()`` lets it take its share), and batches are taken from the workers in
    turn, as paddle does; with ``num_workers=0`` it is read in the training process,
    ``batch_size`` samples at a time. ``persistent_workers`` keeps a map-style dataset's workers
    (and their state) from one pass to the next, as paddle's; an IterableDataset's are started
    for each pass.
    """

    def __init__(self, dataset: Any, feed_list: Any = None, places: Any = None, return_list: bool = True,
                 batch_sampler: Any = None, batch_size: Optional[int] = 1, shuffle: bool = False,
                 drop_last: bool = False, collate_fn: Optional[Callable[[List[Any]], Any]] = None,
                 num_workers: int = 0, use_buffer_reader: bool = True, reader_buffer_size: int = 2,
                 prefetch_factor: int = 2, use_shared_memory: bool = True, timeout: float = 0,
                 worker_init_fn: Optional[Callable[[int], None]] = None, persistent_workers: bool = False):
        if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int)
                                       or batch_size <= 0):
            raise ValueError(f"DataLoader: batch_size={batch_size!r}; it must be None or a positive int")
        if isinstance(reader_buffer_size, bool) or not isinstance(reader_buffer_size, int):
            raise TypeError(f"DataLoader: reader_buffer_size={reader_buffer_size!r}; it must be an int")
        if batch_sampler is not None and (batch_size != 1 or shuffle or drop_last):
            raise ValueError("DataLoader: batch_sampler chooses the batches; leave batch_size, shuffle "
                             "and drop_last at their defaults when you give it")
        unbatched = batch_size is None  # paddle's "no batching": one sample at a time
        if unbatched:
            collate_fn = _unbatched(collate_fn or default_convert_fn)
        for name, value, low in (("num_workers", num_workers, 0), ("prefetch_factor", prefetch_factor, 1)):
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) or value < low:
                raise ValueError(f"DataLoader: {name}={value!r}; it must be an int >= {low}")
        num_workers, prefetch_factor = int(num_workers), int(prefetch_factor)  # (NumPy's integers too, as paddle)
        if not isinstance(timeout, (int, float)) or timeout < 0:
            raise ValueError(f"DataLoader: timeout={timeout!r}; it must be a number of seconds >= 0")
        self.dataset = dataset
        self.iterable = isinstance(dataset, IterableDataset)
        if self.iterable and (batch_sampler is not None or shuffle):
            raise ValueError("DataLoader: an IterableDataset gives its samples in its own order: "
                             "batch_sampler and shuffle do not apply")
        self.drop_last = bool(drop_last)
        # what is read: batches of _samples_per_batch samples; a map-style dataset's indices from
        # _index_batches. The public batch_size and batch_sampler say what paddle's say.
        self._samples_per_batch = 1 if unbatched else batch_size
        self._index_batches = batch_sampler if batch_sampler is not None or self.iterable else BatchSampler(
            dataset=dataset, shuffle=shuffle, batch_size=self._samples_per_batch, drop_last=drop_last)
        self.batch_size = None if batch_sampler is not None else batch_size
        self.batch_sampler = None if unbatched else self._index_batches
        self.collate_fn = collate_fn or default_collate_fn
        self._fresh = collate_fn is None  # default_collate_fn makes new arrays: no copy (to_tensors)
        self.num_workers = num_workers
        self.use_shared_memory = bool(use_shared_memory) and num_workers > 0  # paddle's reading
        self.persistent_workers = bool(persistent_workers)
        self._workers: Optional[IndexedWorkers] = None  # persistent_workers' pool, once started
        self.prefetch_factor = prefetch_factor
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.return_list = return_list
        self.reader_buffer_size = reader_buffer_size

    def _collated(self) -> Iterator[Any]:
        if self.num_workers and self.iterable:
            yield from StreamWorkers(self)
        elif self.num_workers and self.persistent_workers:
            if self._workers is None or not self._workers.workers:
                self._workers = IndexedWorkers(self, persistent=True)
            else:
                self._workers.new_pass()
            yield from self._workers
        elif self.num_workers:
            yield from IndexedWorkers(self)
        elif self.iterable:
            for samples in batches(self.dataset, self._samples_per_batch, self.drop_last):
                yield self.collate_fn(samples)
        else:
            for indices in self._index_batches:
                yield self.collate_fn([self.dataset[i] for i in indices])

    def __iter__(self) -> "_Pass":
        return _Pass(self, self._batches())

    def _batches(self) -> Iterator[Any]:
        # for the profiler: each batch's read is its reader_cost and, while it records, a
        # Dataloader span named as paddle's iterators are (a flag test each when it does not)
        fresh = self._fresh or self.num_workers > 0  # a worker's batch comes through a pipe: new
        timer = benchmark()
        span = RecordEvent("_DataLoaderIterMultiProcess" if self.num_workers else "_DataLoaderIterSingleProcess",
                           TracerEventType.Dataloader)
        batches = self._collated()
        while True:
            timer.before_reader()
            span.begin()
            try:
                batch = next(batches)
            except StopIteration:
                return
            span.end()
            timer.after_reader()
            yield to_tensors(batch, fresh)

    def __call__(self) -> Iterator[Any]:
        """``for batch in loader():`` — paddle's loaders are called for their iterator too."""
        return iter(self)

    def __len__(self) -> int:
        if self.iterable:
            raise NoLength("DataLoader: an IterableDataset has no length")
        return len(self._index_batches)


class _Pass:
    """One pass over a DataLoader's batches: an iterator with the loader's ``len()``, as
    paddle's iterators have."""

    def __init__(self, loader: DataLoader, batches: Iterator[Any]):
        self._loader, self._batches = loader, batches

    def __iter__(self) -> "_Pass":
        return self

    def __next__(self) -> Any:
        return next(self._batches)

    def __len__(self) -> int:
        return len(self._loader)

    def close(self) -> None:
        """End the pass early, as a generator's ``close()``: its workers go (unless persistent)."""
        self._batches.close()


def _unbatched(convert: Callable[[Any], Any]) -> Callable[[List[Any]], Any]:
    """``batch_size=None``'s collate: each "batch" holds one sample, which ``convert`` gets alone
    (as paddle's ``collate_fn`` does without batching)."""
    return lambda samples: convert(samples[0])
