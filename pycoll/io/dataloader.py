"""paddle.io's ``DataLoader``: batches of a dataset as Tensors, read in the training process or in
worker processes.

Workers are forked from the training process (paddle's way on Linux), so a dataset needs no
pickling; they only read samples and collate them into NumPy arrays (never MPI or the GPU:
Tensors are made in the training process, on its device). Batch i goes to worker i mod
``num_workers``, at most ``prefetch_factor`` batches per worker are in flight, and batches come
back in order. A worker's exception is raised in the training process with the worker's
traceback; a worker that dies is noticed within a second; either way, and whenever iteration
stops early, the workers are shut down.
"""
from __future__ import annotations

import multiprocessing
import queue
import time
import traceback
from typing import Any, Callable, Iterator, List, Optional

from pycoll.io.collate import default_collate_fn, to_tensors
from pycoll.io.dataset import IterableDataset
from pycoll.io.sampler import BatchSampler, batches

_POLL_S = 1.0  # how often a waiting DataLoader checks that its workers are alive


class WorkerInfo:
    """What ``get_worker_info()`` tells code running in a DataLoader worker: its ``id``, the
    ``num_workers`` and its copy of the ``dataset``."""

    def __init__(self, id: int, num_workers: int, dataset: Any):  # noqa: A002 (paddle's name)
        self.id, self.num_workers, self.dataset = id, num_workers, dataset


_worker_info: Optional[WorkerInfo] = None  # set in a worker process


def get_worker_info() -> Optional[WorkerInfo]:
    """In a DataLoader worker process, its WorkerInfo; elsewhere None (an IterableDataset is
    read in the training process, so it sees None and yields all its samples)."""
    return _worker_info


def _work(dataset: Any, collate: Callable[[List[Any]], Any], tasks: Any, results: Any,
          worker_id: int, count: int, init: Optional[Callable[[int], None]]) -> None:
    """A worker: collate the batches it is sent until it is sent None."""
    global _worker_info
    _worker_info = WorkerInfo(worker_id, count, dataset)
    try:
        if init is not None:
            init(worker_id)
    except BaseException:
        results.put((-1, None, traceback.format_exc()))
        return
    while True:
        task = tasks.get()
        if task is None:
            return
        position, indices = task
        try:
            results.put((position, collate([dataset[i] for i in indices]), None))
        except BaseException:
            results.put((position, None, traceback.format_exc()))


class _Workers:
    """One pass over the batches through ``num_workers`` worker processes."""

    def __init__(self, loader: "DataLoader"):
        context = multiprocessing.get_context("fork")
        count = loader.num_workers
        self.loader = loader
        self.plan = iter(loader.batch_sampler)
        self.results = context.Queue()
        self.tasks = [context.Queue() for _ in range(count)]
        self.workers = [context.Process(target=_work, daemon=True, name=f"pycoll-DataLoader-worker-{i}",
                                        args=(loader.dataset, loader.collate_fn, self.tasks[i],
                                              self.results, i, count, loader.worker_init_fn))
                        for i in range(count)]
        for worker in self.workers:
            worker.start()
        self.sent = self.taken = 0
        self.ready: dict = {}
        for _ in range(loader.prefetch_factor * count):
            self._send()

    def _send(self) -> None:
        indices = next(self.plan, None)
        if indices is not None:
            self.tasks[self.sent % len(self.workers)].put((self.sent, indices))
            self.sent += 1

    def __iter__(self) -> "_Workers":
        return self

    def __next__(self) -> Any:
        if self.taken == self.sent:
            self.close()
            raise StopIteration
        started = time.monotonic()
        while self.taken not in self.ready:
            try:
                position, batch, failure = self.results.get(timeout=_POLL_S)
            except queue.Empty:
                self._check(started)
                continue
            if failure is not None:
                self.close()
                where = "in worker_init_fn" if position < 0 else f"on batch {position}"
                raise RuntimeError(f"DataLoader: a worker failed {where}:\n{failure}")
            self.ready[position] = batch
        batch = self.ready.pop(self.taken)
        self.taken += 1
        self._send()
        return batch

    def _check(self, started: float) -> None:
        """Raise (after shutting the others down) if a worker died or the wait ran out."""
        dead = [w for w in self.workers if not w.is_alive()]
        if dead:
            self.close()
            raise RuntimeError(f"DataLoader: worker {dead[0].name} (pid {dead[0].pid}) exited unexpectedly "
                               f"with code {dead[0].exitcode}")
        if self.loader.timeout and time.monotonic() - started > self.loader.timeout:
            self.close()
            raise RuntimeError(f"DataLoader: no batch came from the workers within timeout="
                               f"{self.loader.timeout} s")

    def close(self) -> None:
        for tasks in self.tasks:
            tasks.put(None)
        for worker in self.workers:
            worker.join(timeout=1.0)
            if worker.is_alive():
                worker.terminate()
                worker.join()
        self.workers = []

    def __del__(self) -> None:
        if self.workers:
            self.close()


