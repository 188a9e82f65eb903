"""Tensor (model) parallelism: the parallel layers, split, and model x data parallel training.

The multi-rank tests start real MPI ranks (tests/ranks/mp_*.py); each worker checks many cases
against the unsplit layers computed on every rank. The in-process tests cover a world of one
rank (no communication) and the errors that need no other ranks.
"""
from pathlib import Path

import numpy as np
import pytest

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from conftest import assert_ok, launch
from pycoll.parallel import mp_layers, mp_split as split_module
from pycoll.parallel.mp_layers import ColumnParallelLinear, RowParallelLinear, VocabParallelEmbedding
from pycoll.parallel.mp_split import split

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "hybrid_parallel_mlp.py"
GPU_ENV = {"PYCOLL_DEVICE": "gpu", "PYCOLL_BACKEND": "nccl", "NCCL_SOCKET_IFNAME": "lo",
           "NCCL_IB_DISABLE": "1"}


# -- on several ranks ------------------------------------------------------------------------
@pytest.mark.parametrize("nprocs", [2, 4])
def test_parallel_layers_and_split_match_the_unsplit_layers(nprocs):
    assert_ok(launch(nprocs, "mp_layers.py", timeout=60), expect_lines=nprocs)


@pytest.mark.parametrize("setup", ["groups", "fleet"])
def test_model_and_data_parallel_on_four_ranks_trains_like_one_process(setup):
    assert_ok(launch(4, "mp_hybrid.py", setup, timeout=60), expect_lines=4)


@pytest.mark.parametrize("case", ["dp", "mp"])
def test_recompute_parallel_cross_entropy_and_the_rng_tracker_on_two_ranks(case):
    assert_ok(launch(2, "recompute_mp.py", case, timeout=60), expect_lines=2)


def _loss_table(stdout):
    rows = [line.split() for line in stdout.splitlines() if line[:4].strip().isdigit()]
    return np.array([[float(hybrid), float(single)] for _, hybrid, single in rows])


def test_hybrid_example_follows_single_process_training_and_converges():
    result = launch(4, str(EXAMPLE), timeout=60)
    assert_ok(result)
    losses = _loss_table(result.stdout)
    assert len(losses) == 20, result.stdout
    np.testing.assert_allclose(losses[:, 0], losses[:, 1], rtol=1e-4, atol=2e-6)
    assert losses[-5:, 0].mean() < 0.2 * losses[0, 0], result.stdout


@pytest.mark.gpu
@pytest.mark.timeout(660)
@pytest.mark.parametrize("worker, nprocs", [("mp_layers.py", 2), ("mp_hybrid.py", 4)])
def test_gpu_ranks_sharing_one_gpu(worker, nprocs):
    assert_ok(launch(nprocs, worker, env=GPU_ENV, timeout=600), expect_lines=nprocs)


# -- in one process (a world of one rank) -----------------------------------------------------
def _same_grads(a, b):
    for p, q in zip(a.parameters(), b.parameters()):
        np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())


@pytest.mark.parametrize("make, split_flags, axes", [
    (lambda: ColumnParallelLinear(4, 6, has_bias=True, gather_output=False), [True, True], [1, 0]),
    (lambda: RowParallelLinear(4, 6, input_is_parallel=True), [True, False], [0, None]),  # the bias is whole
])
def test_a_world_of_one_is_the_plain_linear(make, split_flags, axes):
    pycoll.seed(1)
    layer = make()
    pycoll.seed(1)
    ref = nn.Linear(4, 6)
    assert [p.is_distributed for p in layer.parameters()] == split_flags
    assert [getattr(p, "split_axis", None) for p in layer.parameters()] == axes  # paddle's
    x = pycoll.randn([3, 4])
    for model in (layer, ref):
        model(x).sum().backward()
    np.testing.assert_array_equal(layer(x).numpy(), ref(x).numpy())
    _same_grads(layer, ref)


def test_a_world_of_one_is_the_plain_embedding():
    pycoll.seed(2)
    layer = VocabParallelEmbedding(10, 3)
    pycoll.seed(2)
    ref = nn.Embedding(10, 3)
    ids = pycoll.to_tensor([[0, 9, 9], [4, 0, 1]])
    for model in (layer, ref):
        (model(ids) * 2).sum().backward()
    np.testing.assert_array_equal(layer(ids).numpy(), ref(ids).numpy())
    _same_grads(layer, ref)


