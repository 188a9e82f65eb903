"""The DataLoader's worker processes.

Workers are forked from the training process (paddle's way on Linux), so a dataset needs no
pickling; they only read samples and collate them into NumPy arrays (never MPI or the GPU:
Tensors are made in the training process, on its device). A worker's exception is raised in the
training process with the worker's traceback; a worker that dies is noticed within a second;
either way, and whenever iteration stops early, the workers are shut down.

- ``IndexedWorkers`` (a map-style dataset): batch i goes to worker i mod ``num_workers``, at most
  ``prefetch_factor`` batches per worker are in flight, and batches come back in order.
- ``StreamWorkers`` (an ``IterableDataset``): every worker iterates its own copy of the dataset
  (``get_worker_info()`` tells it which of how many it is, to take its share) and batches what
  it reads, at most ``prefetch_factor`` batches ahead; the training process takes a batch from
  each worker in turn, skipping those that have finished (paddle's order).
"""
from __future__ import annotations

import multiprocessing
import queue
import time
import traceback
from typing import Any, Callable, List, Optional

from pycoll.io.sampler import batches

_POLL_S = 1.0  # how often a waiting DataLoader checks that its workers are alive


class WorkerInfo:
    """What ``get_worker_info()`` tells code running in a DataLoader worker: its ``id``, the
    ``num_workers`` and its copy of the ``dataset``."""

    def __init__(self, id: int, num_workers: int, dataset: Any):  # noqa: A002 (paddle's name)
        self.id, self.num_workers, self.dataset = id, num_workers, dataset


_worker_info: Optional[WorkerInfo] = None  # set in a worker process


def get_worker_info() -> Optional[WorkerInfo]:
    """In a DataLoader worker process, its WorkerInfo; elsewhere None."""
    return _worker_info


def _started(loader: Any, worker_id: int, count: int, report: Any) -> bool:
    """A worker's first steps: its WorkerInfo, then ``worker_init_fn``; False (reported) if that fails."""
    global _worker_info
    _worker_info = WorkerInfo(worker_id, count, loader.dataset)
    try:
        if loader.worker_init_fn is not None:
            loader.worker_init_fn(worker_id)
        return True
    except BaseException:
        report(traceback.format_exc())
        return False


def _index_worker(loader: Any, worker_id: int, count: int, tasks: Any, results: Any) -> None:
    """Collate the batches of indices it is sent until it is sent None."""
    if not _started(loader, worker_id, count, lambda failure: results.put((-1, None, failure))):
        return
    while True:
        task = tasks.get()
        if task is None:
            return
        position, indices = task
        try:
            results.put((position, loader.collate_fn([loader.dataset[i] for i in indices]), None))
        except BaseException:
            results.put((position, None, traceback.format_exc()))


def _stream_worker(loader: Any, worker_id: int, count: int, credits: Any, results: Any) -> None:
    """Batch this worker's pass over its copy of the dataset, a batch per credit, then say "end"."""
    if not _started(loader, worker_id, count, lambda failure: results.put(("error", failure))):
        return
    try:
        for samples in batches(loader.dataset, loader.batch_size, loader.drop_last):
            if credits.get() is None:
                return
            results.put(("batch", loader.collate_fn(samples)))
        results.put(("end", None))
    except BaseException:
        results.put(("error", traceback.format_exc()))


class _Pool:
    """``loader.num_workers`` forked processes running ``target(loader, i, count, inbox_i, outbox)``."""

    def __init__(self, loader: Any, target: Callable[..., None], outboxes: int):
        context = multiprocessing.get_context("fork")
        count = loader.num_workers
        self.loader = loader
        self.inboxes = [context.Queue() for _ in range(count)]
        self.outboxes = [context.Queue() for _ in range(outboxes)]
        self.workers = [context.Process(target=target, daemon=True, name=f"pycoll-DataLoader-worker-{i}",
                                        args=(loader, i, count, self.inboxes[i], self.outboxes[i % outboxes]))
                        for i in range(count)]
        for worker in self.workers:
            worker.start()

    def _take(self, outbox: Any) -> Any:
        """The next message of ``outbox``, checking all the while that the workers live."""
        started = time.monotonic()
        while True:
            try:
                return outbox.get(timeout=_POLL_S)
            except queue.Empty:
                self._check(started)

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

    def _fail(self, where: str, failure: str) -> None:
        self.close()
        raise RuntimeError(f"DataLoader: a worker failed {where}:\n{failure}")

    def __iter__(self) -> "_Pool":
        return self

    def close(self) -> None:
        for inbox in self.inboxes:
            inbox.put(None)
        for worker in self.workers:
            worker.join(timeout=1.0)
            if worker.is_alive():
                worker.terminate()
                worker.join()
        self.workers = []

    def __del__(self) -> None:
        if self.workers:
            self.close()


class IndexedWorkers(_Pool):
    """One pass over a map-style dataset's batches (its batch sampler's), in order."""

    def __init__(self, loader: Any):
        super().__init__(loader, _index_worker, outboxes=1)
        self.plan = iter(loader.batch_sampler)
        self.sent = self.taken = 0
        self.ready: dict = {}
        for _ in range(loader.prefetch_factor * loader.num_workers):
            self._send()

    def _send(self) -> None:
        indices = next(self.plan, None)
        if indices is not None:
            self.inboxes[self.sent % len(self.workers)].put((self.sent, indices))
            self.sent += 1

    def __next__(self) -> Any:
        if self.taken == self.sent:
            self.close()
            raise StopIteration
        while self.taken not in self.ready:
            position, batch, failure = self._take(self.outboxes[0])
            if failure is not None:
                self._fail("in worker_init_fn" if position < 0 else f"on batch {position}", failure)
            self.ready[position] = batch
        batch = self.ready.pop(self.taken)
        self.taken += 1
        self._send()
        return batch


class StreamWorkers(_Pool):
    """One pass over an IterableDataset, every worker over its own copy, taken in turn."""

    def __init__(self, loader: Any):
        super().__init__(loader, _stream_worker, outboxes=loader.num_workers)
        for inbox in self.inboxes:
            for _ in range(loader.prefetch_factor):
                inbox.put(True)  # a credit: one more batch this worker may make
        self.active: List[int] = list(range(loader.num_workers))
        self.turn = 0

    def __next__(self) -> Any:
        while self.active:
            worker = self.active[self.turn % len(self.active)]
            kind, payload = self._take(self.outboxes[worker])
            if kind == "batch":
                self.inboxes[worker].put(True)
                self.turn += 1
                return payload
            if kind == "error":
                self._fail(f"in worker {worker}", payload)
            self.active.remove(worker)  # "end": its share is done; the next worker's turn
        self.close()
        raise StopIteration
