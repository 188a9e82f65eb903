"""Deadlocks across groups and point-to-point calls end the job within seconds, long before
PYCOLL_TIMEOUT (60 s in the tests), every rank writing a message naming each rank's call;
correct programs that stall past the notice delay finish. Real ranks
(tests/ranks/stall_deadlocks.py), with PYCOLL_STALL_WARN=1 so that a wait is told after 1 s."""
import re
import time

import pytest
from conftest import RANK_TIMEOUT_S, launch

from pycoll.distributed.job_deadlock import JobWait, deadlock_text

FAST = {"PYCOLL_STALL_WARN": "1"}
ENDS_WITHIN_S = 20.0  # start-up, 1 s to stall, the notices; the timeout would take 60 s
HEAD = "pycoll.CollectiveError: every rank waits in a call that no other rank's call can ever match: "
SAME_RANKS = ("; groups over the same ranks are different groups (ranks pair their groups over the same "
              "ranks in the order each made them, and group ids count each rank's own new_group calls)")
WORLD = "world (ranks [0, 1])"


@pytest.mark.parametrize("mode, calls, hint", [
    ("world_vs_group", f"rank 0 in all_reduce (sync_op=True) #1 on {WORLD}, "
                       "rank 1 in all_reduce (sync_op=True) #1 on group 1 (ranks [0, 1])", SAME_RANKS),
    ("group_order", "rank 0 in all_reduce (sync_op=True) #1 on group 1 (ranks [0, 1]), "
                    "rank 1 in all_reduce (sync_op=True) #1 on group 2 (ranks [0, 1])", SAME_RANKS),
    ("after_a_waited_task", f"rank 0 in all_reduce (sync_op=True) #1 on {WORLD}, "
                            "rank 1 in all_reduce (sync_op=True) #2 on group 1 (ranks [0, 1])", SAME_RANKS),
    ("all_reduce_vs_send", f"rank 0 in all_reduce (sync_op=True) #1 on {WORLD}, "
                           f"rank 1 in send (sync_op=True) #1 to rank 0 on {WORLD}", ""),
    ("send_send", f"rank 0 in send (sync_op=True) #1 to rank 1 on {WORLD}, "
                  f"rank 1 in send (sync_op=True) #1 to rank 0 on {WORLD}", ""),
    ("recv_recv", f"rank 0 in recv (sync_op=True) #1 from rank 1 on {WORLD}, "
                  f"rank 1 in recv (sync_op=True) #1 from rank 0 on {WORLD}", ""),
    ("batch_sends_only", f"rank 0 in send (sync_op=False) #1 to rank 1 on {WORLD}, "
                         f"rank 1 in send (sync_op=False) #1 to rank 0 on {WORLD}", ""),
])
def test_ranks_that_can_never_be_matched_end_the_job_at_once_naming_each_call(mode, calls, hint):
    start = time.monotonic()
    result = launch(2, "stall_deadlocks.py", mode, env=FAST, timeout=90)
    took = time.monotonic() - start
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert took < ENDS_WITHIN_S < float(RANK_TIMEOUT_S), (took, output)
    assert "stall_deadlocks.py OK" not in output, output
    assert output.count(f"{HEAD}{calls}{hint}; stopping the job") == 2, output  # from each rank
    # each rank's line of the script (a send waited for in a batch's task: its wait's line)
    assert len(re.findall(r"; stopping the job; where the ranks wait: rank 0 at stall_deadlocks\.py:\d+ "
                          r"\(in [^)]+\), rank 1 at stall_deadlocks\.py:\d+ \(in [^)]+\)", output)) == 2, output


@pytest.mark.parametrize("mode, calls", [
    ("group_order", "rank 0 in all_reduce (sync_op=True) #1 on group 1 (ranks [0, 1]), "
                    "rank 1 in all_reduce (sync_op=True) #1 on group 2 (ranks [0, 1])" + SAME_RANKS),
    ("all_reduce_vs_send", f"rank 0 in all_reduce (sync_op=True) #1 on {WORLD}, "
                           f"rank 1 in send (sync_op=True) #1 to rank 0 on {WORLD}"),
])
def test_under_pycoll_check_too(mode, calls):
    """A wait in PYCOLL_CHECK's comparison is a wait in its call (a probe: the check turned the
    detection off, and the job waited for PYCOLL_TIMEOUT)."""
    result = launch(2, "stall_deadlocks.py", mode, env={**FAST, "PYCOLL_CHECK": "1"}, timeout=90)
    output = result.stdout + result.stderr
    assert result.returncode != 0 and f"{HEAD}{calls}; stopping the job" in output, output


