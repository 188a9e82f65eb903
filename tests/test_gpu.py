"""DataParallel, sharding, auto-parallel and the seed examples on NCCL ranks sharing one GPU (run with `pytest -m gpu`).

Ranks on one GPU: pycoll gives each its own NCCL_HOSTID (see rendezvous), and NCCL's socket
transport runs over the loopback interface.
"""
import re

import pytest

from conftest import SEED_EXAMPLES, SEEDS, SEEDS_MISSING, assert_ok, launch, run_seed_example

pytestmark = pytest.mark.gpu
GPU_ENV = {"PYCOLL_DEVICE": "gpu", "NCCL_SOCKET_IFNAME": "lo"}


def _checksums(stdout):
    return [float(x) for x in re.findall(r"checksum=([-0-9.]+)", stdout)]


@pytest.mark.parametrize("mode", ["sync", "no_sync", "unused"])
def test_data_parallel_on_gpu_equals_the_cpu_run(mode):
    gpu = launch(2, "dp_equivalence.py", mode, env=GPU_ENV, timeout=300)
    assert_ok(gpu, expect_lines=2)
    cpu = launch(2, "dp_equivalence.py", mode, env={"PYCOLL_DEVICE": "cpu"})
    assert_ok(cpu, expect_lines=2)
    assert _checksums(gpu.stdout) == pytest.approx(_checksums(cpu.stdout), rel=1e-5)


def test_bfloat16_parameters_under_data_parallel_and_sharding_on_gpu_ranks():
    """The CUDA kernels' bfloat16 scaling in DataParallel's buckets and os_g's reduce-scatter."""
    assert_ok(launch(2, "dp_bfloat16.py", "gpu", env=GPU_ENV, timeout=300), expect_lines=2)


@pytest.mark.skipif(not SEEDS.is_dir(), reason=SEEDS_MISSING)
@pytest.mark.parametrize("example, marker", SEED_EXAMPLES)
def test_seed_examples_on_gpu_ranks(example, marker, tmp_path):
    result = run_seed_example(example, tmp_path, env=GPU_ENV, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count(marker) == 2, result.stdout + result.stderr


def test_every_sharding_level_on_gpu_ranks_trains_like_data_parallel(tmp_path):
    """The levels' reduce-scatters and all-gathers on NCCL; offload keeps the state on the host."""
    assert_ok(launch(2, "sharding_equivalence.py", str(tmp_path), env=GPU_ENV, timeout=300), expect_lines=2)


@pytest.mark.parametrize("script", ["auto_parallel_train.py", "auto_parallel_eager.py"])
def test_auto_parallel_on_gpu_ranks_trains_like_one_process(script):
    """DistModel (DataParallel, sharding) and the eager loop (a split batch's gradients summed in
    backward, ShardingStage1's all-gathered blocks) on NCCL, against one process on the GPU."""
    assert_ok(launch(2, script, "dp", env=GPU_ENV, timeout=300), expect_lines=2)


def test_calls_on_a_tensor_a_task_holds_run_after_it_on_gpu_ranks():
    """A non-blocking call runs on the NCCL engine's side stream: a later call on the same
    tensor (on the current stream) must wait for it (tests/ranks/overlapping_tasks.py)."""
    assert_ok(launch(2, "overlapping_tasks.py", "gpu", env=GPU_ENV, timeout=300), expect_lines=2)


@pytest.mark.parametrize("script, case", [("recompute_mp.py", "dp"), ("recompute_mp.py", "mp"),
                                          ("sync_batch_norm.py", None), ("amp_scaler.py", None)])
def test_recompute_parallel_cross_entropy_sync_batch_norm_and_the_scaler_on_gpu_ranks(script, case):
    """This session's additions on NCCL: recompute under DataParallel and the tracker, the
    class-split cross-entropy's all-reduces, SyncBatchNorm's statistics, and the GradScaler's
    found-inf agreement over sharded pieces (on CuPy gradients)."""
    args = [case] if case else []
    assert_ok(launch(2, script, *args, env=GPU_ENV, timeout=300), expect_lines=2)
