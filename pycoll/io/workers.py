"""The DataLoader's worker processes.

Workers are forked from the training process (paddle's way on Linux), so a dataset needs no
pickling; they only read samples and collate them (into NumPy arrays, or host Tensors for Tensor
samples), never using MPI or the GPU: the training process puts the batches on its device. With
``use_shared_memory`` (paddle's default) a batch's large arrays come through ``/dev/shm``
(``pycoll.io.shared_batches``), the rest through the result queue. A
worker's current device is the CPU, as paddle's workers fetch under a CPU place, so a dataset
that makes Tensors makes host ones there (CUDA cannot be used in a child forked after its parent
used it). A worker's exception is raised in the training process with the worker's traceback; a
worker that dies before it has finished (killed, or exited without its last message) is noticed
within a second or two and named with its exit code; either way, and whenever iteration stops
early, the workers are shut down (``persistent_workers``' stay for the next pass, but after a
failure).

Seeds (paddle's): each pass draws a base seed from NumPy's global generator in the training
process (``np.random.seed`` there repeats a whole run); worker ``i`` seeds ``random`` and pycoll's
generator with ``base + i`` and NumPy's global generator with a ``SeedSequence`` of ``(i, base)``,
so workers, and passes, draw different augmentations. ``get_worker_info().seed`` is the base.

- ``IndexedWorkers`` (a map-style dataset): batch i goes to worker i mod ``num_workers``, at most
  ``prefetch_factor`` batches per worker are in flight, and batches come back in order.
- ``StreamWorkers`` (an ``IterableDataset``): every worker iterates its own copy of the dataset
  (``get_worker_info()`` tells it which of how many it is, to take its share) and batches what
  it reads, at most ``prefetch_factor`` batches ahead; the training process takes a batch from
  each worker in turn, skipping those that have finished (paddle's order).
"""
from __future__ import annotations

import builtins
import multiprocessing
import os
import pickle
import queue
import random
import signal
import sys
import time
import traceback
import weakref
from typing import Any, Callable, Dict, List, Optional, Set

import numpy as np

from pycoll.device import set_device
from pycoll.io import shared_batches
from pycoll.io.sampler import batches
from pycoll.random import seed as seed_pycoll

_POLL_S = 1.0  # how often a waiting DataLoader checks that its workers are alive


class WorkerInfo:
    """What ``get_worker_info()`` tells code running in a DataLoader worker: its ``id``, the
    ``num_workers``, its copy of the ``dataset`` and the pass's base ``seed`` (paddle's fields)."""

    def __init__(self, id: int, num_workers: int, dataset: Any, seed: int = 0):  # noqa: A002 (paddle's name)
        self.id, self.num_workers, self.dataset, self.seed = id, num_workers, dataset, seed


_worker_info: Optional[WorkerInfo] = None  # set in a worker process


def get_worker_info() -> Optional[WorkerInfo]:
    """In a DataLoader worker process, its WorkerInfo; elsewhere None."""
    return _worker_info


def _seed_worker(base_seed: int, worker_id: int) -> None:
    """Seed this worker's generators from the pass's base seed, as paddle's workers do (NumPy's
    through the SeedSequence paddle's ``_generate_states`` computes, so its draws are paddle's)."""
    random.seed(base_seed + worker_id)
    seed_pycoll(base_seed + worker_id)
    entropy = [worker_id, base_seed & 0xFFFFFFFF, base_seed >> 32]
    np.random.seed(np.random.SeedSequence(entropy).generate_state(4))


def _started(loader: Any, worker_id: int, count: int, base_seed: int, report: Any) -> bool:
    """A worker's first steps: its seeds and WorkerInfo, then ``worker_init_fn``; False
    (reported) if that fails."""
    global _worker_info
    set_device("cpu")
    _seed_worker(base_seed, worker_id)
    _worker_info = WorkerInfo(worker_id, count, loader.dataset, base_seed)
    try:
        if loader.worker_init_fn is not None:
            loader.worker_init_fn(worker_id)
        return True
    except BaseException:
        report(traceback.format_exc())
        return False


def _sender(prefix: Optional[str]) -> Callable[[Any], Any]:
    """What a worker does to a batch before it is put on the queue: its large arrays into shared
    memory (``prefix``: the pool's file names), or nothing."""
    return shared_batches.Writer(prefix).packed if prefix is not None else (lambda batch: batch)


def _next_message(inbox: Any, parent: int) -> Any:
    """The next message of ``inbox``, or None (stop) once the training process ``parent`` is gone:
    a worker of a killed training process would otherwise wait for it forever, holding the pipes
    its launcher waits on (the job never ends)."""
    while True:
        try:
            return inbox.get(timeout=_POLL_S)
        except queue.Empty:
            if os.getppid() != parent:
                return None


