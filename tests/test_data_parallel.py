"""DataParallel, fused gradient averaging, the batch sampler and the seed examples."""
from pathlib import Path

import numpy as np
import pytest

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from conftest import SEED_EXAMPLES, SEEDS, SEEDS_MISSING, assert_ok, launch, launch_source, run_seed_example
from pycoll.io import DistributedBatchSampler
from pycoll.parallel.buckets import assign_buckets

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("nprocs", [2, 3])
@pytest.mark.parametrize("mode", ["sync", "no_sync", "unused"])
def test_data_parallel_trains_like_one_process_on_the_global_batch(mode, nprocs):
    assert_ok(launch(nprocs, "dp_equivalence.py", mode), expect_lines=nprocs)


def test_parameters_without_gradient_are_reduced_after_backward_and_named_once():
    """paddle trains a model with unused parameters without find_unused_parameters: so does
    pycoll (their buckets go after backward, in bucket order on every rank), and it says so once."""
    result = launch(2, "dp_equivalence.py", "unused_late")
    output = result.stdout + result.stderr
    assert_ok(result, expect_lines=2)
    assert output.count("received no gradient in this backward") == 2, output  # once per rank
    assert "'branch.weight'" in output and "find_unused_parameters=True" in output


@pytest.mark.parametrize("mode", ["no_sync_unused", "zero_grad", "nobody"])
def test_replicas_agree_where_only_some_ranks_compute_a_gradient(mode):
    """A gradient from no_sync micro-steps counts as used (find_unused_parameters=True); an
    exactly-zero gradient on one rank is a gradient for every rank (find_unused_parameters=False):
    in both, every rank steps the parameter alike. Both diverged before (found by a probe)."""
    assert_ok(launch(2, "dp_grad_agreement.py", mode), expect_lines=2)


def test_sync_params_buffers_brings_parameters_and_buffers_from_one_rank():
    """paddle's dist.parallel.sync_params_buffers (found missing by a new-user probe)."""
    assert_ok(launch(2, "sync_params.py"), expect_lines=2)


def test_paddles_module_paths_reach_the_same_objects():
    """paddle.distributed.parallel / .communication(.stream) and paddle.framework(.random)."""
    from pycoll.distributed.communication import stream as comm_stream
    from pycoll.framework import random as framework_random

    assert dist.parallel.DataParallel is pycoll.DataParallel
    assert dist.parallel.sync_params_buffers is pycoll.parallel.sync_params_buffers
    assert dist.communication.all_reduce is dist.all_reduce and dist.communication.all_to_all is dist.alltoall
    assert comm_stream.all_reduce is dist.stream.all_reduce and dist.communication.stream is comm_stream
    assert pycoll.framework.seed is pycoll.seed and framework_random.get_rng_state is pycoll.get_rng_state


def test_ranks_wrapping_different_models_get_a_clear_error():
    result = launch(2, "dp_mismatch.py")
    assert_ok(result, expect_lines=2)
    assert "0.weight: rank 0 has [[4, 8], 'float32', 'averaged'], rank 1 has [[4, 9], 'float32', 'averaged']" in result.stdout


def test_digits_example_reaches_90_percent_on_two_ranks():
    pytest.importorskip("sklearn")
    result = launch(2, str(ROOT / "examples" / "digits_data_parallel.py"), timeout=300)
    assert_ok(result)
    accuracy = float(result.stdout.split("held-out accuracy")[1].split()[0])
    assert accuracy >= 0.9, result.stdout


@pytest.mark.skipif(not SEEDS.is_dir(), reason=SEEDS_MISSING)
@pytest.mark.parametrize("example, marker", SEED_EXAMPLES)
def test_seed_examples_run_as_their_headers_say(example, marker, tmp_path):
    result = run_seed_example(example, tmp_path)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert result.stdout.count(marker) == 2, output


def test_buckets_fill_in_ready_order_and_keep_the_last_one_small():
    nbytes = [400, 400, 400, 400, 100, 100]
    dtypes = ["f4"] * 6
    # ready order = reverse parameter order; the earliest parameters form the last, small bucket
    assert assign_buckets([5, 4, 3, 2, 1, 0], nbytes, dtypes, cap=900, last_cap=500) == [[5, 4, 3], [2, 1], [0]]
    assert assign_buckets([5, 4, 3, 2, 1, 0], nbytes, dtypes, cap=10_000, last_cap=10_000) == [[5, 4, 3, 2, 1, 0]]
    # a tensor larger than the cap still gets a bucket of its own; dtypes never mix
    assert assign_buckets([0, 1, 2], [50, 5000, 50], ["f4", "f4", "f8"], cap=100, last_cap=100) == [[0], [1], [2]]


