"""The ops that need a whole dimension on distributed tensors in the eager loop (cumsum, sort,
topk, std, norms, logsumexp, prod, argmax, split, tile, expand, where, reshapes across the split;
pycoll.distributed.auto_parallel's operand_rules and spmd_rules), on 2 ranks: every value against
NumPy on the whole array with paddle 3.3.1's placements, every gradient against the whole-array
computation's (tests/ranks/auto_parallel_more_ops.py)."""
from conftest import assert_ok, launch


def test_ops_needing_a_whole_dimension_give_whole_values_placements_and_gradients():
    assert_ok(launch(2, "auto_parallel_more_ops.py", timeout=120), expect_lines=2)
