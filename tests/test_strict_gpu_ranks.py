"""pycoll's distributed GPU paths on 2 ranks without a GPU: tensors on "gpu" over the strict CuPy
stand-in (tests/strict_cupy.py: device arrays that are no NumPy arrays and refuse host mixing),
the NCCL engine's bytes moved over MPI (tests/host_cuda.py). DataParallel, group_sharded_parallel
with a GradScaler and a global-norm clip, recompute, SyncBatchNorm, the object collectives and
alltoall_single, an Embedding(sparse=True) averaged as rows (tests/ranks/strict_gpu_training.py); fleet's tensor, sequence and pipeline
parallelism and ShardingParallel (strict_gpu_fleet.py); auto-parallel's shard_tensor, matmul,
backward and reshard (strict_gpu_auto.py). Each is checked against the same computation on CPU
tensors in the same process, to 1e-6. Streams, real device memory and CuPy's own numerics are
not checked (the ``gpu`` tests are)."""
from conftest import assert_ok, launch

STRICT_GPU = {"PYCOLL_BACKEND": "nccl", "NCCL_SOCKET_IFNAME": "lo", "NCCL_IB_DISABLE": "1"}


def test_training_paths_on_two_ranks_of_strict_device_tensors_equal_the_cpu():
    result = launch(2, "strict_gpu_training.py", env=STRICT_GPU, timeout=180)
    assert_ok(result, expect_lines=2)
    for part in ("dp(", "dp_rows(", "sharding(", "recompute", "sync_batch_norm", "objects", "mp2(", "sequence_parallel",
                 "pp2(", "sharding2(", "auto("):
        assert part in result.stdout, (part, result.stdout)


def test_each_rank_naming_its_own_group_gets_it_on_nccl_as_on_the_cpu_backend():
    for backend, env in (("nccl", STRICT_GPU), ("cpu", {"PYCOLL_BACKEND": "cpu"})):
        result = launch(2, "per_rank_groups.py", backend, env=env, timeout=90)
        assert_ok(result, expect_lines=2)


def test_bfloat16_parameters_under_data_parallel_and_sharding_on_strict_device_tensors():
    """The device path of a bfloat16 gradient (DataParallel's buckets, os_g's reduce-scatter) on
    the NCCL engine: averaged in bfloat16, as on the cpu backend (tests/ranks/dp_bfloat16.py)."""
    assert_ok(launch(2, "dp_bfloat16.py", "strict", env=STRICT_GPU, timeout=120), expect_lines=2)


def test_the_collective_check_on_the_nccl_engine():
    """PYCOLL_CHECK's records gathered on the NCCL engine (device arrays, the stream joined before
    the host reads them): agreement, a difference and a refusal (tests/ranks/check_on_nccl.py)."""
    assert_ok(launch(2, "check_on_nccl.py", env={**STRICT_GPU, "PYCOLL_CHECK": "1"}, timeout=120), expect_lines=2)
