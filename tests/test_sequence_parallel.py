"""fleet.utils.sequence_parallel_utils' linears and gradient all-reduce hooks. The 2-rank
training against the plain block (paddle's CPU build cannot run model parallelism) is
tests/ranks/sequence_parallel.py; a world of one runs here."""
import numpy as np
import pytest

import pycoll
from conftest import assert_ok, launch
from pycoll.distributed import fleet
from pycoll.distributed.fleet.utils import sequence_parallel_utils as spu

pytestmark = pytest.mark.usefixtures("fresh_fleet")  # conftest: each test starts afresh


def test_two_ranks_train_as_the_plain_block():
    assert_ok(launch(2, "sequence_parallel.py", timeout=120), expect_lines=2)


def test_a_world_of_one_has_a_plain_row_linear_and_no_column_one():
    fleet.init(is_collective=True)
    with pytest.raises(ValueError, match="the model-parallel degree is 1; sequence parallelism needs more"):
        spu.ColumnSequenceParallelLinear(4, 8, gather_output=False)
    row = spu.RowSequenceParallelLinear(4, 3, input_is_parallel=True)
    assert row.weight.shape == [4, 3] and not row.weight.is_distributed
    assert row.bias.numpy().tolist() == [0, 0, 0] and not spu.is_sequence_parallel_parameter(row.bias)
    x = np.random.RandomState(0).uniform(-1, 1, [2, 1, 4]).astype("float32")
    # atol too: an entry near zero (1e-4, from cancellation) differs in its last bits between BLAS paths
    np.testing.assert_allclose(row(pycoll.to_tensor(x)).numpy(), x @ row.weight.numpy(), rtol=1e-6, atol=1e-7)
    assert not spu.is_fused_matmul_bias_supported() and not spu.is_fused_linear_param_grad_add_supported()


def test_hooks_refuse_what_is_not_a_model_or_a_count():
    with pytest.raises(TypeError, match="model must be a pycoll.nn.Layer, got list"):
        spu.register_sequence_parallel_allreduce_hooks([], 1, False)
    with pytest.raises(TypeError, match="accumulation_steps must be an int, got 1.5"):
        spu.register_sequence_parallel_allreduce_hooks(pycoll.nn.Linear(2, 2), 1.5, False)
