"""paddle's forms that failed only on a GPU (a probe on the strict stand-in, 2026-11-27): a tuple
written into a slice, ``Tensor.cuda(blocking=...)``, ``to_tensor(place=CUDAPinnedPlace())``; and
DataLoader workers, which read on the CPU as paddle's do."""
import numpy as np
import pytest

import pycoll
import strict_cupy


@pytest.fixture
def gpu():
    with strict_cupy.installed() as cp:
        pycoll.set_device("gpu")
        try:
            yield cp
        finally:
            pycoll.set_device("cpu")


def test_a_tuple_written_into_a_slice_as_a_list_is(gpu):
    x = pycoll.zeros([2, 3])
    x[:] = (4.0, 5.0, 6.0)  # CuPy's fill takes no tuple: pycoll makes it an array first
    x[0] = [1, 2, 3]
    np.testing.assert_array_equal(x.numpy(), [[1, 2, 3], [4, 5, 6]])
    assert isinstance(x._array, gpu.ndarray)


def test_cuda_takes_paddles_blocking_argument(gpu):
    pycoll.set_device("cpu")
    t = pycoll.to_tensor([1.0, 2.0])
    for blocking in (True, False):
        moved = t.cuda(blocking=blocking)
        assert isinstance(moved._array, gpu.ndarray) and moved.numpy().tolist() == [1.0, 2.0]
    assert isinstance(t.cuda(0, False)._array, gpu.ndarray)
    with pytest.raises(TypeError, match="blocking must be a bool"):
        t.cuda(blocking="yes")


def test_to_tensor_on_pinned_memory_gives_a_host_tensor(gpu):
    t = pycoll.to_tensor([1.0, 2.0], place=pycoll.CUDAPinnedPlace())
    assert t.place.is_cpu_place() and t.numpy().tolist() == [1.0, 2.0]


class _Devices(pycoll.io.Dataset):
    """Each sample: the device current where it is read, and a Tensor made there."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return pycoll.get_device(), pycoll.to_tensor([float(i)]).numpy()


def test_dataloader_workers_read_on_the_cpu_while_training_runs_on_the_gpu(gpu):
    # paddle's workers fetch under a CPU place: CUDA is not for a forked child
    loader = pycoll.io.DataLoader(_Devices(), batch_size=2, num_workers=2)
    batches = list(loader)
    assert [names for names, _ in batches] == [["cpu", "cpu"], ["cpu", "cpu"]]
    assert [values.numpy().ravel().tolist() for _, values in batches] == [[0.0, 1.0], [2.0, 3.0]]
    assert isinstance(batches[0][1]._array, gpu.ndarray)  # collated into the training process's device
    assert pycoll.get_device() == "gpu:0"