@pytest.mark.parametrize("nprocs, mode, told, results", [
    (2, "slow_peers", ["[rank 0] pycoll: all_reduce #1 on group 1 (ranks [0, 1]) has waited 1 s",
                       "[rank 0] pycoll: recv #1 on world (ranks [0, 1]) has waited 1 s"],
     {0: [6.0] * 4, 1: [3.0] * 4}),
    (3, "third_rank_slow", ["[rank 0] pycoll: all_reduce #1 on group 1 (ranks [0, 1]) has waited 1 s",
                            "[rank 1] pycoll: all_reduce #1 on group 2 (ranks [1, 2]) has waited 1 s"],
     {0: [6.0] * 4, 1: [6.0] * 4, 2: [5.0] * 4}),
    # rank 0's notice of its recv outlives the recv while it holds the interpreter's lock; rank 1
    # then waits in a recv from it: two recvs, but rank 0 cannot confirm, so nothing is concluded
    (2, "stale_job_notice", ["[rank 0] pycoll: recv #1 on world (ranks [0, 1]) has waited 1 s",
                             "[rank 1] pycoll: recv #2 on world (ranks [0, 1]) has waited 1 s"],
     {0: [2.0] * 4, 1: [3.0] * 4}),
])
def test_correct_programs_stalled_past_the_notice_delay_are_not_stopped(nprocs, mode, told, results):
    result = launch(nprocs, "stall_deadlocks.py", mode, env=FAST, timeout=90)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for line in told:  # the waits lasted past the notice delay, so they were told, and spared
        assert line in output, output
    for rank, x in results.items():
        assert f"stall_deadlocks.py OK rank={rank} x={x}" in output, output


# -- the job-wide rule (no ranks needed) --------------------------------------------------------
def _wait(key, seq, name, peer=-1, size=2, blocking=1):
    return JobWait(key, size, 7, seq, name, blocking, peer, f"g{key}")


def test_a_job_wait_missing_or_a_group_whose_members_all_wait_in_it_proves_nothing():
    assert deadlock_text({0: _wait(1, 1, "all_reduce")}, 2) is None  # rank 1 told nothing
    # all members in the group's collectives, even at other numbers: the per-group rule decides
    assert deadlock_text({0: _wait(1, 1, "all_reduce"), 1: _wait(1, 3, "barrier")}, 2) is None
    three = {0: _wait(1, 1, "all_reduce", size=3), 1: _wait(1, 1, "all_reduce", size=3),
             2: _wait(2, 1, "barrier", size=1)}
    assert deadlock_text(three, 3) is None  # a one-rank group's barrier waits for nobody
    three[2] = _wait(9, 4, "recv", peer=0)
    assert deadlock_text(three, 3) is not None


def test_a_send_and_the_recv_it_matches_prove_nothing_but_other_pairs_do():
    def text(a, b):
        return deadlock_text({0: a, 1: b}, 2)

    assert text(_wait(1, 1, "send", peer=1), _wait(1, 5, "recv", peer=0)) is None
    assert text(_wait(1, 1, "recv", peer=1), _wait(1, 1, "send", peer=0, blocking=0)) is None
    assert text(_wait(1, 1, "send", peer=1), _wait(2, 1, "recv", peer=0)) is not None  # other groups
    assert text(_wait(1, 1, "send", peer=1), _wait(1, 1, "send", peer=0)) is not None
    three = {0: _wait(1, 1, "recv", peer=2, size=3), 1: _wait(1, 1, "send", peer=0, size=3),
             2: _wait(1, 1, "recv", peer=1, size=3)}
    assert deadlock_text(three, 3) == (
        "every rank waits in a call that no other rank's call can ever match: rank 0 in recv "
        "(sync_op=True) #1 from rank 2 on g1, rank 1 in send (sync_op=True) #1 to rank 0 on g1, rank 2 "
        "in recv (sync_op=True) #1 from rank 1 on g1; stopping the job")


def test_groups_are_known_by_their_ranks_and_creation_order_not_by_their_ids():
    """Ids count each rank's own new_group calls; on MPI the groups over one set of ranks pair up
    in the order each rank made them."""
    from pycoll.distributed.group import Group
    from pycoll.distributed.stall_notices import group_key

    def group(gid, ranks):
        return Group(gid, ranks, 0, None, 60.0)

    world, solo = group(0, [0, 1]), group(1, [0])
    a_here, b_here = group(2, [0, 1]), group(3, [0, 1])  # a rank that made group([0]) first
    a_there, b_there = group(1, [0, 1]), group(2, [0, 1])  # a rank that did not
    here, there = [world, solo, a_here, b_here], [world, a_there, b_there]
    assert group_key(a_here, here) == group_key(a_there, there)
    assert group_key(b_here, here) == group_key(b_there, there)
    assert len({group_key(world, here), group_key(a_here, here), group_key(b_here, here)}) == 3
