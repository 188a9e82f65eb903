"""A read-only receive buffer is a refusal only its own rank can see: that rank takes part in the
call with a scratch buffer and then raises, so that its peers' results are right and the group's
next call gives every rank the right values (before, the refusing rank raised before the call and
the peers' parts were left queued for the next call, which then handed out wrong values). Real
ranks: tests/ranks/refused_receivers.py, whose modes say what each job covers; the values are
worked out by hand there. Also: all_gather on a rank outside the group raises RuntimeError, as
paddle 3.3.1's does (the ``subgroup`` job)."""
import pytest
from conftest import assert_ok, launch

REFUSALS = {"blocking": {0: 2, 1: 5, 2: 5}, "subgroup": {0: 0, 1: 2, 2: 1},
            "async": {0: 2, 1: 1, 2: 0}, "streams": {0: 3, 1: 2, 2: 1}}


@pytest.mark.parametrize("mode", sorted(REFUSALS))
def test_a_rank_refusing_its_read_only_output_keeps_the_group_in_step(mode):
    result = launch(3, "refused_receivers.py", mode, env={"PYCOLL_TIMEOUT": "20"}, timeout=60)
    assert_ok(result, expect_lines=3)
    for rank, count in REFUSALS[mode].items():  # every refusal was raised on its rank
        assert f"refused_receivers.py OK rank={rank} refusals={count}" in result.stdout, result.stdout
