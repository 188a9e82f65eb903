"""Arguments the parallel wrappers refuse at once, by name, and (tests/ranks/wrap_checks.py, 2
ranks) models that differ between the ranks, refused on every rank naming the wrapping API."""
import logging

import pytest

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from conftest import assert_ok, launch
from pycoll.distributed import fleet
from pycoll.distributed.fleet import collective_mode
from pycoll.distributed.sharding import group_sharded_parallel


def test_data_parallel_find_unused_parameters_must_be_a_bool():
    with pytest.raises(TypeError, match="find_unused_parameters must be a bool, got 'yes'"):
        pycoll.DataParallel(nn.Linear(2, 2), find_unused_parameters="yes")


def test_group_sharded_parallel_scaler_must_be_a_grad_scaler():
    model = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="scaler must be a pycoll.amp.GradScaler or None, got 1024.0"):
        group_sharded_parallel(model, pycoll.optimizer.AdamW(parameters=model.parameters()), "os_g", scaler=1024.0)


def test_shard_dataloader_names_the_meshes_it_got():
    loader = pycoll.io.DataLoader(list(range(4)), batch_size=2)
    with pytest.raises(TypeError, match="non-empty list of them, got None"):
        dist.shard_dataloader(loader, meshes=None)


@pytest.mark.parametrize("config, error, words", [
    ({"mp_config": {"parallelize_plam": {}}}, ValueError,
     ["config['mp_config'] has unknown keys ['parallelize_plam']", "parallelize_plan"]),
    ({"dp_config": {"sharding_levle": 1}}, ValueError, ["config['dp_config']", "['sharding_levle']", "sharding_level"]),
    ({"mp_config": ["parallelize_plan"]}, TypeError, ["config['mp_config'] must be a dict or None, got list"]),
])
def test_parallelize_refuses_unknown_keys_inside_a_section(config, error, words):
    model = nn.Linear(2, 2)
    mesh = dist.ProcessMesh([0], dim_names=["mp"])
    with pytest.raises(error) as info:
        dist.parallelize(model, pycoll.optimizer.SGD(parameters=model.parameters()), mesh, config)
    assert all(w in str(info.value) for w in words), info.value


def test_parallelize_takes_paddles_section_keys():
    model = nn.Linear(2, 2)
    config = {"dp_config": {"sharding_level": 0, "sharding_mesh_dim": "dp", "offload": False, "exclude_layer": None},
              "mp_config": {"parallelize_plan": {}}}
    dist.parallelize(model, pycoll.optimizer.SGD(parameters=model.parameters()), dist.ProcessMesh([0], dim_names=["mp"]),
                     config)


def test_a_second_fleet_init_keeps_the_first_groups_and_takes_the_new_strategy(fresh_fleet, caplog):
    fleet.init(is_collective=True)
    hcg = fleet.get_hybrid_communicate_group()
    second = fleet.DistributedStrategy()
    second.hybrid_configs = {"mp_degree": 2}  # one rank: building it would fail the product check
    with caplog.at_level(logging.WARNING, logger="pycoll"):
        fleet.init(is_collective=True, strategy=second)
    assert fleet.get_hybrid_communicate_group() is hcg and hcg.get_model_parallel_world_size() == 1
    assert collective_mode._state["strategy"] is second  # paddle's: the strategy is replaced
    assert any("hybrid parallel environment has been initialized" in r.getMessage() for r in caplog.records)


def test_on_two_ranks_models_that_differ_are_refused_on_every_rank_naming_the_api():
    assert_ok(launch(2, "wrap_checks.py", timeout=120), expect_lines=2)
