"""fleet's model-parallel defaults: after fleet.init the parallel layers use the hcg's
model-parallel group (whole layers when mp_degree is 1), and with mp_degree > 1
fleet.distributed_model returns paddle's TensorParallel. The 2-rank cases are
tests/ranks/fleet_mp_defaults.py's; a world of one runs here."""
import pytest

import pycoll
from conftest import assert_ok, launch
from pycoll.distributed import fleet
from pycoll.distributed.fleet.meta_parallel import ColumnParallelLinear, TensorParallel
from pycoll.parallel.mp_ops import model_parallel_group

pytestmark = pytest.mark.usefixtures("fresh_fleet")  # conftest: each test starts afresh


@pytest.mark.parametrize("case", ["dp", "mp"])
def test_two_ranks_follow_the_plain_model(case):
    assert_ok(launch(2, "fleet_mp_defaults.py", case, timeout=60), expect_lines=2)


def test_a_world_of_one_makes_whole_layers_over_the_hcg_group():
    fleet.init(is_collective=True)
    hcg = fleet.get_hybrid_communicate_group()
    assert model_parallel_group() is hcg.get_model_parallel_group()
    layer = ColumnParallelLinear(6, 8, has_bias=True)
    assert layer.weight.shape == [6, 8] and layer.bias.shape == [8] and layer.group is hcg.get_model_parallel_group()
    assert fleet.distributed_model(layer) is layer


def test_tensor_parallel_refuses_what_is_not_a_layer():
    with pytest.raises(TypeError, match="layers must be a pycoll.nn.Layer, got list"):
        TensorParallel([pycoll.nn.Linear(2, 2)], hcg=None)
