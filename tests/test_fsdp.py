"""pycoll.distributed.fsdp: fully_shard trains as DataParallel on 2 ranks while each rank holds
its share, and its layer's and optimizer's state dicts are whole (tests/ranks/fsdp_training.py);
a checkpoint of them resumes in new processes (tests/ranks/fsdp_checkpoint.py); its arguments and
nesting are checked in-process; paddle's flex_checkpoint module paths name the checkpoint objects."""
import numpy as np
import pytest

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from conftest import assert_ok, launch
from pycoll.distributed.fsdp import MixedPrecisionPolicy, OffloadPolicy, fully_shard


def net():
    pycoll.seed(5)
    return nn.Sequential(nn.Linear(4, 3), nn.Tanh(), nn.Linear(3, 2))


def test_fully_shard_trains_as_data_parallel_holding_a_share_on_2_ranks():
    assert_ok(launch(2, "fsdp_training.py", timeout=60), expect_lines=2)


def test_a_whole_checkpoint_resumes_in_new_processes_on_2_ranks(tmp_path):
    assert_ok(launch(2, "fsdp_checkpoint.py", "save", str(tmp_path), timeout=60), expect_lines=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["losses0.json", "losses1.json", "model.pdopt",
                                                          "model.pdparams"]
    assert_ok(launch(2, "fsdp_checkpoint.py", "load", str(tmp_path), timeout=60), expect_lines=2)


def test_nested_fully_shard_is_refused_naming_the_sharded_sub_layers():
    model = net()
    fully_shard(model[0])
    fully_shard(model[2])
    with pytest.raises(ValueError) as info:
        fully_shard(model)
    assert "sub-layers ['0', '2']" in str(info.value) and "call fully_shard once, on the root" in str(info.value)
    assert not hasattr(model, "_fully_shard_state")


def test_fully_shard_inside_a_sharded_layer_is_refused():
    model = fully_shard(net())
    with pytest.raises(ValueError, match="already sharded by fully_shard on an enclosing layer"):
        fully_shard(model[0])


def test_state_dict_hooks_see_and_may_replace_the_whole_dict():
    """paddle's register_state_dict_hook: hook(destination), its return value (not None) replaces
    it; a sub-layer's hook sees the prefixed keys; set_state_dict finds the real parameters
    without the hooks, and runs the load pre/post hooks of every layer it loads."""
    model = net()
    seen, calls = [], []
    model[0].register_state_dict_hook(lambda out: seen.append(list(out)))
    handle = model.register_state_dict_hook(lambda out: {k: v * 2 for k, v in out.items()})
    model[2].register_load_state_dict_pre_hook(lambda layer, state: calls.append(("pre", layer, sorted(state))))
    model[2].register_load_state_dict_post_hook(lambda layer: calls.append(("post", layer)))
    doubled = model.state_dict()
    assert seen == [["0.weight", "0.bias"]]
    np.testing.assert_array_equal(doubled["2.bias"].numpy(), 2 * model[2].bias.numpy())
    handle.remove()
    assert model.state_dict()["2.bias"] is model[2].bias
    assert model.set_state_dict(doubled) == ([], [])
    np.testing.assert_array_equal(model[2].bias.numpy(), doubled["2.bias"].numpy())
    assert calls == [("pre", model[2], sorted(doubled)), ("post", model[2])]
    with pytest.raises(TypeError, match="register_state_dict_hook: hook must be callable"):
        model.register_state_dict_hook(3)


def test_mesh_is_keyword_only_as_in_paddle():
    # paddle 3.3.1: "fully_shard() takes 1 positional argument but 2 were given" for its own docstring's call
    with pytest.raises(TypeError, match="positional"):
        fully_shard(net(), dist.ProcessMesh([0], dim_names=["x"]))


def test_policies_have_paddles_defaults():
    # paddle 3.3.1 printed None None None True True for these fields
    policy = MixedPrecisionPolicy()
    assert (policy.param_dtype, policy.reduce_dtype, policy.output_dtype, policy.cast_forward_inputs) == \
        (None, None, None, True)
    assert OffloadPolicy().pin_memory is True
    policy.output_dtype = "float64"  # paddle's class takes its fields by assignment
    assert policy.output_dtype == "float64"


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(reshard_after_forward="yes"), TypeError, ["reshard_after_forward", "'yes'"]),
    (dict(reshard_after_forward=-1), ValueError, ["reshard_after_forward=-1"]),
    (dict(shard_placement_fn=lambda p: dist.Shard(1)), ValueError, ["shard_placement_fn", "Shard(0)"]),
    (dict(shard_placement_fn=lambda p: dist.Replicate()), ValueError, ["shard_placement_fn", "Replicate"]),
    (dict(shard_placement_fn=3), TypeError, ["shard_placement_fn"]),
    (dict(mp_policy="bf16"), TypeError, ["mp_policy", "MixedPrecisionPolicy"]),
    (dict(mp_policy=MixedPrecisionPolicy(param_dtype="float16")), ValueError, ["mp_policy.param_dtype", "float32"]),
    (dict(mp_policy=MixedPrecisionPolicy(reduce_dtype="bfloat16")), ValueError, ["mp_policy.reduce_dtype"]),
    (dict(mp_policy=MixedPrecisionPolicy(output_dtype="int32")), ValueError, ["mp_policy.output_dtype", "floating"]),
    (dict(offload_policy=True), TypeError, ["offload_policy", "OffloadPolicy"]),
    (dict(ignored_params=[nn.Linear(2, 2).weight]), ValueError, ["ignored_params", "not parameters of module"]),
    (dict(ignored_params=3), TypeError, ["ignored_params"]),
    (dict(enable_tensor_fusion_and_overlap=1), TypeError, ["enable_tensor_fusion_and_overlap"]),
    (dict(mesh=[0, 1]), TypeError, ["mesh", "ProcessMesh"]),
    (dict(mesh=dist.ProcessMesh([[0]], dim_names=["a", "b"])), ValueError, ["mesh", "1-D"]),
    (dict(mesh=dist.ProcessMesh([1], dim_names=["x"])), ValueError, ["mesh", "outside this job"]),
])
def test_bad_arguments_are_refused_by_name(kwargs, error, words):
    with pytest.raises(error) as info:
        fully_shard(net(), **kwargs)
    for word in words:
        assert word in str(info.value)


