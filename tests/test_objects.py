"""The object collectives in one process (a world of one); on ranks in test_collectives, and
send_object_list / recv_object_list on two ranks."""
import pytest

import pycoll.distributed as dist
from conftest import assert_ok, launch


@pytest.fixture(autouse=True)
def world():
    yield dist.init_parallel_env()
    dist.destroy_process_group()


def test_a_world_of_one_gets_its_own_objects_back():
    got = ["kept"]
    dist.all_gather_object(got, {"a": [1, 2]})
    assert got == ["kept", {"a": [1, 2]}]  # appended, as in paddle
    box = [(1, 2), "x" * 5000]
    dist.broadcast_object_list(box, src=0)
    assert box == [(1, 2), "x" * 5000]
    out = ["stale"]
    dist.scatter_object_list(out, [{"only": 0}], src=0)
    assert out == [{"only": 0}]  # cleared, then the one object


def test_objects_that_cannot_be_pickled_are_refused_naming_their_type():
    with pytest.raises(TypeError, match="obj holds an object of type builtins.generator"):
        dist.all_gather_object([], (i for i in range(2)))
    with pytest.raises(TypeError, match=r"object_list\[1\] holds an object of type"):
        dist.broadcast_object_list([1, lambda: 0], src=0)
    with pytest.raises(ValueError, match="in_object_list on the source rank 0"):
        dist.scatter_object_list([], [1, 2], src=0)


def test_objects_point_to_point_between_two_ranks():
    assert_ok(launch(2, "object_p2p.py", timeout=60), expect_lines=2)


def test_an_object_collective_refused_on_one_rank_is_refused_on_every_rank_before_anything_moves():
    """A probe: rank 1's refusal (a tuple for the list) left the root's broadcasts to its next
    call, which returned the refused call's objects; an out-of-range src on one rank waited for
    PYCOLL_TIMEOUT."""
    assert_ok(launch(2, "object_refusals.py", timeout=60), expect_lines=2)
