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


def test_shuffle_is_a_permutation_that_numpys_seed_repeats():
    def order():
        return [i for _, squares in values(DataLoader(Squares(), batch_size=3, shuffle=True))
                for i in np.sqrt(squares).astype(int).tolist()]

    np.random.seed(5)  # paddle's shuffle draws from NumPy's global generator
    first = order()
    np.random.seed(5)
    assert order() == first and sorted(first) == list(range(10)) and first != list(range(10))


def test_collate_follows_the_samples_structure():
    batch = default_collate_fn([{"a": 1.5, "b": ("x", np.ones(2))}, {"a": 2.5, "b": ("y", np.zeros(2))}])
    assert batch["a"].tolist() == [1.5, 2.5] and batch["b"][0] == ["x", "y"] and batch["b"][1].shape == (2, 2)
    assert default_collate_fn([pycoll.ones([3]), pycoll.zeros([3])]).shape == (2, 3)
    with pytest.raises(ValueError, match="different numbers of fields"):
        default_collate_fn([(1, 2), (1,)])
    with pytest.raises(ValueError, match="different keys \\(\\['b'\\] and \\['a'\\]\\)"):  # was a bare KeyError
        default_collate_fn([{"b": 1}, {"a": 2}])
    with pytest.raises(ValueError, match="different keys \\(\\['a'\\] and a tuple\\)"):
        default_collate_fn([{"a": 1}, (2,)])
    with pytest.raises(TypeError, match="cannot batch samples of type object"):
        default_collate_fn([object()])
    for ragged in ([pycoll.ones([1]), pycoll.ones([2])], [np.ones(1), np.ones(1), np.ones(2)]):
        with pytest.raises(ValueError, match=r"must have one shape to be stacked: sample 0's field has shape \[1\], "
                                             rf"sample {len(ragged) - 1}'s \[2\]"):
            default_collate_fn(ragged)


def test_tensor_and_iterable_datasets():
    data = TensorDataset([pycoll.to_tensor(np.arange(6.0).reshape(3, 2)), np.array([7, 8, 9])])
    assert len(data) == 3 and data[2][1] == 9
    with pytest.raises(ValueError, match="first dimensions differ"):
        TensorDataset([np.ones(3), np.ones(4)])
    got = [b["x"].numpy().ravel().tolist() for b in DataLoader(Count(), batch_size=3)]
    assert got == [[0, 1, 2], [3, 4, 5], [6]]
    with pytest.raises(TypeError, match="has no length"):
        len(DataLoader(Count()))
    with pytest.raises(ValueError, match="has no length"):  # paddle's type for it
        len(DataLoader(Count()))
    with pytest.raises(ValueError, match="has no length"):
        len(Count())
    assert len(list(DataLoader(Count(), batch_size=3))) == 3  # list() passes over the TypeError


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
@pytest.mark.parametrize("trouble, error, words", [  # a failure raises the worker's type, as paddle's
    ("fail", KeyError, ["a worker failed on batch 1", "KeyError: 'planted in the dataset'"]),
    ("die", RuntimeError, ["exited unexpectedly with code -9"]),
])
def test_a_failing_or_dying_worker_ends_the_iteration_with_its_story(trouble, error, words):
    with pytest.raises(error) as info:
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


def test_samplers_give_paddles_indices():
    from pycoll.io import RandomSampler, SequenceSampler, SubsetRandomSampler, WeightedRandomSampler

    data = Squares(6)
    assert list(SequenceSampler(data)) == list(range(6)) and len(SequenceSampler(data)) == 6
    np.random.seed(3)
    drawn = list(RandomSampler(data))
    assert sorted(drawn) == list(range(6)) and drawn != list(range(6))
    np.random.seed(3)
    assert list(RandomSampler(data)) == drawn, "np.random.seed repeats it, as in paddle"
    assert len(list(RandomSampler(data, replacement=True, num_samples=20))) == 20
    assert list(RandomSampler(data, generator=iter([5, 4]), num_samples=2)) == [5, 4]
    weighted = list(WeightedRandomSampler([0.0, 1.0, 0.0, 3.0], num_samples=50))
    assert set(weighted) <= {1, 3} and weighted.count(3) > weighted.count(1)
    pycoll.seed(1)
    assert sorted(SubsetRandomSampler([7, 8, 9])) == [7, 8, 9]
    batches = list(BatchSampler(sampler=SequenceSampler(data), batch_size=4))
    assert batches == [[0, 1, 2, 3], [4, 5]]
    with pytest.raises(ValueError, match="num_samples=7 is more than the 6 samples"):
        RandomSampler(data, num_samples=7)
    with pytest.raises(ValueError, match="weights must be"):
        WeightedRandomSampler([0.0, 0.0], num_samples=1)
    with pytest.raises(TypeError, match="WeightedRandomSampler: replacement must be a bool, got 1"):
        WeightedRandomSampler([1.0, 1.0], num_samples=1, replacement=1)  # paddle: a ValueError
    with pytest.raises(TypeError, match="data_source"):
        SequenceSampler()  # paddle's, at construction


