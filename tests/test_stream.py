"""dist.stream: paddle's stream variants, faces over the same collectives (one process here; on
ranks in test_collectives): use_calc_stream's rule and the one-tensor forms."""
import numpy as np
import pytest

import pycoll.distributed as dist

s = dist.stream


@pytest.fixture(autouse=True)
def world():
    yield dist.init_parallel_env()
    dist.destroy_process_group()


@pytest.mark.parametrize("call, args", [
    (s.all_reduce, (np.ones(2),)), (s.broadcast, (np.ones(2), 0)), (s.reduce, (np.ones(2),)),
    (s.all_gather, ([], np.ones(2))), (s.gather, (np.ones(2), [])), (s.scatter, (np.ones(2), [np.ones(2)])),
    (s.reduce_scatter, (np.ones(2), [np.ones(2)])), (s.alltoall, ([], [np.ones(2)])),
    (s.alltoall_single, (np.ones(2), np.ones(2))),
])
def test_use_calc_stream_needs_a_sync_op(call, args):
    with pytest.raises(ValueError, match="use_calc_stream=True needs sync_op=True") as refused:
        call(*args, sync_op=False, use_calc_stream=True)
    assert isinstance(refused.value, RuntimeError)  # paddle's type
    call(*args, use_calc_stream=True).wait()
    call(*args, sync_op=False).wait()


def test_one_tensor_stands_for_its_parts():
    out = np.zeros((2, 3))
    s.all_gather(out, np.full((2, 3), 7.0))
    assert (out == 7).all()
    mine = np.zeros(4)
    s.scatter(mine, np.arange(4.0), src=0)
    assert mine.tolist() == [0, 1, 2, 3]
    back = np.zeros(3, np.int64)
    s.alltoall(back, np.arange(3))
    assert back.tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="stream.scatter: tensor_or_tensor_list has shape \\[\\]"):
        s.scatter(np.zeros(2), np.zeros(()), src=0)  # one element, where the output holds two


def test_dist_scatter_and_reduce_scatter_take_one_tensor_too():
    # paddle's dist.scatter and dist.reduce_scatter run through its stream variants, so a tensor of
    # the parts is taken where the docs say list (a probe: pycoll raised TypeError)
    mine = np.zeros(2)
    dist.scatter(mine, np.array([[1.0, 2.0]]), src=0)
    assert mine.tolist() == [1, 2]
    total = np.zeros(2, np.float32)
    dist.reduce_scatter(total, np.array([[3.0, 4.0]], np.float32))
    assert total.tolist() == [3, 4]
    with pytest.raises(TypeError, match="reduce_scatter: tensor_list must be"):
        dist.reduce_scatter(total, "not a tensor")
