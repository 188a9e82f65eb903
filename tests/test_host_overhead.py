"""What the collectives hand their engine, with less host work per call: lists whose entries tile
one buffer are received into (and sent from) in place, and an alltoall whose blocks have one
shape everywhere skips the size exchange.

The in-process tests drive the public collectives over the NCCL engine on host_cuda.py's
recording communicator (rank 0 of 2; nothing is carried out, every call is logged with the
addresses pycoll hands NCCL). Values on live ranks, for tiling lists and every kind of list
that does not tile, are checked by tests/ranks/zero_copy_lists.py.
"""
import numpy as np
import pytest

from conftest import assert_ok, launch
from host_cuda import Communicator, full, zeros
from pycoll.backends.nccl import NCCLBackend
from pycoll.distributed import _arrays, agreement, alltoall_sizes
from pycoll.distributed import collective as dist
from pycoll.distributed.group import Group

HOST_CUPY = {"PYCOLL_BACKEND": "nccl", "PYCOLL_TEST_HOST_CUPY": "1", "NCCL_SOCKET_IFNAME": "lo"}


def address(a):
    return a.__array_interface__["data"][0]


@pytest.fixture
def group(backend):
    """The world of 2 ranks, this one rank 0, over the recording NCCL engine, past the first
    collectives (which all-gather their tensors' sizes first, agreement.due): the log holds the
    calls' own."""
    world = Group(0, [0, 1], 0, backend, 10.0)
    world.seq = agreement.ALWAYS
    return world


def test_all_gather_into_a_list_tiling_one_buffer_hands_nccl_that_buffer(group, fake):
    recv = full(8, -1.0, np.float32)
    send = full(4, 3.0, np.float32)
    dist.all_gather([recv[:4], recv[4:]], send, group=group)
    (call,) = fake.log.calls("allGather")
    assert call[1:4] == (address(send), address(recv), 16)  # bytes per rank
    # nothing was carried out and nothing copied back over the entries
    assert recv.tolist() == [-1.0] * 8


def test_all_gather_into_one_tensor_hands_nccl_that_tensor(group, fake):
    for recv in (full((2, 4), -1.0, np.float32), full(8, -1.0, np.float32)):  # [n, *shape], [n * size]
        fake.clear()
        dist.all_gather(recv, full(4, 3.0, np.float32), group=group)
        assert fake.log.calls("allGather")[0][2] == address(recv)
        assert recv.tolist() == np.full(recv.shape, -1.0).tolist()


def test_one_tensor_of_another_dtype_is_refused_not_received_into(group, fake):
    """The direct path must not skip the dtype check the list path makes: float32 blocks received
    into float64 memory would be garbage."""
    recv = full(8, -1.0, np.float64)
    fake.clear()
    with pytest.raises(ValueError, match=r"all_gather: tensor_list is one tensor of dtype float64.*dtype, float32"):
        dist.all_gather(recv, full(4, 3.0, np.float32), group=group)
    assert not fake.log.calls("allGather") and recv.tolist() == [-1.0] * 8


@pytest.mark.parametrize("layout", ["gaps", "reversed", "separate", "strided", "holding the sent tensor"])
def test_lists_that_do_not_tile_one_buffer_are_received_through_pycolls_own(group, fake, layout):
    buf = full(16, -1.0, np.float32)
    send = full(4, 3.0, np.float32)
    entries = {"gaps": [buf[:4], buf[8:12]],
               "reversed": [buf[4:8], buf[:4]],
               "separate": [zeros(4, np.float32), zeros(4, np.float32)],
               "strided": [buf[0:8:2], buf[1:8:2]],
               "holding the sent tensor": [buf[:4], buf[4:8]]}[layout]
    if layout == "holding the sent tensor":
        send = buf[4:8]
    dist.all_gather(entries, send, group=group)
    received_into = fake.log.calls("allGather")[0][2]
    assert received_into not in [address(e) for e in entries] + [address(buf)]


def test_in_place_all_gather_and_reduce_scatter_hand_nccl_the_ranks_own_block(group, fake):
    """NCCL's in-place rule (rank 0 here): the sent block is block 0 of the received buffer."""
    buf = full(8, 1.0, np.float32)
    dist.all_gather([buf[:4], buf[4:]], buf[:4], group=group)
    dist.all_gather(buf, buf[:4], group=group)
    dist.reduce_scatter(buf[:4], [buf[:4], buf[4:]], group=group)
    assert [c[1:3] for c in fake.log.calls("allGather")] == [(address(buf), address(buf))] * 2
    assert fake.log.calls("reduceScatter")[0][1:3] == (address(buf), address(buf))
    fake.clear()  # another rank's block is not in place: through pycoll's own buffer
    dist.reduce_scatter(buf[4:], [buf[:4], buf[4:]], group=group)
    assert fake.log.calls("reduceScatter")[0][1] != address(buf)


def test_one_strided_tensor_is_received_through_pycolls_own(group, fake):
    recv = full((2, 8), -1.0, np.float32)[:, ::2]
    dist.all_gather(recv, full(4, 3.0, np.float32), group=group)
    assert fake.log.calls("allGather")[0][2] != address(recv)


