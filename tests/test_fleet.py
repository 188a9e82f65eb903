"""pycoll.distributed.fleet in one process (a world of one): the strategy's typed fields, init's
checks, the worker queries and the optimizer's refusals; the 4-rank dp x mp job through fleet is
tests/test_model_parallel.py's (tests/ranks/mp_hybrid.py fleet); fleet.util runs on 3 ranks."""
import subprocess
import sys

import pytest

import pycoll
import pycoll.distributed as dist
from conftest import assert_ok, launch
from pycoll.distributed import fleet
from pycoll.parallel.mp_ops import model_parallel_group

pytestmark = pytest.mark.usefixtures("fresh_fleet")  # conftest: each test starts afresh


def test_the_strategy_refuses_misspelt_fields_and_keys():
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = {"mp_degree": 1}
    assert strategy.hybrid_configs["dp_degree"] == -1 and strategy.fuse_grad_size_in_MB == 32  # paddle's defaults
    with pytest.raises(AttributeError, match="no field 'hybrid_config'"):
        strategy.hybrid_config = {"dp_degree": 2}
    with pytest.raises(AttributeError, match="no key 'mp_degre'"):
        strategy.hybrid_configs = {"mp_degre": 2}
    with pytest.raises(AttributeError, match="no field 'amp_config'"):
        strategy.amp_config
    with pytest.raises(TypeError, match="gradient_merge must be a bool"):
        strategy.gradient_merge = "yes"
    # a config's keys too, when set, as paddle's protobuf refuses them (not later, in fleet.init)
    with pytest.raises(TypeError, match=r"pipeline_configs\['micro_batch_size'\] must be an int, got '2'"):
        strategy.pipeline_configs = {"micro_batch_size": "2"}
    with pytest.raises(TypeError, match=r"pipeline_configs\['accumulate_steps'\] must be an int, got 2.5"):
        strategy.pipeline_configs = {"accumulate_steps": 2.5}
    with pytest.raises(TypeError, match=r"tensor_parallel_configs\['tensor_init_seed'\] must be an int"):
        strategy.tensor_parallel_configs = {"tensor_init_seed": "1"}
    assert strategy.pipeline_configs["micro_batch_size"] == 1  # nothing of a refused dict was taken
    strategy.amp_configs = {"init_loss_scaling": 1024}  # an int for a float is taken, as a float
    assert strategy.amp_configs["init_loss_scaling"] == 1024.0


def test_paddles_other_strategy_fields_are_kept_and_said_once(caplog):
    from pycoll.distributed.fleet import strategy as strategy_module
    strategy_module._said.clear()
    strategy = fleet.DistributedStrategy()
    assert strategy.lamb_configs["lamb_weight_decay"] == 0.01 and strategy.recompute is False
    with caplog.at_level("WARNING", logger="pycoll"):
        strategy.lamb = True
        strategy.lamb_configs = {"lamb_weight_decay": 0.02}
        strategy.lamb = True
        strategy.nccl_comm_num = 1  # its default: nothing to say
        strategy.amp = True  # read by fleet.distributed_model: not a kept setting
    said = [r.getMessage() for r in caplog.records if "keeps this setting" in r.getMessage()]
    assert len(said) == 2 and "DistributedStrategy.lamb:" in said[0] and "lamb_configs" in said[1], said
    assert strategy.lamb and strategy.lamb_configs["lamb_weight_decay"] == 0.02
    # the parameter-server fields of paddle's docstring examples read back as set
    strategy.a_sync_configs = {"k_steps": 1024, "send_queue_size": 32}
    strategy.trainer_desc_configs = {"dump_fields_path": "./dump_data", "dump_fields": ["xxx", "yyy"]}
    strategy.fs_client_param = {"uri": "xxx", "user": "xxx", "passwd": "xxx"}
    strategy.adam_d2sum = strategy.auto_search = strategy._calc_comm_same_stream = True
    assert (strategy.a_sync_configs["k_steps"], strategy.a_sync_configs["launch_barrier"]) == (1024, True)
    assert strategy.trainer_desc_configs["dump_fields"] == ["xxx", "yyy"] and strategy.fs_client_param["uri"] == "xxx"
    assert strategy.adam_d2sum and strategy.auto_search and strategy._calc_comm_same_stream
    with pytest.raises(AttributeError, match="amp_configs has no key 'init_scaling'"):
        strategy.amp_configs = {"init_scaling": 2.0}
    with pytest.raises(AssertionError, match="hybrid_configs has no key 'dp_degre'"):  # paddle's exception
        strategy.hybrid_configs = {"dp_degre": 2}
    with pytest.raises(TypeError, match="recompute must be a bool"):
        strategy.recompute = "yes"
    strategy.hybrid_configs = {"order": ["dp", "pp", "sharding", "sep", "mp"]}
    strategy.check_axis_order()
    strategy.hybrid_configs = {"order": ["mp", "pp", "sharding", "sep", "dp"]}
    strategy.check_axis_order()  # any order of the five axes: the ranks are laid out in it
    strategy.hybrid_configs = {"order": ["dp", "pp", "sharding", "sep", "cp", "mp"]}  # paddle's default
    strategy.check_axis_order()
    strategy.hybrid_configs = {"order": ["mp", "pp", "sharding", "dp"]}
    with pytest.raises(ValueError, match="must name each of"):
        strategy.check_axis_order()


