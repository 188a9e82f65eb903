"""Distributed tensors through shape ops, row-parallel linears and operands split differently in
the eager loop (pycoll.distributed.auto_parallel's propagation and SPMD rules), dtensor_to_local
and the checkpoint keywords save_replicas / aoa_config, on 2 ranks: every value against NumPy on
the whole arrays (tests/ranks/auto_parallel_shapes.py)."""
from conftest import assert_ok, launch


def test_shape_ops_row_parallel_linears_and_mixed_splits_give_whole_values_or_refuse(tmp_path):
    assert_ok(launch(2, "auto_parallel_shapes.py", str(tmp_path / "ckpt"), timeout=120), expect_lines=2)
