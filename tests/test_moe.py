"""paddle.incubate.distributed.models.moe: the routing kernels against the values paddle's docs
print (paddle's CPU build has no kernel for them, nor for MoELayer: its number_count,
limit_by_capacity... raise "not supported on CPU"), MoELayer on one rank and on two
(tests/ranks/moe_layer.py: against a one-process reference that runs every expert on every token),
recompute, ClipGradForMOEByGlobalNorm by hand, and argument errors."""
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pycoll
import pycoll.nn as nn
from conftest import assert_ok, launch
from pycoll.incubate.distributed.models import moe
from pycoll.incubate.distributed.models.moe import routing

sys.path.insert(0, str(Path(__file__).resolve().parent / "ranks"))
import moe_layer as moe_check  # noqa: E402  (the reference of tests/ranks/moe_layer.py)


@pytest.fixture
def float64():
    before = pycoll.get_default_dtype()
    pycoll.set_default_dtype("float64")  # the reference's layers and data are float64 (paddle refuses a mix)
    yield
    pycoll.set_default_dtype(before)


def test_routing_kernels_give_paddles_documented_values():
    # the outputs printed in the docstrings of paddle.distributed.models.moe.utils (3.3.1)
    numbers = np.array([[0, 2], [0, 2]])
    assert routing.number_count(numbers, 6).tolist() == [2, 0, 2, 0, 0, 0]
    assert routing.assign_pos(numbers, np.cumsum([2, 0, 2, 0])).tolist() == [2, 0, 3, 1]
    limited = routing.limit_by_capacity(np.array([1, 2, 2, 8, 3, 6]), np.array([5, 5, 5]), 2)
    assert limited.tolist() == [1, 2, 2, 4, 3, 3]
    pruned = routing.prune_gate_by_capacity(np.array([1, 3, 3, 3, 3, 2, 1, 1]), np.array([0, 3, 1, 3, 0, 0, 0, 0]),
                                            8, 1)
    assert pruned.tolist() == [1, 3, 3, 3, -1, 2, 1, 1]


def test_routing_kernels_skip_dropped_choices_and_follow_the_random_policy():
    gate = np.array([[1, -1], [3, 0], [-1, 3], [3, 1]])
    assert routing.number_count(gate, 4).tolist() == [1, 2, 0, 3]
    pos = routing.assign_pos(gate, np.cumsum([1, 2, 0, 3]))
    assert pos.tolist() == [3, 7, 0, 6, 5, 2]  # by expert, each expert's choices last first
    # expert 3 allows 2: the third choice of it in flat order (position 6) is cut; -1 stays -1
    assert routing.prune_gate_by_capacity(gate, np.array([1, 2, 0, 2]), 4, 1).tolist() == [[1, -1], [3, 0], [-1, 3],
                                                                                         [-1, 1]]
    values, prob = np.array([[0.9, 0.3], [0.8, 0.1], [0.5, 0.45]]), np.array([0.5, 0.1, 0.95])
    # dropped where 2 * second value < prob: rows 0 (0.6 > 0.5 kept), 1 (0.2 > 0.1 kept), 2 (0.9 < 0.95 dropped)
    routed = routing.random_routing(np.array([[0, 1], [2, 3], [1, 0]]), values, prob)
    assert routed.tolist() == [[0, 1], [2, 3], [1, -1]]


def test_count_by_gate_and_limit_by_capacity_on_one_rank():
    gate = pycoll.to_tensor([[1, 2], [2, 0], [2, 1]], dtype="int64")
    pos, local, remote = moe.utils.count_by_gate(gate, 3, 1)
    assert local.numpy().tolist() == remote.numpy().tolist() == [1, 2, 3]
    assert pos.numpy().tolist() == [3, 5, 0, 4, 2, 1]
    new_local, new_remote, idx = moe.utils.limit_by_capacity(gate, 3, 1, 2)
    assert new_local.numpy().tolist() == new_remote.numpy().tolist() == [1, 2, 2]
    assert idx.numpy().tolist() == [[1, 2], [2, 0], [-1, 1]]


@pytest.mark.parametrize("kind", ["naive", "gshard", "switch"])
def test_moe_layer_on_one_rank_equals_the_direct_reference(kind, float64):
    # output, balance loss, input/gate/expert gradients; capacity 0.3 cuts some choices (not naive's)
    dropped = moe_check.check_layer(1, 0, None, kind, capacity=(0.3, 0.3))
    assert (dropped > 0) == (kind != "naive")


def test_moe_layer_on_two_ranks_equals_the_direct_reference():
    assert_ok(launch(2, "moe_layer.py", timeout=60), expect_lines=2)


def test_recompute_gives_the_same_output_and_gradients(float64):
    runs = []
    for interval in (0, 1):
        gate, experts = moe_check.build(1, "naive", None)
        layer = moe.MoELayer(moe_check.D, nn.LayerList(experts), gate=gate, recompute_interval=interval,
                             recompute_ctx={} if interval else None)
        x = pycoll.to_tensor(moe_check.data(1)[0][0], stop_gradient=False)
        out = layer(x)
        (out * out).sum().backward()
        runs.append([out.numpy(), x.grad.numpy()] + [p.grad.numpy() for p in layer.parameters()])
    for a, b in zip(*runs):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_gate_dict_builds_paddles_gates():
    experts = nn.LayerList([nn.Linear(4, 4) for _ in range(3)])
    assert isinstance(moe.MoELayer(4, experts).gate, moe.GShardGate)  # paddle's default: gshard, top 2
    layer = moe.MoELayer(4, experts, gate={"type": "naive", "top_k": 3})
    assert isinstance(layer.gate, moe.NaiveGate) and layer.top_k == 3 and layer.gate.tot_expert == 3
    assert moe.MoELayer(4, experts, gate={"type": "switch", "top_k": 1}).top_k == 1
    assert layer.gate.gate.weight.name.startswith("gate_")
    out = layer(pycoll.randn([2, 3, 4]))
    assert out.shape == [2, 3, 4] and layer.gate.get_loss() is None  # the naive gate has no balance loss


