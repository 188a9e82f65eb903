"""More of paddle 3.3.1's fleet: gradient merge as an optimizer a script (and a GradScaler) can
use, hybrid_configs' keys and nested configs, the degrees pycoll refuses, the log level, LocalFS,
the Fleet object and the meta-optimizer names; on 2 ranks, the optimizer before the model under
sharding, HybridParallelOptimizer, strategy.amp (tests/ranks/fleet_order.py) and all_gather into
a tensor, the worker queries and hybrid_parallel_util (tests/ranks/fleet_api.py)."""
import logging
import types

import numpy as np
import importlib

import pytest

import pycoll
import pycoll.amp.grad_scaler as grad_scaler
import pycoll.distributed as dist
from conftest import assert_ok, launch, launch_source

precision = importlib.import_module("pycoll.amp.auto_cast")  # the module (pycoll.amp.auto_cast is the class)
from pycoll.distributed import fleet
from pycoll.distributed.fleet import collective_mode
from pycoll.distributed.fleet.utils import hybrid_parallel_util as hpu
from pycoll.parallel import fused

pytestmark = pytest.mark.usefixtures("fresh_fleet")  # conftest: each test starts afresh


def merging(k_steps, avg=True):
    strategy = fleet.DistributedStrategy()
    strategy.gradient_merge = True
    strategy.gradient_merge_configs = {"k_steps": k_steps, "avg": avg}
    fleet.init(is_collective=True, strategy=strategy)
    weight = pycoll.zeros([2])
    weight.stop_gradient = False
    weight.name = "w"
    return weight, fleet.distributed_optimizer(pycoll.optimizer.SGD(learning_rate=1.0, parameters=[weight]))


def test_gradient_merge_is_the_inner_optimizer_to_a_script_and_minimizes_as_paddle(caplog):
    collective_mode._said_merging.clear()
    with caplog.at_level("WARNING", logger="pycoll"):
        weight, opt = merging(2)
        merging(3)
    said = [r.getMessage() for r in caplog.records if "gradient_merge" in r.getMessage()]
    assert len(said) == 1 and "paddle's dygraph fleet ignores the setting" in said[0], said
    assert opt._learning_rate == 1.0 and opt._parameter_list == [weight] and opt.get_lr() == 1.0
    seen = []
    for step in range(4):
        (weight * pycoll.to_tensor([1.0, float(step)])).sum().backward()
        ops, pairs = opt.minimize(None)  # paddle's dygraph minimize: applies what backward left
        assert ops == [] and [p is weight for p, _ in pairs] == [True]
        opt.clear_gradients()
        seen.append(weight.numpy().tolist())
    assert seen == [[0, 0], [-1, -0.5], [-1, -0.5], [-2, -3]]  # the mean gradient of each pair of steps


def test_gradient_merge_with_a_grad_scaler_unscales_each_window_once(monkeypatch):
    monkeypatch.setattr(grad_scaler, "on_accelerator", lambda: True)  # a GPU place: the scaler acts
    weight, opt = merging(2)
    scaler = fleet.distributed_scaler(pycoll.amp.GradScaler(init_loss_scaling=8.0, use_dynamic_loss_scaling=False))
    seen = []
    for step, factor in enumerate([1.0, 3.0, float("inf"), 1.0, 5.0, 7.0]):
        scaler.scale((weight * pycoll.to_tensor([factor, 1.0])).sum()).backward()
        scaler.step(opt)
        scaler.update()
        opt.clear_grad()
        seen.append(weight.numpy().tolist())
    # windows: mean of [1,1] and [3,1] applied; [inf,1] + [1,1] skipped and dropped; mean of [5,1] and [7,1]
    assert seen == [[0, 0], [-2, -1], [-2, -1], [-2, -1], [-2, -1], [-8, -2]], seen