def test_sampler_splits_pads_and_shuffles_alike_on_every_rank():
    data = list(range(10))
    # paddle 3.3.1's DistributedBatchSampler gives these (printed from it): each global step dealt
    # out in blocks of batch_size, padded by the start; with shuffle, RandomState(epoch), the
    # epoch moving on after each pass
    shares = [list(DistributedBatchSampler(data, batch_size=2, num_replicas=3, rank=r)) for r in range(3)]
    assert shares == [[[0, 1], [6, 7]], [[2, 3], [8, 9]], [[4, 5], [0, 1]]]
    two = [list(DistributedBatchSampler(data, batch_size=2, num_replicas=2, rank=r)) for r in range(2)]
    assert two == [[[0, 1], [4, 5], [8]], [[2, 3], [6, 7], [9]]]
    shuffled = DistributedBatchSampler(list(range(17)), 4, num_replicas=2, rank=1, shuffle=True)
    assert list(shuffled) == [[14, 4, 2, 16], [11, 3, 0, 5], [12]]
    assert list(shuffled) == [[14, 7, 15, 4], [16, 9, 8, 12], [5]]
    assert len(DistributedBatchSampler(data, batch_size=3, num_replicas=3, rank=0)) == 2
    assert len(DistributedBatchSampler(data, batch_size=3, num_replicas=3, rank=0, drop_last=True)) == 1
    samplers = [DistributedBatchSampler(data, 5, num_replicas=2, rank=r, shuffle=True) for r in range(2)]
    for s in samplers:
        s.set_epoch(3)
    epoch3 = [sum(list(s), []) for s in samplers]
    assert sorted(epoch3[0] + epoch3[1]) == data and epoch3[0] != list(range(0, 10, 2))
    samplers[0].set_epoch(4)
    assert sum(list(samplers[0]), []) != epoch3[0]
    with pytest.raises(ValueError, match="rank=2"):
        DistributedBatchSampler(data, 2, num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="batch_size"):
        DistributedBatchSampler(data, 0, num_replicas=1, rank=0)


def test_one_rank_data_parallel_is_the_plain_model():
    dist.init_parallel_env()
    try:
        inner = nn.Linear(3, 2)
        dp = pycoll.DataParallel(inner)
        assert dp._layers is inner and list(dp.state_dict()) == ["weight", "bias"]
        assert dp.group is dist.get_group(0)  # paddle's attribute: the world when none was given
        assert [id(p) for p in dp.parameters()] == [id(p) for p in inner.parameters()]
        dp(pycoll.ones([4, 3])).sum().backward()
        np.testing.assert_allclose(inner.weight.grad.numpy(), np.full((3, 2), 4.0))
        with pytest.raises(ValueError, match="comm_buffer_size=-1"):
            pycoll.DataParallel(inner, comm_buffer_size=-1)
        with pytest.raises(TypeError, match="last_comm_buffer_size must be a number of MB, got '1'"):
            pycoll.DataParallel(inner, last_comm_buffer_size="1")
        pycoll.DataParallel(inner, comm_buffer_size=0, last_comm_buffer_size=0)  # paddle's: a bucket each
        # paddle 2.0's deprecated calls, kept by paddle 3.3.1 as no-ops
        loss = dp(pycoll.ones([1, 3])).sum()
        assert dp.scale_loss(loss) is loss and dp.apply_collective_grads() is None
        with pytest.raises(TypeError, match="Layer"):
            pycoll.DataParallel(lambda x: x)
    finally:
        dist.destroy_process_group()


def test_gradient_compression_the_cpu_backend_cannot_reduce_is_refused_at_wrap_time(tmp_path):
    assert_ok(launch_source(tmp_path,
        "import pytest, pycoll, pycoll.nn as nn, pycoll.distributed as dist\n"
        "dist.init_parallel_env()\n"
        "with pytest.raises(ValueError, match=\"comm_dtype='float16' cannot be all-reduced by the cpu\"):\n"
        "    pycoll.DataParallel(nn.Linear(2, 2), comm_dtype='float16')\n"
        "with pytest.raises(ValueError, match=\"comm_dtype='int8'\"):\n"
        "    pycoll.DataParallel(nn.Linear(2, 2), comm_dtype='int8')\n"
        "print(f'compression OK rank={dist.get_rank()}')\n"), expect_lines=2)


