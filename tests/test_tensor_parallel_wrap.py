"""fleet's TensorParallel at wrap (tests/ranks/tensor_parallel_wrap.py, dp_degree=2 x
mp_degree=2): each parameter broadcast once over each of its groups, the replicated weights
ending as global rank 0's."""
from conftest import assert_ok, launch


def test_tensor_parallel_broadcasts_each_group_once_at_wrap():
    assert_ok(launch(4, "tensor_parallel_wrap.py", timeout=90), expect_lines=4)