def test_hybrid_configs_take_paddles_keys_and_read_as_paddles_messages(tmp_path):
    strategy = fleet.DistributedStrategy()
    hybrid = strategy.hybrid_configs
    # paddle 3.3.1's defaults (its print of hybrid_configs and sharding_configs); no "order" key there
    degrees = ("dp_degree", "ep_degree", "cp_degree", "moe_sharding_degree")
    assert [hybrid[key] for key in degrees] == [-1, 1, 1, 1]
    assert "order" not in hybrid and strategy.hybrid_parallel_order == ["dp", "pp", "sharding", "sep", "cp", "mp"]
    assert strategy.sharding_configs["sharding_degree"] == 8
    assert hybrid["pp_configs"].delay_scale_loss is False and hybrid["pp_configs"]["use_batch_p2p_comm"] is True
    assert hybrid["mp_configs"].nccl_config.commName == ""
    strategy.hybrid_configs = {"dp_degree": 1, "ep_degree": 1, "cp_degree": 1, "moe_sharding_degree": 1,
                               "order": ["dp", "pp", "sharding", "sep", "mp"],
                               "pp_configs": {"delay_scale_loss": True},
                               "mp_configs": {"sync_param_name": ["fc"], "mp_async_allreduce": True}}
    assert strategy.hybrid_configs["pp_configs"].delay_scale_loss is True
    assert strategy.hybrid_configs["mp_configs"].mp_async_allreduce is True and strategy.sync_param_name == ["fc"]
    assert strategy.hybrid_parallel_order == ["dp", "pp", "sharding", "sep", "mp"]
    strategy.hybrid_configs["sharding_configs"].split_param = True  # paddle's way: written through
    assert strategy.hybrid_configs["sharding_configs"]["split_param"] is True
    with pytest.raises(AttributeError, match="pp_configs has no field 'delay_scale'"):
        strategy.hybrid_configs["pp_configs"].delay_scale = True
    with pytest.raises(AttributeError, match="dp_configs has no key 'need_reorder'"):
        strategy.hybrid_configs = {"dp_configs": {"need_reorder": False}}
    with pytest.raises(TypeError, match=r"hybrid_configs.pp_configs.enable_timer must be a bool, got 'yes'"):
        strategy.hybrid_configs["pp_configs"].enable_timer = "yes"
    with pytest.raises(TypeError, match="hybrid_configs.ep_degree must be an int, got 2.0"):
        strategy.hybrid_configs = {"ep_degree": 2.0}
    path = str(tmp_path / "strategy.prototxt")
    strategy.save_to_prototxt(path)
    strategy.save_to_prototxt(path)  # written whole and moved in place, over the first: nothing else left
    assert [p.name for p in tmp_path.iterdir()] == ["strategy.prototxt"]
    loaded = fleet.DistributedStrategy()
    loaded.load_from_prototxt(path)
    assert loaded.hybrid_configs["pp_configs"].delay_scale_loss is True and loaded.sync_param_name == ["fc"]
    assert dict(loaded.hybrid_configs["sharding_configs"]) == dict(strategy.hybrid_configs["sharding_configs"])


@pytest.mark.parametrize("key, what", [("ep_degree", "expert parallelism"), ("cp_degree", "context parallelism"),
                                       ("moe_sharding_degree", "MoE sharding")])
def test_init_refuses_the_degrees_pycoll_has_not_built(key, what):
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = {key: 2}
    with pytest.raises(ValueError, match=f"hybrid_configs {key}=2: pycoll has no {what} \\(not built\\)"):
        fleet.init(is_collective=True, strategy=strategy)


def test_the_log_level_functions_act_on_pycolls_logger():
    pycoll_logger = logging.getLogger("pycoll")
    before = pycoll_logger.level
    try:
        fleet.set_log_level("debug")
        assert (fleet.get_log_level_name(), fleet.get_log_level_code()) == ("DEBUG", 10) == (
            logging.getLevelName(pycoll_logger.level), pycoll_logger.level)
        fleet.set_log_level(30)
        assert (fleet.get_log_level_name(), fleet.get_log_level_code()) == ("WARNING", 30)
        with pytest.raises(TypeError, match="level must be a str or an int, got 1.5"):
            fleet.set_log_level(1.5)
        with pytest.raises(ValueError, match="level='LOUD' is not a level"):
            fleet.set_log_level("LOUD")
    finally:
        pycoll_logger.setLevel(before)