def test_gather_scatter_and_reduce_scatter_use_a_list_tiling_one_buffer_in_place(group, fake):
    buf = full(8, 1.0, np.float32)
    mine = full(4, 2.0, np.float32)
    dist.gather(mine, [buf[:4], buf[4:]], dst=0, group=group)
    assert [call[1:3] for call in fake.log.calls("recv")] == [(address(buf), 16), (address(buf) + 16, 16)]
    fake.clear()
    dist.reduce_scatter(mine, [buf[:4], buf[4:]], group=group)
    assert fake.log.calls("reduceScatter")[0][1:3] == (address(buf), address(mine))


def test_alltoall_of_one_block_shape_skips_the_size_exchange_and_uses_tiling_lists_in_place(fake):
    """On a group of one, nobody can disagree: the only NCCL calls are the data's."""
    alone = Group(0, [0], 0, NCCLBackend(Communicator(fake, rank=0, size=1), timeout=10.0), 10.0)
    fake.clear()
    send, recv = full(8, 1.0, np.float32), full(8, -1.0, np.float32)
    dist.alltoall([recv[4:]], [send[2:6]], group=alone)
    assert [c[:3] for c in fake.log if c[0] in ("allReduce", "send", "recv")] == [
        ("send", address(send) + 8, 16), ("recv", address(recv) + 16, 16)]
    assert recv.tolist() == [-1.0] * 8  # nothing carried out, nothing copied back


@pytest.mark.parametrize("sends, targets, block", [
    ([(4,), (4,)], None, (16, ord("f"), 4, (4,))),
    ([(4,), (4,)], [(2, 2), (4,)], (16, ord("f"), 4, (4,))),  # outputs take the bytes, any shape
    ([(4,), (2,)], None, None),  # blocks of two shapes
    ([(4,), (4,)], [(4,), (3,)], None),  # an output that cannot take the block
])
def test_an_alltoall_block_is_uniform_when_every_peer_gets_one_shape_every_output_takes(sends, targets, block):
    arrays = [np.zeros(shape, np.float32) for shape in sends]
    outs = None if targets is None else [np.zeros(shape, np.float32) for shape in targets]
    assert alltoall_sizes.uniform_block(arrays, outs) == block
    assert alltoall_sizes.uniform_block([np.zeros(4, np.float32), np.zeros(4, np.int32)], None) is None


# -- the proof, on NumPy arrays -------------------------------------------------------------------
BIG = _arrays._HOST_TILE_BYTES // 4  # float32 elements: NumPy lists below this are copied


@pytest.mark.parametrize("case, tiles", [
    ("consecutive", True), ("gap", False), ("reversed", False), ("other base", False),
    ("strided", False), ("overlapping the other side", False), ("whole base", False)])
def test_tiled_needs_consecutive_contiguous_views_of_one_base_away_from_the_other_side(case, tiles):
    base = np.zeros(4 * BIG, np.float32)
    like = np.zeros(BIG, np.float32)
    arrays = {"consecutive": [base[:BIG], base[BIG:2 * BIG]],
              "gap": [base[:BIG], base[2 * BIG:3 * BIG]],
              "reversed": [base[BIG:2 * BIG], base[:BIG]],
              "other base": [base[:BIG], np.zeros(2 * BIG, np.float32)[BIG:]],
              "strided": [base[0:2 * BIG:2], base[1:2 * BIG:2]],
              "overlapping the other side": [base[:BIG], base[BIG:2 * BIG]],
              "whole base": [np.zeros(BIG, np.float32), np.zeros(BIG, np.float32)]}[case]
    if case == "overlapping the other side":
        like = base[BIG:2 * BIG]
    view = _arrays.tiled(arrays, like, np)
    assert (view is not None) is tiles
    if tiles:
        view[...] = [[1.0], [2.0]]
        assert base[:BIG].tolist() == [1.0] * BIG and base[BIG:2 * BIG].tolist() == [2.0] * BIG


def test_tiled_reads_a_buffer_of_another_dtype_and_refuses_small_numpy_blocks():
    raw = np.zeros(8 * BIG, np.uint8)
    floats = raw.view(np.float32)
    view = _arrays.tiled([floats[:BIG], floats[BIG:2 * BIG]], np.zeros(BIG, np.float32), np)
    view[1, 0] = 1.0
    assert floats[BIG] == 1.0
    small = np.zeros(8, np.float32)
    assert _arrays.tiled([small[:4], small[4:]], np.zeros(4, np.float32), np) is None


def test_region_gives_the_bytes_of_blocks_of_several_sizes():
    base = np.arange(3 * BIG, dtype=np.float32)
    memory = _arrays.region([base[:BIG], base[BIG:3 * BIG]], np)
    assert memory.dtype == np.uint8 and memory.nbytes == base.nbytes
    assert np.array_equal(memory.view(np.float32), base)


# -- values on live ranks -------------------------------------------------------------------------
@pytest.mark.parametrize("nprocs, env", [(2, None), (3, None), (2, HOST_CUPY)], ids=["cpu-2", "cpu-3", "host-cupy-2"])
def test_values_through_lists_that_tile_and_lists_that_do_not(nprocs, env):
    assert_ok(launch(nprocs, "zero_copy_lists.py", env=env), expect_lines=nprocs)
