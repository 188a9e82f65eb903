"""pycoll.distributed.sharding: paddle's greedy ownership, every level on real ranks, and fleet's
sharding stages and gradient merge."""
import pytest

from conftest import assert_ok, launch
from pycoll.distributed.sharding.ownership import owners


def test_ownership_is_greedy_largest_first():
    assert owners([15, 3, 21, 7], 2) == [1, 0, 0, 1]  # 21 -> 0, 15 -> 1, 7 -> 1 (22), 3 -> 0 (24)
    assert owners([4, 4, 4], 3) == [0, 1, 2] and owners([5], 4) == [0]


@pytest.mark.parametrize("nprocs", [2, 3, 4])
def test_os_level_trains_like_data_parallel_with_a_share_of_the_state(nprocs, tmp_path):
    assert_ok(launch(nprocs, "sharding_equivalence.py", str(tmp_path), timeout=120), expect_lines=nprocs)


def test_fleet_sharding_stages_and_gradient_merge_train_as_one_process():
    assert_ok(launch(4, "fleet_sharding.py", timeout=120), expect_lines=4)