def _post(results: Any, message: Any, failed: Optional[Callable[[str], Any]] = None) -> None:
    """Put ``message`` on ``results``, pickled here: the queue would pickle it in its feeder
    thread, which only prints a failure (a batch holding a lock, a generator) and drops the
    message, leaving the training process waiting for it forever. A batch's message that cannot
    be pickled is replaced by ``failed(traceback)``, raised in the training process (the other
    messages hold tracebacks and markers, which always pickle)."""
    try:
        payload = pickle.dumps(message, pickle.HIGHEST_PROTOCOL)
    except BaseException:
        if failed is None:
            raise
        payload = pickle.dumps(failed("a worker's batch could not be sent to the training process:\n"
                                      + traceback.format_exc()), pickle.HIGHEST_PROTOCOL)
    results.put(payload)


def _index_worker(loader: Any, worker_id: int, count: int, base_seed: int, prefix: Optional[str], tasks: Any,
                  results: Any) -> None:
    """Collate the batches of indices it is sent until it is sent None."""
    parent = os.getppid()
    if not _started(loader, worker_id, count, base_seed, lambda failure: _post(results, (-1, None, failure))):
        return
    send = _sender(prefix)
    while True:
        task = _next_message(tasks, parent)
        if task is None:
            return
        position, indices = task
        try:
            message = (position, send(loader.collate_fn([loader.dataset[i] for i in indices])), None)
        except BaseException:
            message = (position, None, traceback.format_exc())
        _post(results, message, lambda trace, at=position: (at, None, trace))


def _stream_worker(loader: Any, worker_id: int, count: int, base_seed: int, prefix: Optional[str], credits: Any,
                   results: Any) -> None:
    """Batch this worker's pass over its copy of the dataset, a batch per credit, then say "end"."""
    parent = os.getppid()
    if not _started(loader, worker_id, count, base_seed, lambda failure: _post(results, ("error", failure))):
        return
    send = _sender(prefix)
    try:
        for samples in batches(loader.dataset, loader._samples_per_batch, loader.drop_last):
            if _next_message(credits, parent) is None:
                return
            _post(results, ("batch", send(loader.collate_fn(samples))), lambda trace: ("error", trace))
        _post(results, ("end", None))
    except BaseException:
        _post(results, ("error", traceback.format_exc()))


def _worker_error(message: str, failure: str) -> BaseException:
    """``message`` as an exception of the type that ends the traceback ``failure`` (``KeyError:
    'x'``) where that is a builtin Exception taking one message, else a RuntimeError. It is of a
    subclass printed as the builtin but showing ``message`` as written (KeyError's own str is
    the repr: the traceback's lines would print as one, with \\n)."""
    lines = failure.strip().splitlines()
    name = lines[-1].split(":", 1)[0].strip() if lines else ""
    kind = getattr(builtins, name, None)
    if isinstance(kind, type) and issubclass(kind, Exception):
        shown = _AS_WRITTEN.get(kind)
        if shown is None:
            shown = _AS_WRITTEN[kind] = type(kind.__name__, (kind,), {"__str__": lambda self: str(self.args[0]),
                                                                      "__module__": "builtins"})
        try:
            return shown(message)
        except Exception:  # (one that takes other arguments, as UnicodeDecodeError)
            pass
    return RuntimeError(message)


_AS_WRITTEN: Dict[type, type] = {}  # a builtin exception type -> its subclass that `_worker_error` raises