def test_module_must_be_a_layer_sharded_once():
    with pytest.raises(TypeError, match="module must be a pycoll.nn.Layer"):
        fully_shard(pycoll.DataParallel(net()))
    model = fully_shard(net())
    with pytest.raises(ValueError, match="already fully sharded"):
        fully_shard(model)


def test_an_optimizer_built_before_steps_as_unsharded_on_one_rank():
    """The sharded layer is the same object and the optimizer built before it keeps training it
    (on one rank nothing is cut; the values equal an untouched model's)."""
    x = pycoll.to_tensor(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
    results = []
    for shard in (False, True):
        model = net()
        opt = pycoll.optimizer.AdamW(learning_rate=0.1, parameters=model.parameters(),
                                     grad_clip=nn.ClipGradByGlobalNorm(0.1))
        if shard:
            assert fully_shard(model) is model
        for _ in range(3):
            (model(x) ** 2).mean().backward()
            opt.step()
            opt.clear_grad()
        results.append([p.numpy() for p in model.parameters()])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert not np.allclose(results[0][0], net()[0].weight.numpy())  # it trained


def test_mp_policy_casts_outputs_and_inputs():
    model = fully_shard(net(), mp_policy=MixedPrecisionPolicy(param_dtype="float32", output_dtype="float64"))
    out = model(pycoll.to_tensor(np.ones((2, 4), np.float64)))  # the input is cast to float32 first
    assert out.dtype == np.float64
    out.sum().backward()
    assert model[0].weight.grad.dtype == np.float32


def test_flex_checkpoint_module_paths_name_the_same_objects():
    from pycoll.distributed.flex_checkpoint.dcp import load_state_dict, save_state_dict, sharded_weight
    assert sharded_weight.ShardedWeight is dist.ShardedWeight
    assert sharded_weight.build_sharded_state_dict is dist.build_sharded_state_dict
    assert load_state_dict.load_state_dict is dist.load_state_dict
    assert load_state_dict.load_merged_state_dict is dist.load_merged_state_dict
    assert save_state_dict.save_state_dict is dist.save_state_dict


def test_flex_checkpoint_is_an_attribute_of_dist_as_in_paddle():
    import subprocess
    import sys
    code = ("import pycoll.distributed as dist; "
            "assert dist.flex_checkpoint.dcp.sharded_weight.ShardedWeight is dist.ShardedWeight")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
