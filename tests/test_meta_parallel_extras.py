"""paddle 3.3.1's fleet.meta_parallel names pycoll lacked: LayerSpec and its builders (and
LayerDesc over a spec), LocalSharedLayerDesc (refused: only paddle's DualPipeV runs it),
PipelineHook, the micro-step hooks and their order (on 2 ranks, tests/ranks/pipeline_hooks.py,
against the sequence Paddle's CPU build gave for the same script), PipelineDatasetPreprocessor,
SegmentParallel (refused without a sep group, as paddle asserts), the pp_utils dict helpers and
paddle's submodule paths. Semantics from paddle's source where its CPU build cannot run them."""
import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
from conftest import assert_ok, launch
from pycoll.distributed import fleet
from pycoll.distributed.fleet import meta_parallel as mp
from pycoll.distributed.fleet.meta_parallel.pipeline_hooks import PipelineHook, pipeline_parallel_callbacks_


class Scaled(nn.Layer):
    def __init__(self, size, factor=1.0, sublayers_spec=None):
        super().__init__()
        self.linear = nn.Linear(size, size)
        self.factor, self.sublayers_spec = factor, sublayers_spec

    def forward(self, x):
        return self.linear(x) * self.factor


def test_layer_spec_builders_follow_paddles_rules():
    spec = mp.LayerSpec(Scaled, {"size": 2, "factor": 3.0})
    assert repr(spec) == repr(Scaled) + "{'size': 2, 'factor': 3.0}"  # paddle's text
    assert repr(mp.LayerSpec(("pycoll.nn", "Linear"))) == "'pycoll.nn','Linear',"
    assert mp.get_spec_layer(spec) is Scaled and mp.get_spec_layer(Scaled) is Scaled
    assert mp.get_spec_layer(mp.LayerSpec(("pycoll.nn", "Linear"))) is nn.Linear
    assert mp.import_spec_layer(("pycoll.nn", "Tanh")) is nn.Tanh
    built = mp.build_spec_layer(spec)
    assert isinstance(built, Scaled) and built.factor == 3.0 and built.sublayers_spec is None
    with pytest.warns(UserWarning, match="Got same key factor"):  # the spec's value wins, as paddle's
        assert mp.build_spec_layer(spec, factor=5.0).factor == 3.0
    nested = mp.LayerSpec(Scaled, {"size": 2}, sublayers_spec=mp.LayerSpec(nn.Tanh))
    assert mp.build_spec_layer(nested).sublayers_spec is nested.sublayers_spec
    assert isinstance(mp.build_spec_layer(mp.LayerSpec(("pycoll.nn", "Linear"), {"in_features": 2}), out_features=4),
                      nn.Linear)

    def function(x):
        return x
    assert mp.build_spec_layer(function) is function and mp.build_spec_layer(mp.LayerSpec(function)) is function
    with pytest.raises(TypeError, match="when instantiating Scaled"):
        mp.build_spec_layer(mp.LayerSpec(Scaled, {"size": 2, "nope": 1}))
    with pytest.raises(ImportError, match="cannot import 'Nope' from 'pycoll.nn'"):
        mp.import_spec_layer(("pycoll.nn", "Nope"))
    with pytest.raises(TypeError, match="layer_path"):
        mp.import_spec_layer("pycoll.nn.Linear")