class _Pool:
    """``loader.num_workers`` forked processes running ``target(loader, i, count, base_seed,
    prefix, inbox_i, outbox)``; ``prefix``: the names of the shared-memory files the batches come
    in (``use_shared_memory``), or None (the queue carries them whole)."""

    def __init__(self, loader: Any, target: Callable[..., None], outboxes: int):
        context = multiprocessing.get_context("fork")
        count = loader.num_workers
        base_seed = int(np.random.randint(0, sys.maxsize))  # paddle's draw, one a pass
        # a proxy: a persistent_workers loader holds its pool, which must not keep the loader alive
        # (the pool's __del__ then stops the workers as soon as the loader is let go)
        self.loader = weakref.proxy(loader)
        self.exited_silent: Set[int] = set()  # awaited workers seen exited (code 0) with nothing sent
        self.prefix = shared_batches.pool_prefix() if loader.use_shared_memory and shared_batches.available() else None
        self.inboxes = [context.Queue() for _ in range(count)]
        self.outboxes = [context.Queue() for _ in range(outboxes)]
        self.workers = [context.Process(target=target, daemon=True, name=f"pycoll-DataLoader-worker-{i}",
                                        args=(loader, i, count, base_seed, self.prefix, self.inboxes[i],
                                              self.outboxes[i % outboxes]))
                        for i in range(count)]
        for worker in self.workers:
            worker.start()

    def _take(self, outbox: Any, awaited: int) -> Any:
        """The next message of ``outbox``, which worker ``awaited`` is to send, checking all the
        while that the workers live."""
        started = time.monotonic()
        while True:
            try:
                payload = outbox.get(timeout=_POLL_S)
            except queue.Empty:
                self._check(started, awaited)
                continue
            return pickle.loads(payload)  # (pickled by the worker: `_post`)

    def _check(self, started: float, awaited: int) -> None:
        """Raise (after shutting the others down) if a worker died, if the awaited one exited
        (code 0) a poll ago and sent nothing since, or if the wait ran out. A worker that exited
        with code 0 otherwise finished normally (its last message is sent before it exits)."""
        for worker_id, worker in enumerate(self.workers):
            if worker.exitcode not in (None, 0):
                self._died(worker_id, worker, "")
        if self.workers[awaited].exitcode == 0:
            if awaited in self.exited_silent:
                self._died(awaited, self.workers[awaited], " before it finished its share")
            self.exited_silent.add(awaited)  # its last messages may still be in the pipe: one more poll
        if self.loader.timeout and time.monotonic() - started > self.loader.timeout:
            self.close()
            raise RuntimeError(f"DataLoader: no batch came from the workers within timeout="
                               f"{self.loader.timeout} s")

    def _died(self, worker_id: int, worker: Any, when: str) -> None:
        code = worker.exitcode
        how = f" (killed by {signal.Signals(-code).name})" if code < 0 and -code in signal.valid_signals() else ""
        self.close()
        raise RuntimeError(f"DataLoader: worker {worker_id} ({worker.name}, pid {worker.pid}) exited "
                           f"unexpectedly{when} with code {code}{how}")

    def _fail(self, where: str, failure: str) -> None:
        """Raise the worker's error (``failure``, its traceback) in the training process: of the
        worker's exception type where that is one of Python's own (``except KeyError`` catches a
        dataset's KeyError, as paddle re-raises it), else a RuntimeError; either names the worker's
        traceback."""
        self.close()
        raise _worker_error(f"DataLoader: a worker failed {where}:\n{failure}", failure)

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
        if self.prefix is not None:  # the batches still in flight: never to be taken
            shared_batches.remove_left(self.prefix)

    def __del__(self) -> None:
        if self.workers:
            self.close()


class IndexedWorkers(_Pool):
    """A pass over a map-style dataset's batches (its batch sampler's), in order. ``persistent``
    (``persistent_workers``): the workers stay when the pass ends, and ``new_pass`` starts the
    next on them, so a worker keeps its state and its generators go on (paddle's)."""

    def __init__(self, loader: Any, persistent: bool = False):
        super().__init__(loader, _index_worker, outboxes=1)
        self.persistent = persistent
        self.sent = 0
        self.new_pass()

    def new_pass(self) -> None:
        """Start a pass over the loader's batches; what a pass left early has in flight is dropped
        as it comes (batches are numbered across passes)."""
        self.plan = iter(self.loader._index_batches)
        self.taken = self.first = self.sent
        self.ready: dict = {}
        for _ in range(self.loader.prefetch_factor * self.loader.num_workers):
            self._send()

    def _send(self) -> None:
        indices = next(self.plan, None)
        if indices is not None:
            self.inboxes[self.sent % len(self.workers)].put((self.sent, indices))
            self.sent += 1

    def __next__(self) -> Any:
        if self.taken == self.sent:
            if not self.persistent:
                self.close()
            raise StopIteration
        while self.taken not in self.ready:
            position, batch, failure = self._take(self.outboxes[0], self.taken % len(self.workers))
            if failure is not None and position < 0:
                self._fail("in worker_init_fn", failure)
            batch = shared_batches.unpacked(batch)
            if 0 <= position < self.first:
                continue  # an earlier pass's, left early
            if failure is not None:
                self._fail(f"on batch {position - self.first}", failure)
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
            kind, payload = self._take(self.outboxes[worker], worker)
            if kind == "batch":
                self.inboxes[worker].put(True)
                self.turn += 1
                return shared_batches.unpacked(payload)
            if kind == "error":
                self._fail(f"in worker {worker}", payload)
            self.active.remove(worker)  # "end": its share is done; the next worker's turn
        self.close()
        raise StopIteration