def test_local_fs_is_paddles_interface_over_the_local_disk(tmp_path):
    from pycoll.distributed.fleet.utils.fs import (ExecuteError, FSFileExistsError, FSFileNotExistsError,
                                                   FSShellCmdAborted, FSTimeOut)

    assert issubclass(FSShellCmdAborted, ExecuteError) and not issubclass(FSTimeOut, ExecuteError)  # paddle's

    fs, root = fleet.utils.LocalFS(), str(tmp_path)
    fs.mkdirs(f"{root}/a/b")
    fs.touch(f"{root}/a/f")
    assert fs.ls_dir(f"{root}/a") == (["b"], ["f"]) and fs.list_dirs(f"{root}/a") == ["b"]
    assert fs.ls_dir(f"{root}/none") == ([], []) and fs.list_dirs(f"{root}/none") == []
    assert fs.is_file(f"{root}/a/f") and fs.is_dir(f"{root}/a/b") and fs.is_exist(f"{root}/a")
    assert not fs.need_upload_download()
    with pytest.raises(FSFileExistsError, match="exist_ok is False"):
        fs.touch(f"{root}/a/f", exist_ok=False)
    with open(f"{root}/a/f", "w") as f:
        f.write("data")
    fs.upload(f"{root}/a", f"{root}/up")
    fs.download(f"{root}/up/f", f"{root}/down")
    assert open(f"{root}/down").read() == "data" and fs.is_dir(f"{root}/up/b")
    with pytest.raises(FSFileExistsError, match="overwrite=True"):
        fs.mv(f"{root}/down", f"{root}/up/f")
    fs.mv(f"{root}/down", f"{root}/up/f", overwrite=True)
    fs.rename(f"{root}/up", f"{root}/renamed")
    with pytest.raises(FSFileNotExistsError, match="does not exist"):
        fs.mv(f"{root}/up", f"{root}/x")
    fs.delete(f"{root}/renamed")
    fs.delete(f"{root}/a/f")
    fs.delete(f"{root}/none")  # nothing there: nothing to do
    assert fs.ls_dir(root) == (["a"], []) and fs.ls_dir(f"{root}/a") == (["b"], [])
    with pytest.raises(NotImplementedError, match="does not support HDFS"):
        fleet.utils.HDFSClient("/usr/local/hadoop", {"fs.default.name": "hdfs://x"})


def test_fleet_fleet_is_a_fleet_with_the_functions_and_paddles_other_names():
    from pycoll.distributed.fleet import fleet as the_fleet
    from pycoll.distributed.fleet.meta_optimizers.dygraph_optimizer import DygraphShardingOptimizer

    assert isinstance(the_fleet, fleet.Fleet) and the_fleet is fleet.fleet
    assert the_fleet.init is fleet.init and the_fleet.worker_num is fleet.worker_num
    assert (fleet.rank, fleet.nranks, fleet.world_size, fleet.rank_in_node) == (
        fleet.worker_index, fleet.worker_num, fleet.worker_num, fleet.local_rank)
    assert DygraphShardingOptimizer is pycoll.distributed.sharding.ShardedOptimizer
    assert fleet.meta_optimizers.HybridParallelOptimizer.__module__.endswith("hybrid_parallel_optimizer")
    fleet.init(is_collective=True)
    assert (the_fleet.worker_index(), fleet.world_size(), fleet.node_num(), fleet.rank_in_node()) == (0, 1, 1, "0")
    opt = pycoll.optimizer.SGD(learning_rate=0.1, parameters=pycoll.nn.Linear(2, 2).parameters())
    assert fleet.distributed_optimizer(opt) is opt  # one rank: the optimizer itself, as paddle's


def test_fused_allreduce_gradients_with_group_scales_in_buckets_of_each_dtype():
    dist.init_parallel_env()
    grads = [np.arange(4, dtype=np.float32), np.ones(3, np.float64), np.full(5, 2.0, np.float32)]
    params = []
    for g in grads:
        p = pycoll.zeros([g.size], dtype=str(g.dtype))
        p.stop_gradient = False
        p.grad = g.copy()
        params.append(p)
    hpu.fused_allreduce_gradients_with_group(params, None, bucket_size=20, scale=0.5)  # 16 + 20 bytes: 2 buckets
    for p, g in zip(params, grads):
        np.testing.assert_array_equal(p.grad.numpy(), g * 0.5)
        assert p.grad.numpy().dtype == g.dtype
    assert [len(b) for b in fused._buckets([g for g in grads], 20)] == [1, 1, 1]
    assert [len(b) for b in fused._buckets([g for g in grads], 36)] == [2, 1]
    with pytest.raises(ValueError, match="bucket_size=0"):
        hpu.fused_allreduce_gradients_with_group(params, None, bucket_size=0)


