"""Ranks stalled in collectives that can never match end the job within seconds, long before
PYCOLL_TIMEOUT (60 s in the tests), with a message naming each rank's call; ranks that are
only slow, or one call ahead of a slow peer, finish. Real ranks (tests/ranks/stall_mismatch.py),
with PYCOLL_STALL_WARN=1 so that a wait is told to the peers after 1 s."""
import re
import time

import pytest
from conftest import RANK_TIMEOUT_S, launch

from pycoll.distributed.stall_rules import Wait, group_verdict, mismatch_text, never_match

FAST = {"PYCOLL_STALL_WARN": "1"}
ENDS_WITHIN_S = 20.0  # start-up, 1 s to stall, the notices; the timeout would take 60 s
STOPPED = "they can never match (run with PYCOLL_CHECK=1 to catch this before the call); stopping the job"


def ended_early(nprocs, mode):
    start = time.monotonic()
    result = launch(nprocs, "stall_mismatch.py", mode, env=FAST, timeout=90)
    took = time.monotonic() - start
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert took < ENDS_WITHIN_S < float(RANK_TIMEOUT_S), (took, output)
    assert "stall_mismatch.py OK" not in output, output
    return output


@pytest.mark.parametrize("mode, expected", [
    ("barrier_vs_all_reduce", "the ranks of world (ranks [0, 1]) wait in different collectives at #4: "
                              "rank 0 in barrier, rank 1 in all_reduce (sync_op=True); "),
    ("blocking_vs_task", "the ranks of world (ranks [0, 1]) wait in different collectives at #1: "
                         "rank 0 in all_reduce (sync_op=True), rank 1 in all_reduce (sync_op=False); "),
    # it waited for PYCOLL_TIMEOUT (a probe): one call, and MPI never pairs two roots
    ("gather_roots", "the ranks of world (ranks [0, 1]) wait in gather #1 given different roots: rank 0 with "
                     "root 0, rank 1 with root 1; "),
])
def test_two_ranks_in_calls_that_can_never_match_end_the_job_at_once(mode, expected):
    output = ended_early(2, mode)
    assert f"pycoll.CollectiveError: {expected}{STOPPED}" in output, output
    # and the line of the script where each rank waits (read off the waiting thread's stack)
    assert re.search(r"; where the ranks wait: rank 0 at stall_mismatch\.py:\d+ \(in [^)]+\), "
                     r"rank 1 at stall_mismatch\.py:\d+ \(in [^)]+\)", output), output


def test_a_rank_that_made_collectives_its_peers_skipped_is_refused_at_once():
    """A root left its broadcasts at once, so rank 0 waited in barrier #12 and rank 1 in all_reduce
    #9 until the stall notices ended the job; now the ranks compare each call first."""
    output = ended_early(2, "extra_broadcasts")
    assert ("ValueError: pycoll.distributed.all_reduce: the ranks of world (ranks [0, 1]) are in different collectives "
            "(rank 0: broadcast; rank 1: all_reduce); every rank must make the same calls in the same order; nothing "
            "was sent") in output, output


def test_a_rank_whose_extra_collectives_are_tasks_is_named_by_the_stall_notices():
    """Rank 0's extra broadcasts are non-blocking (not compared past the group's first 8): as
    their root it completes them alone, so it waits in barrier #12 and rank 1 in all_reduce #9
    until the counts of collectives made (not the numbers, which count point-to-point calls on
    the ranks making them) end the job."""
    output = ended_early(2, "extra_broadcasts_task")
    assert ("pycoll.CollectiveError: the ranks of world (ranks [0, 1]) wait in collectives after making different "
            "numbers of collectives on it: rank 0 in barrier #12 (its 12th collective on the group), rank 1 in "
            f"all_reduce (sync_op=True) #9 (its 9th collective on the group); a rank made a collective its peers did "
            f"not, or skipped one: {STOPPED}") in output, output


def test_a_mismatch_on_a_sub_group_is_told_to_its_members_only():
    output = ended_early(3, "subgroup")
    assert ("pycoll.CollectiveError: the ranks of group 1 (ranks [1, 2]) wait in different collectives "
            f"at #2: rank 1 in barrier, rank 2 in all_gather (sync_op=True); {STOPPED}") in output, output
    assert "the ranks of world" not in output, output


def test_a_slow_rank_joining_the_same_call_is_not_stopped():
    result = launch(2, "stall_mismatch.py", "slow", env=FAST, timeout=90)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "all_reduce #1 on world (ranks [0, 1]) has waited 1 s" in output, output  # told, and spared
    for rank in (0, 1):
        assert f"stall_mismatch.py OK rank={rank} x=[3.0, 3.0, 3.0, 3.0]" in output, output


def test_two_ranks_stalled_at_different_numbers_prove_nothing_while_a_member_is_not_stalled():
    """Point-to-point calls are numbered on the ranks making them only: the number is no position
    in the program, and only every member stalled proves a mismatch."""
    result = launch(3, "stall_mismatch.py", "p2p_shift", env=FAST, timeout=90)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "[rank 0] pycoll: gather #2 on world (ranks [0, 1, 2]) has waited 1 s" in output, output
    assert "[rank 1] pycoll: gather #1 on world (ranks [0, 1, 2]) has waited 1 s" in output, output
    # rank 2 receives rank 0's [1]*4 (the gather changes no x): the all_reduce gives 1 + 2 + 1
    for rank in (0, 1, 2):
        assert f"stall_mismatch.py OK rank={rank} x=[4.0, 4.0, 4.0, 4.0]" in output, output


