"""pycoll.io: datasets, BatchSampler, collation and the DataLoader, in this process and with
worker processes (a failing, dying or slow worker ends the iteration with an error, never a hang)."""
import multiprocessing
import os
import signal
import time

import numpy as np
import pytest

import pycoll
from conftest import assert_ok, launch
from pycoll.io import BatchSampler, DataLoader, Dataset, IterableDataset, TensorDataset, default_collate_fn


class Squares(Dataset):
    """Sample i: (i as float32[2], i*i); ``fail``/``die``/``slow`` at index 3 when asked."""

    def __init__(self, n=10, trouble=None):
        self.n, self.trouble = n, trouble

    def __getitem__(self, i):
        if i == 3 and self.trouble == "fail":
            raise KeyError("planted in the dataset")
        if i == 3 and self.trouble == "die":
            os.kill(os.getpid(), signal.SIGKILL)
        if i == 3 and self.trouble == "slow":
            time.sleep(5)
        if self.trouble == "pid":
            return os.getpid()
        return np.full(2, i, np.float32), i * i

    def __len__(self):
        return self.n


class Count(IterableDataset):
    def __iter__(self):
        return iter({"x": np.array([i])} for i in range(7))


def values(loader):
    return [[b.numpy().tolist() for b in batch] for batch in loader]


def test_batches_in_order_with_the_last_one_kept_or_dropped():
    loader = DataLoader(Squares(), batch_size=4)
    got = values(loader)
    assert len(loader) == 3 and len(got) == 3
    assert got[0] == [[[0, 0], [1, 1], [2, 2], [3, 3]], [0, 1, 4, 9]] and got[2][1] == [64, 81]
    assert len(DataLoader(Squares(), batch_size=4, drop_last=True)) == 2
    batch = next(iter(loader))
    assert isinstance(batch, list) and all(isinstance(b, pycoll.Tensor) for b in batch)
    assert values(loader()) == got  # paddle's `for batch in loader():`


def test_shuffle_is_a_permutation_that_the_seed_repeats():
    def order():
        return [i for _, squares in values(DataLoader(Squares(), batch_size=3, shuffle=True))
                for i in np.sqrt(squares).astype(int).tolist()]

    pycoll.seed(5)
    first = order()
    pycoll.seed(5)
    assert order() == first and sorted(first) == list(range(10)) and first != list(range(10))


def test_collate_follows_the_samples_structure():
    batch = default_collate_fn([{"a": 1.5, "b": ("x", np.ones(2))}, {"a": 2.5, "b": ("y", np.zeros(2))}])
    assert batch["a"].tolist() == [1.5, 2.5] and batch["b"][0] == ["x", "y"] and batch["b"][1].shape == (2, 2)
    assert default_collate_fn([pycoll.ones([3]), pycoll.zeros([3])]).shape == (2, 3)
    with pytest.raises(ValueError, match="different numbers of fields"):
        default_collate_fn([(1, 2), (1,)])
    with pytest.raises(TypeError, match="cannot batch samples of type object"):
        default_collate_fn([object()])


def test_tensor_and_iterable_datasets():
    data = TensorDataset([pycoll.to_tensor(np.arange(6.0).reshape(3, 2)), np.array([7, 8, 9])])
    assert len(data) == 3 and data[2][1] == 9
    with pytest.raises(ValueError, match="first dimensions differ"):
        TensorDataset([np.ones(3), np.ones(4)])
    got = [b["x"].numpy().ravel().tolist() for b in DataLoader(Count(), batch_size=3)]
    assert got == [[0, 1, 2], [3, 4, 5], [6]]
    with pytest.raises(TypeError, match="has no length"):
        len(DataLoader(Count()))


@pytest.mark.parametrize("kwargs, words", [
    ({"batch_sampler": BatchSampler(dataset=Squares()), "batch_size": 4}, "batch_sampler chooses"),
    ({"num_workers": -1}, "num_workers=-1"),
    ({"timeout": -2}, "timeout=-2"),
])
def test_bad_arguments_are_named(kwargs, words):
    with pytest.raises(ValueError, match=words):
        DataLoader(Squares(), **kwargs)
    with pytest.raises(ValueError, match="IterableDataset gives its samples in its own order"):
        DataLoader(Count(), shuffle=True)


def test_workers_give_the_same_batches_in_order():
    sampler = BatchSampler(dataset=Squares(23), batch_size=2)
    assert values(DataLoader(Squares(23), batch_sampler=sampler, num_workers=3)) == values(
        DataLoader(Squares(23), batch_sampler=sampler))
    pids = {int(p) for b in DataLoader(Squares(8, "pid"), batch_size=1, num_workers=2) for p in b.numpy()}
    assert len(pids) == 2 and os.getpid() not in pids, "two worker processes read the samples"
    assert multiprocessing.active_children() == []


@pytest.mark.timeout(60)
@pytest.mark.parametrize("trouble, words", [
    ("fail", ["a worker failed on batch 1", "KeyError: 'planted in the dataset'"]),
    ("die", ["exited unexpectedly with code -9"]),
])
def test_a_failing_or_dying_worker_ends_the_iteration_with_its_story(trouble, words):
    with pytest.raises(RuntimeError) as info:
        values(DataLoader(Squares(10, trouble), batch_size=2, num_workers=2))
    for word in words:
        assert word in str(info.value), info.value
    assert multiprocessing.active_children() == []


@pytest.mark.timeout(60)
def test_a_slow_worker_is_bounded_by_timeout_and_an_early_stop_frees_the_workers():
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="within timeout=1 s"):
        values(DataLoader(Squares(10, "slow"), batch_size=2, num_workers=2, timeout=1))
    assert time.monotonic() - start < 5
    batches = iter(DataLoader(Squares(40), batch_size=2, num_workers=2))
    next(batches)
    batches.close()  # the loop stopped early: the workers go
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("nprocs", [2, 3])
def test_each_rank_reads_its_share_through_workers_into_data_parallel(nprocs):
    assert_ok(launch(nprocs, "loader_ranks.py"), expect_lines=nprocs)