class DataLoader:
    """Iterate over ``dataset`` in batches (paddle's signature; the static-graph arguments
    ``feed_list``, ``places``, ``use_buffer_reader``, ``use_shared_memory`` are accepted and
    unused).

    Either ``batch_sampler`` (e.g. a ``DistributedBatchSampler``) chooses each batch's indices,
    or ``batch_size``, ``shuffle`` and ``drop_last`` make a ``BatchSampler``. ``collate_fn``
    (default :func:`default_collate_fn`) makes a batch of the samples; the batch's arrays come
    out as Tensors on the current device (a tuple sample gives a list of Tensors). With
    ``num_workers`` > 0 worker processes read the batches (see the module's text). An
    ``IterableDataset`` is read in the training process, ``batch_size`` samples at a time.
    """

    def __init__(self, dataset: Any, feed_list: Any = None, places: Any = None, return_list: bool = True,
                 batch_sampler: Any = None, batch_size: Optional[int] = 1, shuffle: bool = False,
                 drop_last: bool = False, collate_fn: Optional[Callable[[List[Any]], Any]] = None,
                 num_workers: int = 0, use_buffer_reader: bool = True, prefetch_factor: int = 2,
                 use_shared_memory: bool = True, timeout: float = 0,
                 worker_init_fn: Optional[Callable[[int], None]] = None, persistent_workers: bool = False):
        if batch_sampler is not None and (batch_size != 1 or shuffle or drop_last):
            raise ValueError("DataLoader: batch_sampler chooses the batches; leave batch_size, shuffle "
                             "and drop_last at their defaults when you give it")
        for name, value, low in (("num_workers", num_workers, 0), ("prefetch_factor", prefetch_factor, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"DataLoader: {name}={value!r}; it must be an int >= {low}")
        if not isinstance(timeout, (int, float)) or timeout < 0:
            raise ValueError(f"DataLoader: timeout={timeout!r}; it must be a number of seconds >= 0")
        self.dataset = dataset
        self.iterable = isinstance(dataset, IterableDataset)
        if self.iterable and (batch_sampler is not None or shuffle):
            raise ValueError("DataLoader: an IterableDataset gives its samples in its own order: "
                             "batch_sampler and shuffle do not apply")
        self.batch_size = batch_size
        self.drop_last = bool(drop_last)
        self.batch_sampler = batch_sampler if batch_sampler is not None or self.iterable else BatchSampler(
            dataset=dataset, shuffle=shuffle, batch_size=batch_size, drop_last=drop_last)
        self.collate_fn = collate_fn or default_collate_fn
        self.num_workers = 0 if self.iterable else num_workers
        self.prefetch_factor = prefetch_factor
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.return_list = return_list

    def _collated(self) -> Iterator[Any]:
        if self.iterable:
            for samples in batches(self.dataset, self.batch_size, self.drop_last):
                yield self.collate_fn(samples)
        elif self.num_workers:
            yield from _Workers(self)
        else:
            for indices in self.batch_sampler:
                yield self.collate_fn([self.dataset[i] for i in indices])

    def __iter__(self) -> Iterator[Any]:
        for batch in self._collated():
            yield to_tensors(batch)

    def __call__(self) -> Iterator[Any]:
        """``for batch in loader():`` — paddle's loaders are called for their iterator too."""
        return iter(self)

    def __len__(self) -> int:
        if self.iterable:
            raise TypeError("DataLoader: an IterableDataset has no length")
        return len(self.batch_sampler)
