"""DataLoader workers as paddle's: seeded per worker and per pass, a worker that finished is not
taken for dead while another still reads, a killed one is named with its exit code; and
paddle.io's module paths, signature and argument checks. Numbers marked "paddle's" were measured
on Paddle 3.3.1 (CPU) with the same dataset."""
import inspect
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import pycoll
import pycoll.io.workers
from pycoll.io import (BatchSampler, ConcatDataset, DataLoader, Dataset, DistributedBatchSampler, IterableDataset,
                       get_worker_info)


@pytest.fixture
def quick_polls(monkeypatch):
    """Check the workers every 50 ms instead of every second, so the waits below stay short."""
    monkeypatch.setattr(pycoll.io.workers, "_POLL_S", 0.05)


class Augment(Dataset):
    """A random augmentation per sample: NumPy's, Python's and pycoll's draws, and who drew them."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = get_worker_info()
        return (np.array([np.random.randint(0, 10 ** 6), random.randint(0, 10 ** 6), info.id, info.seed % 1000]),
                pycoll.rand([1]).numpy())


def draws(loader, passes=2):
    return [[(x.numpy().tolist(), y.numpy().ravel().tolist()) for x, y in loader] for _ in range(passes)]


@pytest.mark.timeout(60)
def test_workers_are_seeded_per_worker_and_per_pass_as_paddle_does():
    np.random.seed(5)
    loader = DataLoader(Augment(), batch_size=2, num_workers=2)
    first = draws(loader)
    # paddle's, after np.random.seed(5): [np.random, random, worker id, worker_info.seed % 1000]
    assert [[x for x, _ in epoch] for epoch in first] == [
        [[[610916, 697130, 0, 470], [534634, 103985, 0, 470]], [[691010, 770431, 1, 470], [463968, 786985, 1, 470]]],
        [[[593935, 86666, 0, 109], [116963, 76761, 0, 109]], [[287475, 548722, 1, 109], [314975, 554223, 1, 109]]]]
    rands = [value for epoch in first for _, batch in epoch for value in batch]
    assert len(set(rands)) == 8, "pycoll.rand draws differ between workers and passes"
    np.random.seed(5)
    assert draws(loader) == first, "the same np.random seed in the training process repeats the run"
    assert multiprocessing.active_children() == []


class Shards(IterableDataset):
    """0..n-1 dealt to the workers in turn; worker 1 reads ``slow`` s per sample, and may be
    killed (SIGKILL) or leave (exit code 0) at sample ``stop``."""

    def __init__(self, n=6, slow=0.0, stop=None, how=None):
        self.n, self.slow, self.stop, self.how = n, slow, stop, how

    def __iter__(self):
        info = get_worker_info()
        for i in range(info.id, self.n, info.num_workers):
            if i == self.stop:
                os.kill(os.getpid(), signal.SIGKILL) if self.how == "kill" else os._exit(0)
            if info.id == 1:
                time.sleep(self.slow)
            yield np.array([i])


def taken(loader):
    return [b.numpy().ravel().tolist() for b in loader]


@pytest.mark.timeout(60)
def test_a_worker_that_finished_its_share_is_done_not_dead(quick_polls):
    # worker 0 ends (exit code 0) long before worker 1; paddle's result, with its order
    assert taken(DataLoader(Shards(slow=0.2), batch_size=1, num_workers=2, timeout=1)) == [[0], [1], [2], [3], [4], [5]]
    assert taken(DataLoader(Shards(n=9, slow=0.1), batch_size=2, num_workers=2)) == [[0, 2], [1, 3], [4, 6],
                                                                                     [5, 7], [8]]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("how, words", [
    ("kill", r"worker 1 \(pycoll-DataLoader-worker-1, pid \d+\) exited unexpectedly with code -9 \(killed by "
             r"SIGKILL\)"),
    ("leave", r"worker 1 \(pycoll-DataLoader-worker-1, pid \d+\) exited unexpectedly before it finished its share "
              r"with code 0"),
])
def test_a_worker_that_dies_before_it_finished_is_named_with_its_exit_code(quick_polls, how, words):
    with pytest.raises(RuntimeError, match=words):
        taken(DataLoader(Shards(n=12, stop=7, how=how), batch_size=2, num_workers=2))
    assert multiprocessing.active_children() == []


@pytest.mark.timeout(60)
def test_a_wait_past_timeout_is_the_timeout_error(quick_polls):
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"no batch came from the workers within timeout=0.3 s"):
        taken(DataLoader(Shards(slow=3.0), batch_size=1, num_workers=2, timeout=0.3))
    assert time.monotonic() - start < 2.5
    assert multiprocessing.active_children() == []


def test_dataloader_has_paddles_signature_and_reader_buffer_size():
    names = list(inspect.signature(DataLoader.__init__).parameters)[1:]
    assert names == ["dataset", "feed_list", "places", "return_list", "batch_sampler", "batch_size", "shuffle",
                     "drop_last", "collate_fn", "num_workers", "use_buffer_reader", "reader_buffer_size",
                     "prefetch_factor", "use_shared_memory", "timeout", "worker_init_fn",
                     "persistent_workers"]  # paddle's, in its order
    loader = DataLoader(np.arange(8.0).reshape(4, 2), None, None, True, None, 2, False, False, None, 0, True, 4, 3)
    assert (loader.reader_buffer_size, loader.prefetch_factor) == (4, 3)
    assert [b.shape for b in loader] == [[2, 2], [2, 2]]
    with pytest.raises(TypeError, match=r"DataLoader: reader_buffer_size='2'; it must be an int"):
        DataLoader(np.ones((4, 2)), reader_buffer_size="2")
    with pytest.raises(ValueError, match=r"DataLoader: batch_size=0; it must be None or a positive int"):
        DataLoader(np.ones((4, 2)), batch_size=0)


def test_paddles_module_paths_and_helpers():
    from pycoll.io.dataloader import batch_sampler, collate, dataset, sampler, worker

    assert (collate.default_collate_fn, batch_sampler.BatchSampler, batch_sampler.DistributedBatchSampler,
            dataset.ConcatDataset, dataset.random_split, sampler.RandomSampler, worker.get_worker_info,
            worker.WorkerInfo) == (pycoll.io.default_collate_fn, BatchSampler, DistributedBatchSampler,
                                   ConcatDataset, pycoll.io.random_split, pycoll.io.RandomSampler, get_worker_info,
                                   pycoll.io.WorkerInfo)
    assert pycoll.io.dataloader.IterableDataset is IterableDataset and pycoll.io.reader.DataLoader is DataLoader
    converted = collate.default_convert_fn(batch=[np.ones(2), (1, "a"), {"k": (2,)}])  # paddle's keyword
    assert converted[1:] == [[1, "a"], {"k": [2]}] and converted[0].tolist() == [1.0, 1.0]  # paddle's
    assert isinstance(inspect.getattr_static(ConcatDataset, "cumsum"), staticmethod)
    assert ConcatDataset.cumsum([[1, 2], [3], []]) == [2, 3, 3]


def test_unbatched_collate_fn_gets_the_sample_alone_as_paddles():
    class Pairs(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return np.array([i]), (i, "a")

    got = list(DataLoader(Pairs(), batch_size=None, collate_fn=lambda s: type(s).__name__))
    assert got == ["tuple", "tuple"]  # paddle's: collate_fn(sample), not collate_fn([sample])
    first = list(DataLoader(Pairs(), batch_size=None))[1]
    assert first[0].numpy().tolist() == [1] and first[1] == [1, "a"]  # paddle's default_convert_fn


@pytest.mark.parametrize("make", [
    lambda **kw: BatchSampler(dataset=list(range(4)), batch_size=2, **kw),
    lambda **kw: DistributedBatchSampler(list(range(4)), 2, num_replicas=1, rank=0, **kw),
])
def test_samplers_refuse_flags_that_are_not_bools(make):
    with pytest.raises(TypeError, match=r"shuffle=1 \(int\); it must be a bool"):
        make(shuffle=1)
    with pytest.raises(TypeError, match=r"drop_last='no' \(str\); it must be a bool"):
        make(drop_last="no")
    assert len(list(make(shuffle=np.bool_(True)))) == 2


def test_workers_of_a_killed_training_process_exit():
    # a probe: a rank killed under the launcher left its two workers waiting for it forever, and
    # they held the pipes the launcher waits on: the job never ended
    code = ("import time, numpy as np, pycoll, multiprocessing as mp\n"
            "class Big(pycoll.io.Dataset):\n"
            "    def __len__(self): return 10000\n"
            "    def __getitem__(self, i): return np.full((3, 8, 8), i, 'float32')\n"
            "for k, b in enumerate(pycoll.io.DataLoader(Big(), batch_size=16, num_workers=2)):\n"
            "    if k == 3: print(' '.join(str(c.pid) for c in mp.active_children()), flush=True)\n"
            "    time.sleep(0.05)\n")
    main = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        workers = [int(pid) for pid in main.stdout.readline().split()]
        assert len(workers) == 2
        main.send_signal(signal.SIGKILL)
        main.wait(timeout=30)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(os.path.exists(f"/proc/{pid}") for pid in workers):
            time.sleep(0.1)
        assert not any(os.path.exists(f"/proc/{pid}") for pid in workers)
    finally:
        main.kill()


class Lines(IterableDataset):
    def __iter__(self):
        return iter(range(4))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("dataset", [list(range(4)), Lines()], ids=["indexed", "stream"])
def test_a_batch_that_cannot_be_pickled_is_the_workers_error_not_a_hang(quick_polls, dataset):
    """The queue's feeder thread would print the pickling error and drop the batch (paddle hangs)."""
    import threading

    loader = DataLoader(dataset, batch_size=2, num_workers=2, collate_fn=lambda batch: threading.Lock())
    with pytest.raises(Exception, match=r"(?s)could not be sent to the training process.*cannot pickle"):
        list(loader)
    assert multiprocessing.active_children() == []


def test_numpy_strings_batch_into_lists_and_numpy_ints_count_workers():
    names = np.array(["cat.jpg", "dog.jpg", "eel.jpg"])
    loader = DataLoader([(np.ones(2), names[i]) for i in range(3)], batch_size=2,
                        num_workers=np.int64(0), prefetch_factor=np.int64(2))
    batches = [b[1] for b in loader]
    assert batches == [["cat.jpg", "dog.jpg"], ["eel.jpg"]] and isinstance(batches[0], list)