def test_a_model_converted_after_wrapping_is_told_to_convert_before(tmp_path):
    # paddle 3.3.1 raises ValueError too; pycoll's named an internal kernel (a probe)
    assert_ok(launch_source(tmp_path,
        "import numpy as np, pytest, pycoll, pycoll.nn as nn, pycoll.distributed as dist\n"
        "dist.init_parallel_env()\n"
        "model = pycoll.DataParallel(nn.Linear(3, 2)).to(dtype='float64')\n"
        "x = pycoll.to_tensor(np.ones([2, 3]))\n"
        "with pytest.raises(ValueError, match=r\"dtype \\['float64'\\] in a bucket built for float32.*convert the model \"\n"
        "                                   r\"before wrapping it\"):\n"
        "    model(x).mean().backward()\n"
        "print(f'convert OK rank={dist.get_rank()}')\n"), expect_lines=2)


def test_a_second_backward_of_one_forward_is_said_to_leave_the_ranks_apart(tmp_path):
    # paddle 3.3.1 says nothing (rank 0 ends with 2.5, rank 1 with 3.5); torch's DDP raises
    result = launch_source(tmp_path,
        "import numpy as np, pycoll, pycoll.nn as nn, pycoll.distributed as dist\n"
        "dist.init_parallel_env()\n"
        "rank = dist.get_rank()\n"
        "model = pycoll.DataParallel(nn.Linear(1, 1))\n"
        "for _ in range(2):\n"
        "    loss = model(pycoll.to_tensor([[rank + 1.0]])).sum()\n"
        "    loss.backward(retain_graph=True)\n"
        "    loss.backward()\n"
        "print(f'twice OK rank={rank}')\n")
    assert_ok(result, expect_lines=2)
    output = result.stdout + result.stderr
    for rank in range(2):  # once per rank
        assert output.count(f"[rank {rank}] pycoll: DataParallel: a second backward of one forward") == 1, output


def test_a_parameter_unfrozen_after_wrapping_is_said_to_go_unaveraged(tmp_path):
    # the reducer's buckets hold the parameters trainable at wrap time; torch's DDP and paddle say
    # nothing when a frozen one is unfrozen later, and each rank trains its own copy
    result = launch_source(tmp_path,
        "import numpy as np, pycoll, pycoll.nn as nn, pycoll.distributed as dist\n"
        "dist.init_parallel_env()\n"
        "rank = dist.get_rank()\n"
        "net = nn.Sequential(nn.Linear(1, 1), nn.Linear(1, 1))\n"
        "net[0].weight.stop_gradient = True\n"
        "model = pycoll.DataParallel(net)\n"
        "model(pycoll.to_tensor([[rank + 1.0]])).sum().backward()\n"
        "net[0].weight.stop_gradient = False\n"
        "for _ in range(2):\n"
        "    model(pycoll.to_tensor([[rank + 1.0]])).sum().backward()\n"
        "rewrapped = pycoll.DataParallel(net)  # as the warning advises: quiet, and averaged\n"
        "net.clear_gradients()\n"
        "rewrapped(pycoll.to_tensor([[rank + 1.0]])).sum().backward()\n"
        "grads = []\n"
        "dist.all_gather(grads, net[0].weight.grad)\n"
        "assert np.array_equal(grads[0].numpy(), grads[1].numpy())\n"
        "net[1](pycoll.to_tensor([[1.0]])).sum().backward()  # the inner layers alone: no retain_graph warning\n"
        "class Head(nn.Layer):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.head = nn.Linear(1, 1)\n"
        "    def forward(self, x):\n"
        "        return self.head(x)\n"
        "other = Head()\n"
        "other.head.weight.stop_gradient = True\n"
        "pycoll.DataParallel(other)\n"
        "other.head.weight.stop_gradient = False\n"
        "again = pycoll.DataParallel(other)  # wrapped again after unfreezing: averaged, nothing said\n"
        "again(pycoll.to_tensor([[rank + 1.0]])).sum().backward()\n"
        "print(f'unfrozen OK rank={rank}')\n")
    assert_ok(result, expect_lines=2)
    output = result.stdout + result.stderr
    for rank in range(2):  # once per rank, naming the parameter
        assert output.count(f"[rank {rank}] pycoll: DataParallel: parameter '0.weight' was frozen") == 1, output
    assert "a second backward of one forward" not in output and "'head.weight' was frozen" not in output


def test_find_unused_parameters_in_the_forms_a_probe_found_broken():
    assert_ok(launch(2, "dp_unused_forms.py", timeout=120), expect_lines=2)


def test_bfloat16_parameters_train_with_their_gradients_averaged_in_bfloat16():
    assert_ok(launch(2, "dp_bfloat16.py", timeout=90), expect_lines=2)