def test_layer_desc_takes_a_spec_and_pipeline_layer_refuses_local_shared(fresh_fleet):
    fleet.init(is_collective=True)
    spec = mp.LayerSpec(Scaled, {"size": 2})
    desc = mp.LayerDesc(spec, factor=2.0)
    assert desc.using_layer_spec and desc.layer_func is Scaled and desc.build_layer().factor == 2.0
    assert desc.build_layer(factor=4.0).factor == 4.0 and spec.extra_kwargs == {"size": 2}
    layer = mp.PipelineLayer([desc, mp.LayerDesc(mp.LayerSpec(("pycoll.nn", "Tanh")))], num_stages=1,
                             seg_method="layer:Scaled")
    x = pycoll.to_tensor(np.ones((1, 2), "float32"))
    np.testing.assert_allclose(layer(x).numpy(), np.tanh(layer.run_function[0].linear(x).numpy() * 2.0), rtol=1e-6)
    local = mp.LocalSharedLayerDesc("emb", nn.Embedding, None, "weight", 4, 2)
    assert (local.layer_name, local.shared_weight_attr) == ("emb", ["weight"])
    with pytest.raises(ValueError, match=r"layers\[1\] are LocalSharedLayerDesc, which only the DualPipeV"):
        mp.PipelineLayer([mp.LayerDesc(nn.Tanh), local], num_stages=1)
    with pytest.raises(TypeError, match="subclass of pycoll.nn.Layer"):
        mp.LayerDesc(mp.LayerSpec(lambda x: x))


def test_pipeline_hook_numbers():
    hook, seen = PipelineHook(), []
    hook.set_hooks_capacity(3)
    hook.register_hook(2, seen.append)
    hook.register_hook(0, lambda i: seen.append(-i))
    for _ in range(3):
        hook.run_hook()
    assert seen == [0, 2] and hook.current_id == 3 and hook.hooks_capacity == 3
    with pytest.raises(RuntimeError, match="hook_id 3 is out of range, maximum capacity is 3"):
        hook.run_hook()
    hook.reset_current_id()
    assert hook.current_id == 0
    with pytest.raises(ValueError, match=r"hook_id must be an int in \[0, 3\)"):
        hook.register_hook(3, print)
    assert [loc.value for loc in mp.PipelineParallelMicroStepLocations] == [
        "forward_begin", "forward_end", "backward_begin", "backward_end"]
    with pytest.raises(ValueError, match="location must be a PipelineParallelMicroStepLocations"):
        mp.register_global_pipeline_parallel_hook("forward_begin", print)


def test_one_stage_pipeline_runs_hooks_and_a_dataset_preprocessor(fresh_fleet):
    fleet.init(is_collective=True)
    strategy = fleet.DistributedStrategy()
    strategy.pipeline_configs = {"micro_batch_size": 1, "accumulate_steps": 2}
    layer = mp.PipelineLayer([mp.LayerDesc(nn.Linear, 2, 1)], num_stages=1, loss_fn=nn.MSELoss())
    model = mp.PipelineParallel(layer, fleet.get_hybrid_communicate_group(), strategy)
    events = []
    hooks = {loc: (lambda loc=loc, **kw: events.append((loc.value, kw["step_id"])))
             for loc in mp.PipelineParallelMicroStepLocations}
    try:
        for loc, hook in hooks.items():
            model.register_hook(loc, hook)  # paddle's: the global list
        model.register_forward_pipeline_parallel_hook(1, lambda i: events.append(("f", i)))
        with pytest.raises(ValueError, match="Bubble hooks are not supported yet"):
            model.register_bubble_pipeline_parallel_hook(0, print)
        pairs = iter([[pycoll.to_tensor(np.eye(2, dtype="float32")[i:i + 1]), pycoll.zeros([1, 1])] for i in range(2)])
        opt = fleet.distributed_optimizer(pycoll.optimizer.SGD(0.0, parameters=layer.parameters()))
        model.train_batch(mp.PipelineDatasetPreprocessor(lambda: pairs), opt)
    finally:
        for loc, hook in hooks.items():
            pipeline_parallel_callbacks_.hooks[loc].remove(hook)
    one = ["forward_begin", "forward_end", "backward_begin", "backward_end"]
    assert events == [(e, 0) for e in one] + [("f", 1)] + [(e, 1) for e in one]
    # NoPipelineParallel, as paddle's, runs no hooks
    assert "register_hook" not in dir(mp.NoPipelineParallel)


def test_segment_parallel_needs_a_sep_group(fresh_fleet):
    fleet.init(is_collective=True)
    with pytest.raises(RuntimeError, match="sep_degree is 1, so there is no sep group"):
        mp.SegmentParallel(nn.Linear(2, 2), fleet.get_hybrid_communicate_group())
    assert issubclass(mp.SegmentParallel, mp.MetaParallelBase)