def test_datasets_made_of_datasets():
    from pycoll.io import ChainDataset, ComposeDataset, ConcatDataset, Subset, random_split

    a, b = Squares(3), Squares(2)
    assert ComposeDataset([a, Squares(3)])[2][1::2] == (4, 4) and len(ComposeDataset([a, a])) == 3
    both = ConcatDataset([a, b])
    assert len(both) == 5 and both[3][1] == 0 and both[-1][1] == 1
    assert [s["x"].item() for s in ChainDataset([Count(), Count()])] == list(range(7)) * 2
    with pytest.raises(TypeError, match=r"ChainDataset: datasets\[1\] is a Squares; ChainDataset chains IterableDatasets"):
        ChainDataset([Count(), a])  # iterating a map-style dataset may never end (paddle asserts too)
    assert [s[1] for s in Subset(a, [2, 0])] == [4, 0]
    pycoll.seed(5)
    parts = random_split(range(10), [3, 7])
    assert [len(p) for p in parts] == [3, 7] and sorted(list(parts[0]) + list(parts[1])) == list(range(10))
    assert [len(p) for p in random_split(range(10), [0.5, 0.5])] == [5, 5]
    with pytest.raises(ValueError, match="add up to 9, the dataset has 10"):
        random_split(range(10), [4, 5])
    with pytest.raises(ValueError, match="the datasets' lengths differ"):
        ComposeDataset([a, b])
    with pytest.raises(TypeError, match="IterableDataset"):
        ConcatDataset([a, Count()])


def test_worker_info_inside_workers_none_outside():
    from pycoll.io import get_worker_info

    class WhoAmI(Dataset):
        def __getitem__(self, i):
            info = get_worker_info()
            return np.array([info.id, info.num_workers])

        def __len__(self):
            return 4

    assert get_worker_info() is None
    seen = {tuple(row) for batch in DataLoader(WhoAmI(), batch_size=1, num_workers=2) for row in batch.numpy()}
    assert seen <= {(0, 2), (1, 2)} and len(seen) >= 1


class Range(IterableDataset):
    """start..end-1: each worker its share (by get_worker_info), or all of it in the training process."""

    def __init__(self, start, end, fail_at=None):
        self.start, self.end, self.fail_at = start, end, fail_at

    def __iter__(self):
        from pycoll.io import get_worker_info

        info = get_worker_info()
        lo, hi = self.start, self.end
        if info is not None:
            per = -(-(hi - lo) // info.num_workers)
            lo = self.start + info.id * per
            hi = min(lo + per, self.end)
        for i in range(lo, hi):
            if i == self.fail_at:
                raise KeyError("planted in the stream")
            yield np.array([i])


def test_an_iterable_dataset_in_workers_is_taken_from_each_in_turn_as_paddle_does():
    taken = [int(b.numpy()[0, 0]) for b in DataLoader(Range(2, 9), batch_size=1, num_workers=2)]
    assert taken == [2, 6, 3, 7, 4, 8, 5]  # worker 0 reads 2..5, worker 1 6..8 (paddle's example)
    assert [int(b.numpy()[0, 0]) for b in DataLoader(Range(2, 9), batch_size=1)] == list(range(2, 9))
    pairs = [b.numpy()[:, 0].tolist() for b in DataLoader(Range(0, 7), batch_size=2, drop_last=True, num_workers=3)]
    assert pairs == [[0, 1], [3, 4]]  # each worker drops its own partial last batch; worker 2's [6]
    with pytest.raises(KeyError, match="(?s)a worker failed in worker 1.*planted in the stream"):
        list(DataLoader(Range(0, 8, fail_at=5), batch_size=1, num_workers=2))


def test_batch_size_none_gives_each_sample_alone_as_paddle_does():
    """paddle's DataLoader(batch_size=None): no batching; a sample's arrays come out as Tensors,
    a tuple sample as a list, numbers as they are; in workers too."""
    class Pairs(pycoll.io.Dataset):
        def __len__(self):
            return 3

        def __getitem__(self, i):
            return np.array([i, i + 1], dtype="float32"), i

    for workers in (0, 2):
        loader = pycoll.io.DataLoader(Pairs(), batch_size=None, num_workers=workers)
        got = list(loader)
        assert len(loader) == 3 and [s[1] for s in got] == [0, 1, 2]
        assert all(isinstance(s, list) and isinstance(s[0], pycoll.Tensor) and s[0].shape == [2] for s in got)
        np.testing.assert_array_equal(got[2][0].numpy(), [2.0, 3.0])