def test_fused_allreduce_gradients_pairs_each_parameter_when_the_ranks_reached_different_ones(tmp_path):
    # rank 0's backward reached a, rank 1's b (same shape): the buffers once summed a's gradient into
    # b's with no error; now each rank sends zeros for the one it lacks and takes the sum
    assert_ok(launch_source(tmp_path,
        "import numpy as np, pycoll, pycoll.distributed as dist\n"
        "from pycoll.distributed.fleet.utils import hybrid_parallel_util as hpu\n"
        "dist.init_parallel_env()\n"
        "rank = dist.get_rank()\n"
        "a, b, never, frozen = (pycoll.zeros([3]) for _ in range(4))\n"
        "for p in (a, b, never):\n"
        "    p.stop_gradient = False\n"
        "(a if rank == 0 else b).grad = np.full(3, 4.0, np.float32)\n"
        "frozen.grad = np.full(3, rank + 1.0, np.float32)\n"
        "dist.fused_allreduce_gradients([a, b, never, frozen], None)\n"
        "assert a.grad.numpy().tolist() == [2.0] * 3 and b.grad.numpy().tolist() == [2.0] * 3\n"
        "assert never.grad is None and frozen.grad.numpy().tolist() == [rank + 1.0] * 3  # frozen: skipped\n"
        "print(f'pairs OK rank={rank}')\n"), expect_lines=2)


def test_on_two_ranks_the_optimizer_may_come_before_the_model_and_wraps_as_paddles():
    assert_ok(launch(2, "fleet_order.py", timeout=120), expect_lines=2)


def test_on_two_ranks_all_gather_fills_a_tensor_and_the_hybrid_utilities_match_paddle():
    assert_ok(launch(2, "fleet_api.py", timeout=120), expect_lines=2)


def test_a_dynamic_scale_moves_only_when_a_merged_window_is_unscaled(monkeypatch):
    """Gradients accumulating over a window carry one scale: the scaler counts windows, not the
    steps inside them (with incr_every_n_steps=1 the scale doubles once per window)."""
    monkeypatch.setattr(grad_scaler, "on_accelerator", lambda: True)
    monkeypatch.setattr(precision, "_last_amp_dtype", "float16")  # a float16 auto_cast ran (paddle's rule)
    weight, opt = merging(2)
    scaler = pycoll.amp.GradScaler(init_loss_scaling=8.0, incr_every_n_steps=1)
    scales, seen = [], []
    for factor in (1.0, 3.0, 5.0, 7.0):
        scaler.scale((weight * pycoll.to_tensor([factor, 1.0])).sum()).backward()
        scaler.step(opt)
        scaler.update()
        opt.clear_grad()
        scales.append(scaler.state_dict()["scale"])
        seen.append(weight.numpy().tolist())
    assert [float(s[0]) for s in scales] == [8.0, 16.0, 16.0, 32.0], scales
    assert seen == [[0, 0], [-2, -1], [-2, -1], [-8, -2]], seen


def test_parameter_server_queries_answer_as_paddles_collective_mode(caplog):
    fleet.init(is_collective=True)
    assert fleet.is_server() is False and fleet.server_num() == 0 and fleet.server_index() == 0
    assert fleet.server_endpoints() == [] and fleet.server_endpoints(to_string=True) == ""
    assert fleet.fleet.is_server() is False
    with caplog.at_level("WARNING", logger="pycoll"):
        assert fleet.init_worker() is None and fleet.stop_worker() is None
    assert sum("no parameter servers" in r.getMessage() for r in caplog.records) == 2
    # the parameter-server runtime's saves, loads and tables: in one process paddle's warning, nothing done
    caplog.clear()
    with caplog.at_level("WARNING", logger="pycoll"):
        assert fleet.save_persistables(None, "out") is None and fleet.fleet.load_model("out", 0) is None
        assert fleet.shrink() is None and fleet.fleet.set_date(0, "20260101") is None
    assert [r.getMessage() for r in caplog.records] == [f"{name}() function doesn't work when use non_distributed fleet."
                                                        for name in ("save_persistables", "load_model", "shrink",
                                                                     "set_date")]