def test_clip_for_moe_on_one_rank_is_the_global_norm_clip():
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal((3, 2)), rng.standard_normal(4), rng.standard_normal(2)]
    params = [pycoll.to_tensor(np.zeros_like(g)) for g in grads]
    params[2].need_clip = False
    clip = moe.ClipGradForMOEByGlobalNorm(0.5)
    out = clip([(p, pycoll.to_tensor(g)) for p, g in zip(params, grads)] + [(pycoll.ones([1]), None)])
    norm = math.sqrt(sum((g ** 2).sum() for g in grads[:2]))
    assert len(out) == 3 and out[2][1].numpy().tolist() == grads[2].tolist()  # need_clip=False: as it was
    for (_, g), want in zip(out[:2], grads[:2]):
        np.testing.assert_allclose(g.numpy(), want * 0.5 / norm, rtol=1e-12)
    assert moe.ClipGradByGlobalNorm is moe.ClipGradForMOEByGlobalNorm
    # as an optimizer's grad_clip (gradients alone: fine where the moe group is one rank)
    w = pycoll.to_tensor(np.zeros(4), stop_gradient=False)
    w.grad = pycoll.to_tensor(grads[1])
    pycoll.optimizer.SGD(learning_rate=1.0, parameters=[w], grad_clip=moe.ClipGradForMOEByGlobalNorm(0.5)).step()
    np.testing.assert_allclose(w.numpy(), -grads[1] * 0.5 / np.linalg.norm(grads[1]), rtol=1e-12)


def test_bad_arguments_raise_naming_them():
    experts = nn.LayerList([nn.Linear(4, 4)])
    with pytest.raises(ValueError, match="gate type"):
        moe.MoELayer(4, experts, gate={"type": "top"})
    with pytest.raises(TypeError, match="unimplemented gate type"):
        moe.MoELayer(4, experts, gate=moe.BaseGate(1, 1))
    with pytest.raises(TypeError, match="gate must be a dict"):
        moe.MoELayer(4, experts, gate="naive")
    with pytest.raises(ValueError, match="topk must be 2"):
        moe.GShardGate(4, 2, 1, topk=1)
    with pytest.raises(ValueError, match="topk must be 1"):
        moe.MoELayer(4, experts, gate={"type": "switch"})  # paddle's default top_k 2 does not fit switch
    with pytest.raises(ValueError, match="capacity"):
        moe.SwitchGate(4, 2, 1, capacity=1.2)
    with pytest.raises(ValueError, match="d_model"):
        moe.MoELayer(0, experts)
    with pytest.raises(ValueError, match="experts"):
        moe.MoELayer(4, nn.LayerList([]))
    with pytest.raises(ValueError, match="recompute_ctx"):
        moe.MoELayer(4, experts, recompute_interval=1)
    with pytest.raises(ValueError, match=r"\[batch, seq, d_model=4\]"):
        moe.MoELayer(4, experts, gate={"type": "naive", "top_k": 1})(pycoll.randn([3, 4]))
    with pytest.raises(ValueError, match="capacity must be an int"):
        moe.utils.limit_by_capacity(pycoll.to_tensor([0, 1]), 2, 1, -1)
    with pytest.raises(TypeError, match="integer"):
        moe.utils.count_by_gate(pycoll.to_tensor([0.5]), 2, 1)
    with pytest.raises(ValueError, match="clip_norm"):
        moe.ClipGradForMOEByGlobalNorm(0)


def test_incubate_reaches_the_moe_package_lazily():
    code = ("import sys, pycoll, pycoll.incubate as inc\n"
            "assert 'pycoll.incubate.distributed' not in sys.modules\n"
            "assert inc.distributed.models.moe.MoELayer.__name__ == 'MoELayer'\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_moe_layer_runs_on_device_arrays_as_on_the_host():
    # tests/strict_cupy.py in CuPy's place: every routing kernel, the gates' losses and the layer
    # keep device arrays and refuse implicit host conversions, as CuPy does
    import strict_cupy
    with strict_cupy.installed():
        results = {}
        for place in ("cpu", "gpu"):
            pycoll.set_device(place)
            for kind in ("naive", "gshard", "switch"):
                gate, experts = moe_check.build(1, kind, (0.3, 0.3))
                layer = moe.MoELayer(moe_check.D, nn.LayerList(experts), gate=gate)
                x = pycoll.to_tensor(moe_check.data(1)[0][0].astype(np.float32), stop_gradient=False)
                pycoll.seed(5)
                out = layer(x)
                (out * out).sum().backward()
                assert (place == "gpu") == isinstance(out.array, strict_cupy.ndarray)
                loss = gate.get_loss()
                grads = [p.grad.numpy() for p in layer.parameters() if p.grad is not None]
                results[place, kind] = [out.numpy(), x.grad.numpy()] + grads + ([] if loss is None else [loss.numpy()])
        pycoll.set_device("cpu")
    for kind in ("naive", "gshard", "switch"):
        assert len(results["cpu", kind]) == len(results["gpu", kind])
        for a, b in zip(results["cpu", kind], results["gpu", kind]):
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-7, err_msg=kind)