def test_a_notice_its_rank_could_not_withdraw_proves_nothing_without_its_confirmation():
    """A rank that leaves a stalled call and holds the interpreter's lock in one long C call keeps
    its notice out (its watchdog thread cannot run); with point-to-point numbering a peer's later
    collective carries the same number. A probe's correct program was ended so; now the verdict
    needs every member to confirm its wait, which a busy rank cannot."""
    result = launch(2, "stall_mismatch.py", "stale_notice", env=FAST, timeout=90)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "[rank 0] pycoll: all_reduce #2 on world (ranks [0, 1]) has waited" in output, output
    assert "[rank 1] pycoll: barrier #2 on world (ranks [0, 1]) has waited" in output, output
    for rank in (0, 1):
        assert f"stall_mismatch.py OK rank={rank} x=[3.0, 3.0, 3.0, 3.0]" in output, output


# -- which calls can never match (no ranks needed) ---------------------------------------------
@pytest.mark.parametrize("a, b, never", [
    (("barrier", 1), ("all_reduce", 1), True),
    (("all_reduce", 1), ("all_reduce", 0), True),  # MPI: blocking against a task
    (("all_reduce", 0), ("all_reduce", 0), False),
    (("alltoall", 1), ("alltoall_single", 1), False),  # one MPI Alltoallv underneath
    (("scatter", 1), ("scatter", 0), False),  # the blocking verdict before a task's scatter
    (("alltoall", 0), ("alltoall", 1), False),  # the blocking size exchange before the task
    (("all_reduce", -1), ("barrier", -1), True),  # NCCL
    (("all_reduce", -1), ("all_reduce", -1), False),
    (("broadcast", -1), ("scatter", -1), False),  # NCCL: the verdict broadcast before a scatter
    (("broadcast", 1), ("scatter", 1), True),  # MPI watches the verdict under scatter's name
    (("alltoall", -1), ("alltoallv", -1), False),  # NCCL: alltoall's data, under its number
])
def test_never_match(a, b, never):
    assert never_match(a, b) is never and never_match(b, a) is never


def test_the_message_groups_the_ranks_by_call_and_is_none_when_all_agree():
    from pycoll.distributed.group import Group

    group = Group(0, [0, 1, 2, 3], 0, None, 60.0)
    calls = {3: ("barrier", 1), 0: ("all_reduce", 1), 2: ("all_reduce", 1), 1: ("all_reduce", 1)}
    assert mismatch_text(group, 7, calls) == (
        "the ranks of world (ranks [0, 1, 2, 3]) wait in different collectives at #7: ranks [0, 1, 2] "
        f"in all_reduce (sync_op=True), rank 3 in barrier; {STOPPED}")
    assert mismatch_text(group, 7, {r: ("all_reduce", 0) for r in range(4)}) is None
    assert mismatch_text(group, 7, {0: ("scatter", 1), 1: ("scatter", 0)}) is None


def test_the_counts_of_collectives_made_decide_on_mpi_only_and_where_known():
    from pycoll.distributed.group import Group

    group = Group(0, [0, 1], 0, None, 60.0)

    def verdict(*waits):
        return group_verdict(group, 0, dict(enumerate(waits)), {})

    counts = "wait in collectives after making different numbers of collectives on it: "
    assert counts + "rank 0 in barrier #4 (its 2nd collective" in verdict(
        Wait(4, ("barrier", 1), 2), Wait(2, ("all_reduce", 1), 1))
    assert verdict(Wait(4, ("barrier", -1), 2), Wait(2, ("all_reduce", -1), 1)) is None  # NCCL: no proof
    assert verdict(Wait(4, ("barrier", 1)), Wait(2, ("all_reduce", 1))) is None  # counts unknown
    # one count (point-to-point calls shift the numbers): the calls pair, and match or not
    assert verdict(Wait(4, ("all_reduce", 1), 2), Wait(3, ("all_reduce", 1), 2)) is None
    assert verdict(Wait(4, ("barrier", 1), 2), Wait(3, ("all_reduce", 1), 2)).startswith(
        "the ranks of world (ranks [0, 1]) wait in different collectives, each its 2nd on the group: "
        "rank 0 in barrier, rank 1 in all_reduce (sync_op=True); ")
    assert "(its 11th collective" in verdict(Wait(12, ("barrier", 1), 11), Wait(3, ("barrier", 1), 3))


def test_one_rooted_call_with_different_roots_never_matches_where_every_root_is_known():
    from pycoll.distributed.group import Group

    group = Group(0, [0, 1, 2], 0, None, 60.0)

    def verdict(*waits):
        return group_verdict(group, 0, dict(enumerate(waits)), {})

    assert verdict(*(Wait(3, ("broadcast", 1), 3, r) for r in (0, 0, 2))).startswith(
        "the ranks of world (ranks [0, 1, 2]) wait in broadcast #3 given different roots: rank 0 with root 0, "
        "rank 1 with root 0, rank 2 with root 2; ")
    assert verdict(*(Wait(3, ("broadcast", 1), 3, 1) for _ in range(3))) is None  # one root: a slow transfer
    assert verdict(Wait(3, ("broadcast", 1), 3, 0), Wait(3, ("broadcast", 1), 3, -1),
                   Wait(3, ("broadcast", 1), 3, 2)) is None  # a root not known (too old a call)
    assert verdict(*(Wait(3, ("all_reduce", 1), 3, r) for r in range(3))) is None  # no root