def test_pp_utils_dict_helpers_round_trip():
    from pycoll.distributed.fleet.meta_parallel.pp_utils.utils import tuple_to_dict_helper
    a, b, c = pycoll.ones([1]), pycoll.zeros([2]), pycoll.ones([3])
    packed = mp.dict_to_tuple_helper({"x": a, "ys": [b, c]})
    assert packed == (a, b, c) and [t.key for t in packed] == ["x", "ys 0", "ys 1"]
    back, used = tuple_to_dict_helper(packed)
    assert used and back["x"] is a and back["ys"] == [b, c] and not hasattr(a, "key")
    assert tuple_to_dict_helper(a) == (a, False) and mp.dict_to_tuple_helper(a) is a


def test_paddles_submodule_paths():
    from pycoll.distributed.fleet.meta_parallel.meta_parallel_base import MetaParallelBase
    from pycoll.distributed.fleet.meta_parallel.parallel_layers import mp_layers, random, spec_utils
    from pycoll.distributed.fleet.meta_parallel.parallel_layers.pp_layers import LocalSharedLayerDesc
    from pycoll.distributed.fleet.meta_parallel.pipeline_parallel import (PipelineDatasetPreprocessor,
                                                                          PipelineParallel,
                                                                          PipelineParallelMicroStepLocations,
                                                                          register_global_pipeline_parallel_hook)
    from pycoll.distributed.fleet.meta_parallel.segment_parallel import SegmentParallel
    from pycoll.distributed.fleet.meta_parallel.sharding_parallel import ShardingParallel
    from pycoll.distributed.fleet.meta_parallel.tensor_parallel import TensorParallel
    assert (MetaParallelBase, PipelineParallel, ShardingParallel, TensorParallel, SegmentParallel) == (
        mp.MetaParallelBase, mp.PipelineParallel, mp.ShardingParallel, mp.TensorParallel, mp.SegmentParallel)
    assert (PipelineDatasetPreprocessor, PipelineParallelMicroStepLocations, register_global_pipeline_parallel_hook,
            LocalSharedLayerDesc) == (mp.PipelineDatasetPreprocessor, mp.PipelineParallelMicroStepLocations,
                                      mp.register_global_pipeline_parallel_hook, mp.LocalSharedLayerDesc)
    assert (mp_layers.ColumnParallelLinear, random.get_rng_state_tracker, spec_utils.LayerSpec) == (
        mp.ColumnParallelLinear, mp.get_rng_state_tracker, mp.LayerSpec)


def test_two_stage_hooks_run_in_paddles_order():
    assert_ok(launch(2, "pipeline_hooks.py", timeout=120), expect_lines=2)


def test_balanced_memory_order_is_paddles():
    """VPPFhenBInBalancedMemory's order, worked out by hand from paddle's forward_backward_pipeline
    for 2 stages, 2 chunks, 3 micro-batches: startup M (V - 1) + P - s - 1 forwards (chunk =
    step // M), M - (P - s - 1) forward/backward pairs, then the backwards (chunk V - 1 - step // M)."""
    from pycoll.distributed.fleet.meta_parallel.interleave_schedule import balanced_memory_order, fthenb_order
    f = [("F", c, m) for c in (0, 1) for m in range(3)]
    b = [("B", c, m) for c in (1, 0) for m in range(3)]
    assert balanced_memory_order(2, 0, 2, 3) == f[:4] + [f[4], b[0], f[5], b[1]] + b[2:]
    assert balanced_memory_order(2, 1, 2, 3) == f[:3] + [f[3], b[0], f[4], b[1], f[5], b[2]] + b[3:]
    assert balanced_memory_order(2, 0, 2, 3, forward_only=True) == fthenb_order(2, 0, 2, 3, True) == f
    assert issubclass(mp.VPPFhenBInBalancedMemory, mp.PipelineParallelWithInterleaveFthenB)