def test_a_user_defined_role_maker_declares_which_worker_this_is():
    """paddle 3.3.1, one process, UserDefinedRoleMaker(current_id=1, worker_endpoints=[2 of them]):
    worker_index 1, worker_num 2, is_first_worker False, get_file_shard(['file1', 'file2', 'file3'])
    ['file3']."""
    role = fleet.UserDefinedRoleMaker(is_collective=True, current_id=1, role=fleet.Role.WORKER,
                                      worker_endpoints=["127.0.0.1:6003", "127.0.0.1:6004"])
    fleet.init(role)
    try:
        assert (fleet.worker_index(), fleet.worker_num(), fleet.is_first_worker()) == (1, 2, False)
        assert fleet.util.get_file_shard(["file1", "file2", "file3"]) == ["file3"]
        assert fleet.worker_endpoints(to_string=True) == "127.0.0.1:6003,127.0.0.1:6004"
    finally:
        fleet.init(fleet.PaddleCloudRoleMaker(is_collective=True))  # the launcher's values again
    assert (fleet.worker_index(), fleet.worker_num()) == (0, 1)
    with pytest.raises(ValueError, match="current_id=2 is not a worker of the 2 declared"):
        fleet.UserDefinedRoleMaker(current_id=2, worker_num=2)


def test_optimizer_helpers_of_hybrid_parallel_util():
    fleet.init(is_collective=True)
    a, b = pycoll.zeros([2]), pycoll.zeros([3])
    for p in (a, b):
        p.stop_gradient = False
    inner = pycoll.optimizer.SGD(0.1, parameters=[{"params": [a]}, {"params": [b], "learning_rate": 0.5}])
    wrapped = fleet.meta_optimizers.HybridParallelOptimizer(inner, fleet.get_hybrid_communicate_group(),
                                                            fleet.DistributedStrategy())
    assert hpu.obtain_optimizer_parameters_list(wrapped) == [a, b]
    assert hpu.unwrap_optimizer(wrapped, (fleet.meta_optimizers.HybridParallelOptimizer,)) is inner
    assert hpu.unwrap_optimizer(inner, (fleet.meta_optimizers.HybridParallelOptimizer,)) is inner


def test_sharding_true_alone_keeps_paddles_degree_of_one(tmp_path):
    """paddle's dygraph fleet reads the sharding degree from hybrid_configs only: sharding=True
    with a stage but no degree runs as plain data parallelism (paddle 3.3.1 on 2 ranks: sharding
    degree 1, dp 2); a degree given in sharding_configs is pycoll's second way to ask."""
    strategy = fleet.DistributedStrategy()
    strategy.sharding = True
    strategy.sharding_configs = {"stage": 2}
    assert strategy.degrees()["sharding_degree"] == 1
    path = str(tmp_path / "s.json")
    strategy.save_to_prototxt(path)
    again = fleet.DistributedStrategy()
    again.load_from_prototxt(path)
    assert again.degrees()["sharding_degree"] == 1
    strategy.sharding_configs = {"sharding_degree": 2}
    assert strategy.degrees()["sharding_degree"] == 2
    strategy.save_to_prototxt(path)
    again.load_from_prototxt(path)
    assert again.degrees()["sharding_degree"] == 2


# what paddle 3.3.1's save_to_prototxt wrote for the settings of _STRATEGY_SET (and a field of its
# protobuf pycoll keeps no value of, `mode`, the comments and the list form protobuf's reader takes)
PADDLE_PROTOTXT = """# written by paddle
mode: COLLECTIVE
amp: true
fuse_grad_size_in_MB: 64
sharding: true
last_comm_group_size_MB: 2.5
amp_configs {
  init_loss_scaling: 1024.5
  custom_white_list: "matmul"
  custom_white_list: "we\\"ird\\\\name"
  use_pure_bf16: true
}
gradient_merge_configs {
  k_steps: 4
  avg: false
}
pipeline_configs {
  micro_batch_size: 3
  schedule_mode: "FThenB"
}
sharding_configs {
  segment_anchors: ["a", "b"]
  sharding_degree: 8
  stage: 2
}
hybrid_configs {
  dp_degree: 2
  mp_degree: 1
  sharding_degree: 2
  mp_configs {
    sync_param: false
  }
  pp_configs {
    delay_scale_loss: true
  }
}
"""


def _strategy_set():
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = {"dp_degree": 2, "mp_degree": 1, "sharding_degree": 2, "order": ["pp", "dp", "sharding",
                                                                                              "sep", "mp"],
                               "mp_configs": {"sync_param": False, "sync_param_name": ["fc"]},
                               "pp_configs": {"delay_scale_loss": True}}
    strategy.amp = True
    strategy.amp_configs = {"init_loss_scaling": 1024.5, "custom_white_list": ["matmul", 'we"ird\\name'],
                            "use_pure_bf16": True}
    strategy.sharding = True
    strategy.sharding_configs = {"sharding_degree": 8, "stage": 2, "segment_anchors": ["a", "b"]}
    strategy.gradient_merge_configs = {"k_steps": 4, "avg": False}
    strategy.fuse_grad_size_in_MB = 64
    strategy.last_comm_group_size_MB = 2.5
    strategy.pipeline_configs = {"schedule_mode": "FThenB", "micro_batch_size": 3}
    return strategy