def test_init_refuses_a_parameter_server_job_and_a_strategy_of_another_type(monkeypatch):
    with pytest.raises(TypeError, match="strategy must be a DistributedStrategy"):
        fleet.init(is_collective=True, strategy={"dp_degree": 1})
    monkeypatch.setenv("TRAINING_ROLE", "PSERVER")
    with pytest.raises(ValueError, match="parameter-server job.*is_collective=True"):
        fleet.init()


def test_init_without_arguments_is_collective_mode_as_in_paddles_dygraph():
    fleet.init(log_level="DEBUG")  # paddle's documented call
    assert fleet.worker_num() == 1 and fleet.get_hybrid_communicate_group().get_data_parallel_world_size() == 1
    import logging

    assert logging.getLogger("pycoll").level == logging.DEBUG
    logging.getLogger("pycoll").setLevel(logging.WARNING)


@pytest.mark.parametrize("configs, words", [
    ({"mp_degree": 2}, "pp_degree=1 x sharding_degree=1 x sep_degree=1 x mp_degree=2 = 2 does not divide the job's "
                       "1 ranks"),
    ({"sep_degree": 2}, "sep_degree=2 x mp_degree=1 = 2 does not divide the job's 1 ranks"),
    ({"dp_degree": 1, "pp_degree": 2}, "dp_degree=1 x pp_degree=2 x sharding_degree=1 x sep_degree=1 x mp_degree=1 "
                                       "= 2, but the job has 1 ranks"),
    ({"cp_degree": 2}, "cp_degree=2: pycoll has no context parallelism (not built)"),
    ({"sep_degree": 2, "sharding_degree": 2}, "sep_degree=2 with sharding_degree=2: pycoll's sep parallelism runs "
                                              "beside dp_degree and mp_degree only"),
    ({"pp_degree": 2, "sharding_degree": 2}, "pp_degree=2 with sharding_degree=2: pycoll's pipeline does not shard"),
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
    assert (fleet.worker_index(), fleet.worker_num(), fleet.is_first_worker(), fleet.local_rank()) == (0, 1, True, "0")
    fleet.barrier_worker()
    hcg = fleet.get_hybrid_communicate_group()
    assert hcg.get_data_parallel_world_size() == 1 and hcg.get_model_parallel_group().ranks == [0]
    assert model_parallel_group() is hcg.get_model_parallel_group(), "layers: the mp group, of one rank"
    model = pycoll.nn.Linear(2, 2)
    assert fleet.distributed_model(model) is model
    opt = pycoll.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    assert fleet.distributed_optimizer(opt) is opt
    for wrap, wrong, words in [(fleet.distributed_optimizer, 3, "optimizer must be a pycoll optimizer, got int"),
                               (fleet.distributed_optimizer, model, "optimizer must be a pycoll optimizer, got Linear"),
                               (fleet.distributed_scaler, opt, "scaler must be a pycoll.amp.GradScaler, got SGD")]:
        with pytest.raises(TypeError, match=words):
            wrap(wrong)
    from pycoll.distributed.fleet.utils.hybrid_parallel_util import fused_allreduce_gradients

    assert fused_allreduce_gradients is dist.fused_allreduce_gradients


def test_a_sharding_stage_outside_1_2_3_is_refused():
    strategy = fleet.DistributedStrategy()
    strategy.sharding_configs = {"stage": 4}
    with pytest.raises(ValueError, match="sharding_configs stage=4; it must be 1, 2 or 3"):
        fleet.init(is_collective=True, strategy=strategy)


def test_gradient_merge_updates_every_k_steps_with_the_average_of_their_gradients():
    strategy = fleet.DistributedStrategy()
    strategy.gradient_merge = True
    strategy.gradient_merge_configs = {"k_steps": 3}
    fleet.init(is_collective=True, strategy=strategy)
    weight = pycoll.zeros([2])
    weight.stop_gradient = False
    weight.name = "w"
    opt = fleet.distributed_optimizer(pycoll.optimizer.SGD(learning_rate=1.0, parameters=[weight]))
    seen = []
    for step in range(6):
        (weight * pycoll.to_tensor([1.0, float(step)])).sum().backward()
        opt.step()
        opt.clear_grad()
        seen.append(weight.numpy().tolist())
    # updates after steps 3 and 6, by the mean gradient of their three steps: [1, 1] then [1, 4]
    assert seen == [[0, 0], [0, 0], [-1, -1], [-1, -1], [-1, -1], [-2, -5]]
    strategy.gradient_merge_configs = {"k_steps": 0}
    with pytest.raises(ValueError, match="k_steps=0"):
        fleet.distributed_optimizer(opt, strategy)


def test_the_model_parallel_layers_are_also_at_paddle_s_fleet_meta_parallel_path():
    from pycoll.distributed import fleet
    from pycoll.distributed.fleet.meta_parallel import VocabParallelEmbedding

    assert fleet.meta_parallel.ColumnParallelLinear is dist.ColumnParallelLinear
    assert fleet.meta_parallel.RowParallelLinear is dist.RowParallelLinear
    assert VocabParallelEmbedding is dist.VocabParallelEmbedding
    # paddle's parallel_layers is an attribute once paddle is imported (a fresh process: no test imported it first)
    subprocess.run([sys.executable, "-c", "import pycoll; pycoll.distributed.fleet.meta_parallel.parallel_layers."
                    "mp_layers.RowParallelLinear"], check=True, timeout=60)


def test_paddle_s_mpu_module_paths_hold_pycoll_s_own_functions():
    # PaddleNLP imports these: fleet.layers.mpu.{mp_ops,mp_layers,random} (paddle 3's home of
    # _c_identity / _c_concat; pycoll.distributed.collective, a layer below, does not name them)
    import pycoll.parallel.mp_ops as ops
    from pycoll.distributed.fleet.layers.mpu import mp_layers, mp_ops, random
    from pycoll.distributed.fleet.layers.mpu.mp_ops import _c_concat, _c_identity

    for name in ("_c_identity", "_c_concat", "_c_split", "_mp_allreduce", "_c_softmax_with_cross_entropy"):
        assert getattr(mp_ops, name) is getattr(ops, name), name
    assert (_c_identity, _c_concat) == (ops._c_identity, ops._c_concat)
    assert mp_ops.split is dist.split and mp_layers.RowParallelLinear is dist.RowParallelLinear
    assert random.get_rng_state_tracker is fleet.meta_parallel.get_rng_state_tracker
    x = pycoll.ones([2])  # paddle's positional order: (tensor, op, group, use_calc_stream, ...)
    assert mp_ops._mp_allreduce(x, dist.ReduceOp.SUM, None, True, True, False) is x  # one rank: itself
    assert mp_ops._mp_allreduce(tensor=x) is x and mp_ops._c_identity(tensor=x) is x  # paddle's keyword
    with pytest.raises(ValueError, match="only ReduceOp.SUM"):
        mp_ops._mp_allreduce(x, op=dist.ReduceOp.MAX)


def test_the_default_topology_has_paddle_s_six_axes():
    fleet.init(is_collective=True)
    hcg = fleet.get_hybrid_communicate_group()
    assert hcg.topology().get_hybrid_group_names() == ["data", "pipe", "sharding", "sep", "context", "model"]
    assert hcg.get_check_parallel_group().ranks == [0]
    with pytest.raises(RuntimeError, match="sharding_degree is 1, so there is no sharding check group"):
        hcg.get_check_parallel_group(sharding=True)


def test_fleet_util_shards_files_reduces_and_gathers_over_the_workers():
    result = launch(3, "fleet_util.py")
    assert_ok(result, expect_lines=3)
    assert result.stdout.count("printed by rank 2") == 1, result.stdout
    assert result.stdout.count("declared worker 0") == 3, result.stdout  # every rank declares itself worker 0


def test_a_split_weight_keeps_its_param_attr_and_need_clip_under_model_parallelism():
    assert_ok(launch(2, "mp_param_attrs.py", timeout=120), expect_lines=2)


@pytest.mark.parametrize("nprocs, mp", [(2, 1), (4, 1), (4, 2)])  # sep 2 alone; x dp 2; x mp 2
def test_sep_parallelism_sums_over_sep_averages_over_data_and_trains_like_one_process(nprocs, mp):
    assert_ok(launch(nprocs, "fleet_sep.py", str(mp), timeout=120), expect_lines=nprocs)
