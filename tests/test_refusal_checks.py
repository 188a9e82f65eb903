"""A collective refused on one rank only ends the job at the refusal, naming it, before that rank
can take the data its peers sent for the refused call (pycoll.distributed.refusal_checks; a probe
found broadcast, scatter and reduce returning another call's values with exit status 0); refused on
every rank, the job goes on. Real ranks: tests/ranks/refusal_checks.py."""
import pytest
from conftest import launch

WORLD = "world (ranks [0, 1])"
OUT_OF_STEP = ("the ranks' calls on the group are out of step, and their next calls would exchange the wrong data; "
               "give every rank the same arguments (PYCOLL_CHECK=1 compares them before each call); stopping the job")


@pytest.mark.parametrize("mode, refusal", [
    ("broadcast", f"rank 1 refused broadcast #1 on {WORLD} (ValueError: pycoll.distributed.broadcast: src=5 is not "
                  f"a rank of {WORLD}), and rank(s) [0] "),  # made it, or (done already) left the job
    ("reduce", f"rank 0 refused reduce #1 on {WORLD} (ValueError: pycoll.distributed.reduce: op='sum' is not a "
               f"ReduceOp"),
    ("loop", f"rank 1 refused all_reduce #1 on {WORLD} (ValueError: pycoll.distributed.all_reduce: op='sum' is not "
             f"a ReduceOp"),
])
def test_a_call_refused_on_one_rank_ends_the_job_before_a_wrong_value(mode, refusal):
    result = launch(2, "refusal_checks.py", mode, env={"PYCOLL_TIMEOUT": "30"}, timeout=60)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert f"pycoll.CollectiveError: {refusal}" in output and OUT_OF_STEP in output, output
    refusing_rank = refusal.split()[1]
    assert f"VALUE rank={refusing_rank}" not in output, output  # it took no value after its refusal
    assert f"refusal_checks.py OK rank={refusing_rank}" not in output, output


def test_calls_refused_on_every_rank_leave_the_job_going():
    result = launch(3, "refusal_checks.py", "every_rank", env={"PYCOLL_TIMEOUT": "30"}, timeout=60)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    for rank in (1, 2):  # the group [2, 1] sums 2 + 3; then the world 1 + 5 + 5
        assert f"refusal_checks.py VALUE rank={rank} [5.0, 5.0]" in output, output
    for rank in range(3):
        assert f"refusal_checks.py VALUE rank={rank} [11.0, 11.0]" in output, output
        assert f"refusal_checks.py OK rank={rank}" in output, output
