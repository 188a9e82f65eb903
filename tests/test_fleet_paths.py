"""paddle's other import paths of fleet and distributed (each the same object as pycoll's own),
the hybrid group's sep/MoE queries, mpu's dropout with a named generator and _c_lookup_table
(values as paddle 3.3.1's CPU build gives them), recompute's helpers, a PipelineLayer at
pp_degree 1 given train_batch, and on 2 ranks (tests/ranks/fleet_paths.py) moe_utils'
global_scatter / global_gather, sequence_parallel_utils' collectives, fleet.init's explicit
dp_degree and a data-parallel one-stage pipeline step."""
import numpy as np
import pytest

import pycoll
import pycoll.distributed as dist
from conftest import assert_ok, launch
from pycoll.distributed import fleet

pytestmark = pytest.mark.usefixtures("fresh_fleet")  # conftest: each test starts afresh


def test_paddles_module_paths_hold_pycolls_objects():
    from pycoll.distributed.communication import group
    from pycoll.distributed.fleet.base import topology
    from pycoll.distributed.fleet.meta_optimizers.dygraph_optimizer import hybrid_parallel_optimizer
    from pycoll.distributed.fleet.meta_parallel.parallel_layers import pp_layers
    assert topology.CommunicateTopology is fleet.CommunicateTopology
    assert topology.HybridCommunicateGroup is fleet.HybridCommunicateGroup
    assert topology.ParallelMode is dist.ParallelMode and fleet.base.topology is topology
    assert (group.Group, group.is_initialized, group.get_group) == (dist.Group, dist.is_initialized, dist.get_group)
    assert (pp_layers.PipelineLayer, pp_layers.LayerDesc, pp_layers.SharedLayerDesc) == (
        fleet.meta_parallel.PipelineLayer, fleet.meta_parallel.LayerDesc, fleet.meta_parallel.SharedLayerDesc)
    assert hybrid_parallel_optimizer.HybridParallelOptimizer is fleet.meta_optimizers.HybridParallelOptimizer
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        topology.nothing


def test_paddles_communication_submodules_hold_the_calls():
    """paddle's communication/<call>.py files: importable by path, each name the package's."""
    from pycoll.distributed.communication.all_to_all import alltoall, alltoall_single
    from pycoll.distributed.communication.batch_isend_irecv import P2POp, batch_isend_irecv
    from pycoll.distributed.communication.reduce import ReduceOp, reduce
    from pycoll.distributed.communication.send import isend, send_object_list
    assert (alltoall, alltoall_single, P2POp, batch_isend_irecv) == (
        dist.alltoall, dist.alltoall_single, dist.P2POp, dist.batch_isend_irecv)
    assert (ReduceOp, reduce, isend, send_object_list) == (dist.ReduceOp, dist.reduce, dist.isend, dist.send_object_list)
    import pycoll.distributed.communication as communication
    assert communication.all_reduce is dist.all_reduce  # the function, as in paddle, not the submodule
    with pytest.raises(ImportError, match="cannot import name 'nothing'"):
        exec("from pycoll.distributed.communication.send import nothing")


def test_the_hybrid_group_is_published_and_answers_paddles_sep_and_moe_queries():
    from pycoll.distributed.fleet.base import topology
    strategy = fleet.DistributedStrategy()
    strategy.hybrid_configs = {"dp_degree": 1}  # one rank: 1 is the product
    fleet.init(is_collective=True, strategy=strategy)
    hcg = fleet.get_hybrid_communicate_group()
    assert topology._HYBRID_PARALLEL_GROUP is hcg
    assert hcg.get_moe_sharding_parallel_world_size() == 0  # paddle's without MoE
    for query in (hcg.get_dp_sep_parallel_group, hcg.get_pp_mp_parallel_group, hcg.get_sep_parallel_group):
        with pytest.raises(RuntimeError, match="sep not exist"):
            query()


def test_c_lookup_table_gives_this_ranks_rows_and_zeros_elsewhere_as_paddles():
    from pycoll.distributed.fleet.layers.mpu.mp_ops import _c_lookup_table
    table = pycoll.to_tensor(np.arange(12, dtype="float32").reshape(3, 4), stop_gradient=False)
    ids = pycoll.to_tensor([[0, 2, 3], [4, 5, 1]], dtype="int64")
    out = _c_lookup_table(table, ids, start_index=2, vocab_size=6)
    # paddle 3.3.1 CPU: rows 2..4 of the vocabulary live here; 0, 1 and 5 give zeros
    zero = [0.0] * 4
    assert out.numpy().tolist() == [[zero, [0, 1, 2, 3], [4, 5, 6, 7]], [[8, 9, 10, 11], zero, zero]]
    out.sum().backward()
    assert table.grad.numpy().tolist() == [[1.0] * 4] * 3
    with pytest.raises(TypeError, match="index must hold integer ids"):
        _c_lookup_table(table, pycoll.to_tensor([0.5]))


