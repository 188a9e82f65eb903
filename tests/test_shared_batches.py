"""DataLoader workers hand large arrays over through /dev/shm (use_shared_memory, paddle's default):
the batches equal those that come through the queue, in every container the collate makes, and no
file is left after a pass, a pass left early, or a failed worker."""
import collections
import os

import numpy as np
import pytest

import pycoll
from pycoll.io import shared_batches

pytestmark = [pytest.mark.skipif(not shared_batches.available(), reason="no writable /dev/shm"),
              pytest.mark.timeout(120)]

Pair = collections.namedtuple("Pair", "image label")


def _ours():
    return {name for name in os.listdir(shared_batches.DIR) if name.startswith(f"{shared_batches.PREFIX}{os.getpid()}_")}


class Images(pycoll.io.Dataset):
    """Samples of every form default_collate_fn batches: large arrays, small ones, a Tensor, a dict,
    a namedtuple; sample 5 fails when asked for."""

    def __init__(self, n=12, failing=False):
        self.n, self.failing = n, failing

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if self.failing and i == 5:
            raise ValueError("sample 5 is broken")
        image = np.full((3, 64, 64), i, np.float32)  # 48 KB: a batch of 4 goes through a file
        return {"pair": Pair(image, np.int64(i)), "small": np.arange(3) + i,
                "tensor": pycoll.full([128, 64], float(i))}


@pytest.mark.parametrize("persistent", [False, True])
def test_batches_through_shared_memory_equal_those_through_the_queue(persistent):
    got = {}
    for shared in (True, False):
        loader = pycoll.io.DataLoader(Images(), batch_size=4, num_workers=2, use_shared_memory=shared,
                                      persistent_workers=persistent, shuffle=False)
        got[shared] = [batch for batch in loader]
    assert len(got[True]) == 3
    for a, b in zip(got[True], got[False]):
        assert sorted(a) == sorted(b) == ["pair", "small", "tensor"]
        image = a["pair"][0]
        assert isinstance(image, pycoll.Tensor) and image.shape == [4, 3, 64, 64]
        np.testing.assert_array_equal(image.numpy(), b["pair"][0].numpy())
        np.testing.assert_array_equal(a["pair"][1].numpy(), b["pair"][1].numpy())
        np.testing.assert_array_equal(a["small"].numpy(), b["small"].numpy())
        np.testing.assert_array_equal(a["tensor"].numpy(), b["tensor"].numpy())
        image.numpy()[...] += 1  # a batch is the training process's own memory
    assert _ours() == set()


def test_writer_and_reader_keep_containers_and_dtypes():
    writer = shared_batches.Writer(shared_batches.pool_prefix())
    from pycoll.dtypes import bfloat16

    tree = {"a": [np.arange(40000, dtype=np.int16).reshape(200, 200), (np.ones(3),)],
            "bf": np.full((200, 200), 1.5, bfloat16()),  # no buffer format of its own (a worker's crash)
            "b": collections.OrderedDict(x=np.zeros((300, 300), np.float64)),
            "t": pycoll.ones([100, 200]), "s": "text"}
    packed = writer.packed(tree)
    assert isinstance(packed["a"][0], shared_batches.SharedArray) and isinstance(packed["a"][1][0], np.ndarray)
    back = shared_batches.unpacked(packed)
    assert type(back["b"]) is collections.OrderedDict and isinstance(back["t"], pycoll.Tensor) and back["s"] == "text"
    np.testing.assert_array_equal(back["a"][0], tree["a"][0])
    assert back["a"][0].dtype == np.int16 and back["b"]["x"].shape == (300, 300)
    assert back["bf"].dtype == bfloat16() and float(back["bf"][7, 9]) == 1.5
    assert _ours() == set()  # taken: unlinked


def test_nothing_is_left_after_a_pass_left_early_or_a_failed_worker():
    loader = pycoll.io.DataLoader(Images(40), batch_size=4, num_workers=2, prefetch_factor=3)
    for i, _ in enumerate(loader):
        if i == 1:
            break  # the batches in flight are never taken
    del loader
    assert _ours() == set()
    with pytest.raises(ValueError, match="sample 5 is broken"):  # the worker's own type
        list(pycoll.io.DataLoader(Images(40, failing=True), batch_size=4, num_workers=2))
    assert _ours() == set()


def test_a_new_pool_removes_what_a_killed_training_process_left():
    import subprocess
    import sys

    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True, timeout=60).stdout)
    orphan = os.path.join(shared_batches.DIR, f"{shared_batches.PREFIX}{dead}_0_1_7")
    live = os.path.join(shared_batches.DIR, f"{shared_batches.PREFIX}{os.getpid()}_999_1_7")
    for path in (orphan, live):
        with open(path, "wb") as f:
            f.write(b"\0" * 64)
    try:
        assert len(list(pycoll.io.DataLoader(Images(4), batch_size=4, num_workers=1))) == 1
        assert not os.path.exists(orphan) and os.path.exists(live)
    finally:
        for path in (orphan, live):
            if os.path.exists(path):
                os.unlink(path)
