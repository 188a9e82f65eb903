"""paddle.io's DataLoader as paddle 3.3.1 behaves (a probe compared them, 2026-11-27; the values
in comments are paddle's): batches never share memory with the dataset, Tensor samples collate
into Tensors, persistent workers persist, the classes are generic and nest as paddle's, and the
loader's attributes read as paddle's."""
import multiprocessing
import os
from typing import List, Tuple

import numpy as np
import pytest

import pycoll
from pycoll import io


class Rows(io.Dataset):
    def __init__(self):
        self.data = np.arange(6, dtype="float32").reshape(3, 2)

    def __getitem__(self, i):
        return self.data[i]

    def __len__(self):
        return 3


@pytest.mark.parametrize("form", ["batch_size=None", "collate_fn=b[0]"])
def test_an_in_place_op_on_a_batch_leaves_the_dataset_alone(form):
    rows = Rows()
    kwargs = {"batch_size": None} if form == "batch_size=None" else {"collate_fn": lambda b: b[0]}
    for _ in range(2):
        for x in io.DataLoader(rows, **kwargs):
            x.scale_(0.5)
            x[0] = -1.0
    assert rows.data.tolist() == [[0, 1], [2, 3], [4, 5]]  # paddle's: unchanged


def test_a_collate_fn_that_reuses_its_buffer_gives_batches_of_their_own():
    buffer = np.zeros(2, dtype="float32")

    def collate(batch):
        buffer[:] = batch[0]
        return buffer
    kept = [b.numpy().tolist() for b in list(io.DataLoader(Rows(), collate_fn=collate))]
    assert kept == [[0, 1], [2, 3], [4, 5]]  # pycoll gave [[4, 5]] * 3


def test_default_collate_fn_stacks_tensors_into_a_tensor():
    samples = [(pycoll.to_tensor([float(i), i + 0.5]), i) for i in range(2)]
    x, y = io.dataloader.collate.default_collate_fn(samples)
    assert isinstance(x, pycoll.Tensor) and x.unsqueeze(1).shape == [2, 1, 2]
    assert x.numpy().tolist() == [[0, 0.5], [1, 1.5]] and x.stop_gradient
    assert isinstance(y, np.ndarray) and y.tolist() == [0, 1]  # numbers stay NumPy, as paddle's


def test_a_tensor_sample_comes_out_new_and_without_gradient():
    w = pycoll.to_tensor([1.0, 2.0], stop_gradient=False)

    class Made(io.Dataset):
        def __getitem__(self, i):
            return w * 1.0

        def __len__(self):
            return 1
    for loader in (io.DataLoader(Made(), batch_size=None), io.DataLoader(Made(), batch_size=1)):
        (x,) = list(loader)
        assert x.stop_gradient and x.numpy().ravel().tolist() == [1.0, 2.0]  # paddle's: stop_gradient True


class Counting(io.Dataset):
    """Each sample: the reading process and how many samples it has read."""

    def __init__(self):
        self.read = 0

    def __getitem__(self, i):
        self.read += 1
        return np.array([os.getpid(), self.read])

    def __len__(self):
        return 4


def _epoch(loader) -> List[Tuple[int, int]]:
    return [tuple(row) for batch in loader for row in batch.numpy().tolist()]


def test_persistent_workers_keep_their_processes_and_state_from_pass_to_pass():
    started = []
    loader = io.DataLoader(Counting(), batch_size=1, num_workers=2, persistent_workers=True,
                           worker_init_fn=started.append)
    first, second = _epoch(loader), _epoch(loader)
    assert {pid for pid, _ in first} == {pid for pid, _ in second} and len({pid for pid, _ in first}) == 2
    assert [n for _, n in first] == [1, 1, 2, 2] and [n for _, n in second] == [3, 3, 4, 4]  # paddle's
    again = io.DataLoader(Counting(), batch_size=1, num_workers=2)  # not persistent: new workers each pass
    assert [n for _, n in _epoch(again)] == [n for _, n in _epoch(again)] == [1, 1, 2, 2]
    del loader  # the persistent workers go with their loader, at once (not at a garbage collection)
    assert multiprocessing.active_children() == []


def test_a_persistent_pass_left_early_does_not_leak_into_the_next():
    loader = io.DataLoader(list(np.arange(8.0)), batch_size=2, num_workers=2, persistent_workers=True)
    batches = iter(loader)
    assert next(batches).numpy().tolist() == [0, 1]
    assert [b.numpy().tolist() for b in loader] == [[0, 1], [2, 3], [4, 5], [6, 7]]


def test_the_datasets_and_samplers_are_generic_and_nest_as_paddles():
    class Pairs(io.Dataset[Tuple[int, int]]):
        def __getitem__(self, i):
            return i, i

        def __len__(self):
            return 2
    assert list(Pairs()[1]) == [1, 1]
    assert io.IterableDataset[int] is not None and io.Sampler[int] is not None
    data = list(range(4))
    distributed = io.DistributedBatchSampler(data, batch_size=2, num_replicas=1, rank=0)
    assert isinstance(distributed, io.BatchSampler) and isinstance(distributed, io.Sampler)
    assert isinstance(io.DataLoader(data, batch_size=2).batch_sampler, io.BatchSampler)


def test_the_loaders_attributes_and_iterator_read_as_paddles():
    data = [np.array([i]) for i in range(4)]
    assert len(iter(io.DataLoader(data, batch_size=2))) == 2
    by_sampler = io.DataLoader(data, batch_sampler=io.BatchSampler(data, batch_size=2))
    assert by_sampler.batch_size is None and len(by_sampler) == 2
    unbatched = io.DataLoader(data, batch_size=None)
    assert (unbatched.batch_size, unbatched.batch_sampler) == (None, None) and len(unbatched) == 4
    assert io.DataLoader(data).use_shared_memory is False  # no workers: paddle's False
    assert io.DataLoader(data, num_workers=1).use_shared_memory is True
    batch = next(iter(io.DataLoader(data, batch_size=2, collate_fn=lambda b: (np.stack(b), (np.stack(b),)))))
    assert type(batch) is list and type(batch[1]) is list  # tuples as lists, at every depth
    with pytest.raises(ValueError, match="batch_sampler chooses the batches"):
        io.DataLoader(data, batch_sampler=io.BatchSampler(data, batch_size=2), batch_size=None)


def test_random_split_names_lengths_that_are_neither_counts_nor_fractions():
    with pytest.raises(ValueError, match=r"random_split: lengths \[1.0, 3.0\] must be counts"):
        io.random_split(list(range(4)), [1.0, 3.0])