def test_mpu_dropout_with_a_named_generator_follows_paddles_checks():
    from pycoll.distributed.fleet.layers.mpu.random import dropout
    x = pycoll.ones([4, 4])
    assert dropout(x, 0.0, rng_name="global_seed") is x
    with pytest.raises(ValueError, match="axis=1 with rng_name='global_seed'"):
        dropout(x, 0.5, axis=1, rng_name="global_seed")
    with pytest.raises(TypeError, match="p must be a number"):
        dropout(x, "a", rng_name="global_seed")
    # paddle 3.3.1: not training, the sums are 16 (upscale_in_train) and 8 (downscale_in_infer)
    assert float(dropout(x, 0.5, rng_name="x", training=False).sum()) == 16.0
    assert float(dropout(x, 0.5, rng_name="x", training=False, mode="downscale_in_infer").sum()) == 8.0
    pycoll.seed(3)
    kept = dropout(pycoll.ones([1000]), 0.25, rng_name="x").numpy()
    assert set(np.unique(kept).tolist()) == {0.0, float(np.float32(4 / 3))} and 650 < np.count_nonzero(kept) < 850


def test_global_scatter_refuses_counts_it_cannot_use():
    from pycoll.distributed.utils import moe_utils
    dist.init_parallel_env()
    x = pycoll.ones([3, 2])
    with pytest.raises(TypeError, match="local_count must be an int64 Tensor"):
        moe_utils.global_scatter(x, [3], pycoll.to_tensor([3]))
    with pytest.raises(ValueError, match="x has 3 rows, but local_count sends 2"):
        moe_utils.global_scatter(x, pycoll.to_tensor([2]), pycoll.to_tensor([2]))
    with pytest.raises(ValueError, match="global_count holds negative counts"):
        moe_utils.global_scatter(x, pycoll.to_tensor([3]), pycoll.to_tensor([-1]))
    # one rank, 2 experts: its own rows come back, reordered expert-major (the same order here)
    out = moe_utils.global_scatter(pycoll.to_tensor(np.arange(6.0).reshape(3, 2)), pycoll.to_tensor([1, 2]),
                                   pycoll.to_tensor([1, 2]))
    assert out.numpy().tolist() == [[0, 1], [2, 3], [4, 5]]


def test_on_two_ranks_moe_and_sequence_parallel_exchanges_dp_degree_1_and_a_one_stage_pipeline():
    assert_ok(launch(2, "fleet_paths.py", timeout=120), expect_lines=2)


def test_a_pipeline_layer_at_pp_degree_1_gets_train_batch_on_one_rank():
    from pycoll.distributed.fleet.meta_parallel import LayerDesc, NoPipelineParallel, PipelineLayer
    strategy = fleet.DistributedStrategy()
    strategy.pipeline_configs = {"micro_batch_size": 1, "accumulate_steps": 2}
    fleet.init(is_collective=True, strategy=strategy)
    layer = PipelineLayer([LayerDesc(pycoll.nn.Linear, 2, 1)], num_stages=1, loss_fn=pycoll.nn.MSELoss())
    layer.parameters()[0].set_value(np.array([[1.0], [2.0]], "float32"))
    layer.parameters()[1].set_value(np.array([0.0], "float32"))
    model = fleet.distributed_model(layer)
    assert isinstance(model, NoPipelineParallel) and model._layers is layer
    x, y = np.array([[1.0, 0.0], [0.0, 1.0]], "float32"), np.array([[0.0], [0.0]], "float32")
    opt = fleet.distributed_optimizer(pycoll.optimizer.SGD(0.5, parameters=layer.parameters()))
    loss = model.train_batch([pycoll.to_tensor(x), pycoll.to_tensor(y)], opt)
    # micro-batches of one row: losses 1 and 4, averaged 2.5; gradients 2*[1, 0] and 2*[0, 2], averaged
    assert float(loss) == 2.5
    assert layer.parameters()[0].numpy().ravel().tolist() == [0.5, 1.0]


def test_recompute_helpers_warn_and_switch_every_random_state(caplog):
    import random
    from pycoll.distributed.fleet.recompute.recompute import check_recompute_necessary, switch_rng_state_tracker
    from pycoll.parallel import get_rng_state_tracker
    with caplog.at_level("WARNING", logger="pycoll"):
        check_recompute_necessary([pycoll.ones([1]), (pycoll.ones([1]),)])
        assert "None of the inputs to current recompute block need grad" in caplog.text
        caplog.clear()
        check_recompute_necessary([pycoll.ones([1]), (pycoll.to_tensor([1.0], stop_gradient=False),)])
        assert caplog.text == ""
    tracker = get_rng_state_tracker()
    tracker.reset()
    tracker.add("mp_rng", 7)
    pycoll.seed(5)
    np.random.seed(5)
    random.seed(5)
    saved = (pycoll.get_rng_state(), tracker.get_states_tracker(), np.random.get_state(), random.getstate())

    def draw():
        return pycoll.rand([3]).numpy().tolist(), np.random.rand(), random.random()
    sequence = [draw() for _ in range(3)]  # from the saved states
    pycoll.set_rng_state(saved[0])
    np.random.set_state(saved[2])
    random.setstate(saved[3])
    draw(), draw()
    with switch_rng_state_tracker(*saved):  # inside, the draws are those from the saved states
        assert draw() == sequence[0]
    assert draw() == sequence[2]  # after, each generator goes on from where it was before the switch
    with pytest.raises(ValueError, match="custom_state needs custom_get_state_func"):
        with switch_rng_state_tracker(*saved, custom_state=1):
            pass
    tracker.reset()
