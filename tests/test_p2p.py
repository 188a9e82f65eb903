"""Point to point: P2POp and batch_isend_irecv's checks in one process (batches on ranks in
test_collectives), and receives that do not fit their send on 2 ranks (tests/ranks/p2p_mismatch.py)."""
import numpy as np
import pytest

import pycoll.distributed as dist
from conftest import assert_ok, launch


@pytest.fixture(autouse=True)
def world():
    yield dist.init_parallel_env()
    dist.destroy_process_group()


def test_an_op_is_isend_or_irecv():
    assert dist.P2POp(dist.isend, np.ones(1), 0).op is dist.isend
    assert dist.P2POp("irecv", np.ones(1), 0).op is dist.irecv
    with pytest.raises(ValueError, match="op=<function all_reduce"):
        dist.P2POp(dist.all_reduce, np.ones(1), 0)
    with pytest.raises(RuntimeError, match="op=None"):  # paddle's type (torch's is ValueError: both)
        dist.P2POp(None, np.ones(1), 0)


def test_a_batch_is_checked_whole_before_anything_starts():
    with pytest.raises(TypeError, match=r"p2p_op_list\[0\] is int"):
        dist.batch_isend_irecv([3])
    other = dist.new_group([0])
    with pytest.raises(ValueError, match=r"p2p_op_list sends to this rank itself 1 time\(s\) and receives from it 0"):
        dist.batch_isend_irecv([dist.P2POp("isend", np.ones(1), 0, other), dist.P2POp("irecv", np.ones(1), 0)])
    assert not dist.get_group(0).pending and not other.pending, "nothing may have started"


@pytest.mark.parametrize("case, env", [
    ("recv_bigger", {}), ("isend_irecv_bigger", {}), ("batch_bigger", {}), ("dtype_same_bytes", {}),
    ("empty_send", {}),
    ("dtype_check", {"PYCOLL_CHECK": "1"}), ("matching", {"PYCOLL_CHECK": "1"}),
])
def test_a_receive_that_does_not_fit_the_send_raises_and_the_job_goes_on(case, env):
    """tests/ranks/p2p_mismatch.py: the receiving rank's error names the call, the peer and both
    sides; the pair's next message and an all_reduce still work, and the job exits 0."""
    result = launch(2, "p2p_mismatch.py", case, env=env, timeout=60)
    assert_ok(result)
    assert result.stdout.count(f"{case} OK rank=") == 2, result.stdout + result.stderr


def test_a_receive_in_flight_goes_on_beside_a_barrier():
    assert_ok(launch(2, "p2p_beside_barrier.py", timeout=60), expect_lines=2)


@pytest.mark.parametrize("nprocs", [1, 2])
def test_a_batch_may_send_to_this_rank_itself(nprocs):
    assert_ok(launch(nprocs, "p2p_to_itself.py", timeout=60), expect_lines=nprocs)
