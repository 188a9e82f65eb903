"""pycoll.distributed.fleet in one process (a world of one): the strategy's typed fields, init's
checks, the worker queries and the optimizer's refusals; the 4-rank dp x mp job through fleet is
tests/test_model_parallel.py's (tests/ranks/mp_hybrid.py fleet)."""
import pytest

import pycoll
import pycoll.distributed as dist
from pycoll.distributed import fleet
from pycoll.distributed.fleet import fleet as fleet_state
from pycoll.parallel.mp_ops import model_parallel_group, set_model_parallel_group


@pytest.fixture(autouse=True)
def fresh_fleet():
    yield
    fleet_state._state.clear()
    set_model_parallel_group(None)
    dist.destroy_process_group()


def test_the_strategy_refuses_misspelt_fields_and_keys():
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = {"mp_degree": 1}
    assert strategy.hybrid_configs["dp_degree"] == 1 and strategy.fuse_grad_size_in_MB == 32
    with pytest.raises(AttributeError, match="no field 'hybrid_config'"):
        strategy.hybrid_config = {"dp_degree": 2}
    with pytest.raises(AttributeError, match="no key 'mp_degre'"):
        strategy.hybrid_configs = {"mp_degre": 2}
    with pytest.raises(AttributeError, match="no field 'amp_configs'"):
        strategy.amp_configs
    with pytest.raises(TypeError, match="gradient_merge must be a bool"):
        strategy.gradient_merge = "yes"


@pytest.mark.parametrize("kwargs, words", [
    ({}, "collective mode only"),
    ({"is_collective": True, "strategy": {"dp_degree": 1}}, "strategy must be a DistributedStrategy"),
])
def test_init_wants_collective_mode_and_a_strategy(kwargs, words):
    with pytest.raises((ValueError, TypeError), match=words):
        fleet.init(**kwargs)


@pytest.mark.parametrize("configs, words", [
    ({"mp_degree": 2}, "dp_degree=1 x mp_degree=2 = 2, but the job has 1 ranks"),
    ({"pp_degree": 2}, "pp_degree=2: pycoll has no pp parallelism yet"),
])
def test_degrees_must_fit_the_world(configs, words):
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = configs
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        fleet.init(is_collective=True, strategy=strategy)


def test_a_world_of_one_through_fleet():
    with pytest.raises(RuntimeError, match="call fleet.init"):
        fleet.get_hybrid_communicate_group()
    fleet.init(role_maker=fleet.PaddleCloudRoleMaker(is_collective=True))
    assert (fleet.worker_index(), fleet.worker_num(), fleet.is_first_worker(), fleet.local_rank()) == (0, 1, True, 0)
    fleet.barrier_worker()
    hcg = fleet.get_hybrid_communicate_group()
    assert hcg.get_data_parallel_world_size() == 1 and hcg.get_model_parallel_group().ranks == [0]
    assert model_parallel_group() is None, "no model parallelism: layers keep the world"
    model = pycoll.nn.Linear(2, 2)
    assert fleet.distributed_model(model) is model
    opt = pycoll.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    assert fleet.distributed_optimizer(opt) is opt
    merging = fleet.DistributedStrategy()
    merging.gradient_merge = True
    with pytest.raises(ValueError, match="gradient_merge=True is not supported by pycoll yet"):
        fleet.distributed_optimizer(opt, merging)
    from pycoll.distributed.fleet.utils.hybrid_parallel_util import fused_allreduce_gradients

    assert fused_allreduce_gradients is dist.fused_allreduce_gradients