def test_prototxt_is_protobufs_text_which_paddle_writes_and_reads(tmp_path, caplog):
    """save_to_prototxt writes the changed fields in protobuf's text format (paddle 3.3.1 loaded
    such a file and read these values back); load_from_prototxt reads paddle's file, skipping,
    with a warning, a field pycoll keeps no value of. The two settings paddle keeps outside its
    protobuf (the order, sync_param_name) ride on pycoll's comment lines."""
    strategy = _strategy_set()
    path = tmp_path / "s.prototxt"
    strategy.save_to_prototxt(str(path))
    text = path.read_text()
    assert "hybrid_configs {\n  dp_degree: 2\n  sharding_degree: 2\n  mp_configs {\n    sync_param: false\n  }" in text
    assert 'custom_white_list: "matmul"\n  custom_white_list: "we\\"ird\\\\name"' in text
    assert "\n#pycoll hybrid_parallel_order: [\"pp\"" in text and "recompute" not in text  # defaults left out
    again = fleet.DistributedStrategy()
    again.load_from_prototxt(str(path))
    assert repr(again) == repr(strategy) and again.degrees() == strategy.degrees()
    (tmp_path / "paddle.prototxt").write_text(PADDLE_PROTOTXT)
    from_paddle = fleet.DistributedStrategy()
    with caplog.at_level("WARNING"):
        from_paddle.load_from_prototxt(str(tmp_path / "paddle.prototxt"))
    assert "pycoll keeps no field mode; skipped" in caplog.text
    expected = _strategy_set()
    expected.hybrid_parallel_order = fleet.DistributedStrategy().hybrid_parallel_order  # not in paddle's file
    expected.sync_param_name = fleet.DistributedStrategy().sync_param_name
    assert repr(from_paddle) == repr(expected)
    for bad, says in (("amp: tru", "must be a bool"), ("amp_configs { k_steps: 1", "not closed"),
                      ('pipeline_configs { schedule_mode: "1F1B }', "a string is not closed"),
                      ("hybrid_configs: 3", "hybrid_configs is a message")):
        (tmp_path / "bad.prototxt").write_text(bad)
        with pytest.raises((ValueError, TypeError), match=says):
            fleet.DistributedStrategy().load_from_prototxt(str(tmp_path / "bad.prototxt"))


def test_timer_helper_times_named_spans_and_refuses_misuse(monkeypatch, capsys):
    from pycoll.distributed.fleet.utils import timer_helper

    monkeypatch.setattr(timer_helper, "_GLOBAL_TIMERS", None)
    assert not timer_helper.is_timer_initialized()
    with pytest.raises(RuntimeError, match="call set_timers"):
        timer_helper.get_timers()
    timer_helper.set_timers()
    with pytest.raises(RuntimeError, match="already been initialized"):
        timer_helper.set_timers()
    timers = timer_helper.get_timers()
    # made, start, stop, start, (elapsed stops it at) 11.5, restarts it at 20
    ticks = iter([0.0, 10.0, 10.25, 11.0, 11.5, 20.0])
    monkeypatch.setattr(timer_helper, "time", types.SimpleNamespace(time=lambda: next(ticks)))
    forward = timers("forward")
    assert timers("forward") is forward
    forward.start()
    with pytest.raises(RuntimeError, match="timer 'forward' has already started"):
        forward.start()
    forward.stop()
    with pytest.raises(RuntimeError, match="timer 'forward' is not started"):
        forward.stop()
    forward.start()
    timers.log(["forward"], normalizer=2)  # (0.25 + 0.5) s over 2 steps, the running timer read and kept on
    assert capsys.readouterr().out == "time (ms) | forward: 375.00\n"
    assert forward.started_ and forward.elapsed_ == 0.0 and forward.start_time == 20.0
    with pytest.raises(KeyError, match=r"no timer named \['backward'\]"):
        timers.log(["backward"])
    with pytest.raises(NotImplementedError, match="use_event=True"):
        timers("other", use_event=True)
