"""A call refused on one rank only, while its peers wait in it, ends the job within seconds with a
message naming the refusal (the refusal check where a peer made the call, else the stall notices),
long before PYCOLL_TIMEOUT (30 s here; before, such jobs waited for
it): real ranks (tests/ranks/refused_on_one_rank.py) with PYCOLL_STALL_WARN=1, so that a wait is
told after 1 s. Then the rules and the record behind it, in one process."""
import time

import numpy as np
import pytest
from conftest import launch

import pycoll.distributed as dist
from pycoll.distributed.group import Group
from pycoll.distributed.job_deadlock import JobWait, deadlock_text
from pycoll.distributed.stall_rules import Wait, group_verdict

TIMEOUT_S = 30
ENV = {"PYCOLL_STALL_WARN": "1", "PYCOLL_TIMEOUT": str(TIMEOUT_S)}
ENDS_WITHIN_S = 15.0  # start-up, 1 s to stall, the notices and their confirmation
WORLD = "world (ranks [0, 1])"
STOPPED = "they can never match (run with PYCOLL_CHECK=1 to catch this before the call); stopping the job"
HEAD = "pycoll.CollectiveError: every rank waits in a call that no other rank's call can ever match: "
OUT_OF_STEP = ("the ranks' calls on the group are out of step, and their next calls would exchange the wrong data; "
               "give every rank the same arguments (PYCOLL_CHECK=1 compares them before each call); stopping the job")


@pytest.mark.parametrize("mode, verdict", [
    ("alltoall", f"pycoll.CollectiveError: rank 1 waits in alltoall (sync_op=True) #1 on {WORLD}, which rank 0 "
                 "refused (ValueError: pycoll.distributed.alltoall: in_tensor_list has 3 entries; it needs 2 "
                 f"(one per rank of the group)); rank 0 went on to all_reduce (sync_op=True) #2: {STOPPED}"),
    ("all_gather", f"pycoll.CollectiveError: rank 0 refused all_gather #1 on {WORLD} (ValueError: "
                   "pycoll.distributed.all_gather: tensor_list[0] has shape (2,) and dtype float32; it must match "
                   f"the sent tensors: shape (4,), dtype float32), and rank(s) [1] made it: {OUT_OF_STEP}"),
    ("then_recv", f"pycoll.CollectiveError: rank 0 refused broadcast #1 on {WORLD} (ValueError: "
                  f"pycoll.distributed.broadcast: src=7 is not a rank of {WORLD}), and rank(s) [1] made it: "
                  f"{OUT_OF_STEP}"),
    ("new_group", f"{HEAD}rank 0 in new_group making group 1 (ranks [0, 1]), rank 1 in all_reduce "
                  f"(sync_op=True) #1 on {WORLD}; stopping the job"),
])
def test_peers_waiting_in_a_call_one_rank_refused_end_the_job_in_seconds(mode, verdict):
    start = time.monotonic()
    result = launch(2, "refused_on_one_rank.py", mode, env=ENV, timeout=90)
    took = time.monotonic() - start
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert took < ENDS_WITHIN_S < TIMEOUT_S, (took, output)
    assert verdict in output, output
    assert "did not complete within" not in output and "refused_on_one_rank.py OK" not in output, output


def test_a_call_refused_on_one_rank_ends_the_job_even_if_that_rank_then_makes_it():
    """Rank 1 waits in the all_reduce rank 0 refused; rank 0 would make it properly after a
    pause, but a rank's next call cannot be known to match what its peers made (a probe's
    broadcast took the refused call's data): the refusal check ends the job at once."""
    start = time.monotonic()
    result = launch(2, "refused_on_one_rank.py", "retry", env=ENV, timeout=90)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and time.monotonic() - start < ENDS_WITHIN_S, output
    assert (f"pycoll.CollectiveError: rank 0 refused all_reduce #1 on {WORLD} (ValueError: pycoll.distributed."
            f"all_reduce: op='sum' is not a ReduceOp") in output, output
    assert f"and rank(s) [1] made it: {OUT_OF_STEP}" in output, output
    assert "refused_on_one_rank.py OK" not in output, output


# -- the record and the rules (one process) ---------------------------------------------------
@pytest.fixture
def world():
    yield dist.init_parallel_env()
    dist.destroy_process_group()


def test_a_call_refused_before_anything_moved_is_noted_with_its_number_and_error(world):
    x = np.ones(2, np.float32)
    dist.all_reduce(x)  # #1 goes through: nothing noted
    with pytest.raises(ValueError):
        dist.all_reduce(x, op="sum")  # #2
    with pytest.raises(ValueError):
        dist.broadcast(x, src=3)  # #3
    dist.barrier()  # #4
    with pytest.raises(ValueError):  # #5: the root's list, a verdict every rank shares: none waits
        dist.gather(x, [np.zeros(2, np.float32)] * 3, dst=0)
    with pytest.raises(ValueError):
        dist.send(x, dst=0)  # #6: this rank itself
    assert sorted(world.refused) == [2, 3, 6], world.refused
    assert world.refused[3] == ("ValueError: pycoll.distributed.broadcast: src=3 is not a rank of "
                                "world (ranks [0])")


def test_only_the_latest_refusals_are_kept():
    group = Group(0, [0, 1], 0, None, 60.0)
    for seq in range(1, 101):
        group.seq = seq
        group.note_refused(TypeError(f"no {seq}"))
    assert len(group.refused) == 64 and min(group.refused) == 37 and group.refused[100] == "TypeError: no 100"


def test_the_refusal_rule_needs_every_member_and_calls_that_can_never_match():
    group = Group(0, [0, 1, 2], 0, None, 60.0)
    refused = {4: "ValueError: bad"}

    def verdict(*waits):
        return group_verdict(group, 0, {rank: Wait(*wait) for rank, wait in enumerate(waits)}, refused)

    mine = (5, ("barrier", 1))
    assert verdict(mine, (4, ("all_reduce", 1))) is None  # rank 2 told nothing
    assert verdict(mine, (4, ("all_reduce", 1)), (4, ("all_reduce", 1))).startswith(
        "ranks [1, 2] wait in all_reduce (sync_op=True) #4 on world (ranks [0, 1, 2]), which rank 0 refused "
        "(ValueError: bad); rank 0 went on to barrier #5")
    assert verdict(mine, (3, ("all_reduce", 1)), (3, ("all_reduce", 1))) is None  # #3 was not refused
    # the refused call made right: the same collective, which MPI matches with the peers' (a long one)
    assert verdict((5, ("all_reduce", 1)), (4, ("all_reduce", 1)), (4, ("all_reduce", 1))) is None
    # the per-number rule is unchanged: one number, calls that can never match
    assert verdict((4, ("barrier", 1)), (4, ("all_reduce", 1)), (4, ("all_reduce", 1))).startswith(
        "the ranks of world (ranks [0, 1, 2]) wait in different collectives at #4")


def test_a_group_in_the_making_is_a_call_of_its_members_and_no_group_made_in_another_order():
    def wait(key, seq, name, size=2):
        return JobWait(key, size, 7, seq, name, 1, -1, f"g{key}")

    both = {0: wait(5, 0, "new_group"), 1: wait(5, 0, "new_group")}
    assert deadlock_text(both, 2) is None  # both members make it: it completes
    text = deadlock_text({0: wait(5, 0, "new_group"), 1: wait(1, 3, "all_reduce")}, 2)
    assert text == (f"{HEAD[len('pycoll.CollectiveError: '):]}rank 0 in new_group making g5, rank 1 in "
                    "all_reduce (sync_op=True) #3 on g1; stopping the job")  # no hint on group order