def test_the_parallel_layers_parameters_are_named_as_the_layers_they_split():
    """paddle names them ``linear_N.w_0`` / ``embedding_N.w_0``, one counter with nn.Linear's (a
    probe: pycoll's ``column_parallel_linear_0.w_0`` keyed optimizer state paddle's files lack)."""
    names = [p.name for layer in (nn.Linear(2, 2), ColumnParallelLinear(2, 2, has_bias=True, gather_output=False),
                                  RowParallelLinear(2, 2, name="fc2"), VocabParallelEmbedding(4, 2))
             for p in layer.parameters()]
    assert [n.split("_")[0] for n in names] == ["linear"] * 6 + ["embedding"], names
    first = int(names[0].split("_")[1].split(".")[0])
    assert names[:6] == [f"linear_{first + i // 2}.{'wb'[i % 2]}_0" for i in range(6)], names


def test_split_reuses_its_layer_by_name():
    x = pycoll.randn([2, 4])
    first = split(x, [4, 3], "linear", axis=1, name="test_reuse")
    layer = split_module.split_layers()["test_reuse"]
    second = split(x, (4, 3), "linear", axis=1, name="test_reuse")
    assert split_module.split_layers()["test_reuse"] is layer
    np.testing.assert_array_equal(first.numpy(), second.numpy())
    assert isinstance(layer, ColumnParallelLinear) and layer.weight.shape == [4, 3]


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(size=[4, 3], operation="conv"), "operation must be 'linear' or 'embedding', got 'conv'"),
    (dict(size=[4], operation="linear"), "size must be the full weight shape"),
    (dict(size=[4, 0], operation="linear"), "got [4, 0]"),
    (dict(size=[4, 3], operation="linear", axis=2), "axis=2 for operation='linear'"),
    (dict(size=[4, 3], operation="embedding", axis=1), "axis=1 for operation='embedding'"),
    (dict(size=[4, 3], operation="linear", num_partitions=2), "num_partitions=2"),
    (dict(size=[4, 3], operation="embedding", gather_out=False), "gather_out=False"),
    (dict(size=[4, 3], operation="linear", name=""), "name must be None or a non-empty str"),
])
def test_split_rejects_bad_arguments_naming_them(kwargs, fragment):
    kwargs = {"num_partitions": 1, "name": "test_bad", **kwargs}
    with pytest.raises(ValueError) as info:
        split(pycoll.randn([2, 4]), **kwargs)
    assert fragment in str(info.value)
    assert "test_bad" not in split_module.split_layers()


@pytest.mark.parametrize("make, fragment", [
    (lambda: ColumnParallelLinear(0, 4), "in_features must be a positive int, got 0"),
    (lambda: VocabParallelEmbedding(8, -1), "embedding_dim must be a positive int, got -1"),
    (lambda: ColumnParallelLinear(4, 4, weight_attr=False), "weight_attr=False"),
])
def test_layers_reject_bad_sizes(make, fragment):
    with pytest.raises(ValueError) as info:
        make()
    assert fragment in str(info.value)


@pytest.mark.parametrize("make, fragment", [
    (lambda: RowParallelLinear(4, 2.5), "out_features must be a positive int, got float 2.5"),
    (lambda: ColumnParallelLinear("8", 4), "in_features must be a positive int, got str '8'"),
])
def test_layers_reject_sizes_of_another_type_as_paddle_does(make, fragment):
    with pytest.raises(TypeError) as info:
        make()
    assert fragment in str(info.value)


def test_embedding_rejects_float_ids():
    with pytest.raises(TypeError, match="integer ids"):
        VocabParallelEmbedding(4, 2)(pycoll.to_tensor([0.5]))


def test_pycoll_distributed_exports_the_model_parallel_api():
    assert dist.ColumnParallelLinear is mp_layers.ColumnParallelLinear
    assert dist.RowParallelLinear is mp_layers.RowParallelLinear
    assert dist.VocabParallelEmbedding is mp_layers.VocabParallelEmbedding
    assert dist.split is split_module.split
    assert dist.split_layers is split_module.split_layers
