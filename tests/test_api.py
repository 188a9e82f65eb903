"""The public API in one process (a world of one): environment, semantics and argument errors."""
import numpy as np
import pytest

import pycoll
import pycoll.distributed as dist


@pytest.fixture
def world():
    group = dist.init_parallel_env()
    yield group
    dist.destroy_process_group()


def test_before_init_queries_read_the_launcher_environment(monkeypatch):
    assert not dist.is_initialized()
    monkeypatch.setenv("PMI_RANK", "3")
    monkeypatch.setenv("PMI_SIZE", "8")
    monkeypatch.setenv("MPI_LOCALRANKID", "1")
    env = dist.ParallelEnv()
    assert (env.rank, env.world_size, env.nranks, env.local_rank) == (3, 8, 8, 1)
    monkeypatch.delenv("PADDLE_TRAINER_ENDPOINTS", raising=False)
    monkeypatch.delenv("PADDLE_CURRENT_ENDPOINT", raising=False)
    assert (env.trainer_endpoints, env.current_endpoint) == ([], "")
    assert (env.nrings, env.device_type) == (1, "cpu")
    monkeypatch.setenv("FLAGS_selected_gpus", "3,4")
    assert env.device_id == 3, "paddle's launcher names the GPU in FLAGS_selected_gpus"
    assert dist.get_rank() == 3 and dist.get_world_size() == 8
    with pytest.raises(ValueError, match="not initialized.*init_parallel_env"):
        dist.all_reduce(np.ones(2))
    with pytest.raises(RuntimeError, match="not initialized"):  # what paddle raises
        dist.barrier()


@pytest.mark.parametrize("var, value, words", [
    ("PYCOLL_TIMEOUT", "soon", "PYCOLL_TIMEOUT='soon'"),
    ("PYCOLL_TIMEOUT", "-1", "positive"),
    ("PYCOLL_TIMEOUT", "nan", "PYCOLL_TIMEOUT='nan': it must be a positive, finite"),
    ("PYCOLL_TIMEOUT", "inf", "finite"),
    ("PYCOLL_TIMEOUT", "3e9", "at most 1e\\+06"),
    ("PYCOLL_BACKEND", "ucc", r"init_parallel_env: backend 'ucc' \(argument or PYCOLL_BACKEND\) is not available; "
                              r"available: cpu, nccl \(and gloo, paddle's name for cpu\)"),
])
def test_bad_environment_is_refused_before_starting(monkeypatch, var, value, words):
    monkeypatch.setenv(var, value)
    with pytest.raises(ValueError, match=words):
        dist.init_parallel_env()
    assert not dist.is_initialized()


def test_new_group_names_itself_refusing_an_unknown_backend():
    dist.init_parallel_env()
    try:
        with pytest.raises(ValueError, match="new_group: backend 'bogus'"):
            dist.new_group([0], backend="bogus")
        assert dist.new_group([0], backend="gloo").nranks == 1
    finally:
        dist.destroy_process_group()


def test_a_group_of_no_rank_is_paddles_and_calls_on_it_do_nothing():
    dist.init_parallel_env()
    try:
        group = dist.new_group([])  # paddle 3.3.1: ranks [], nranks 0, rank -1, not a member
        assert (group.ranks, group.nranks, group.rank, group.is_member()) == ([], 0, -1, False)
        x = np.ones(2)
        dist.all_reduce(x, group=group)
        dist.broadcast(x, src=0, group=group)
        assert x.tolist() == [1.0, 1.0]
        assert dist.new_group([0]).nranks == 1  # the groups after it are made as before
    finally:
        dist.destroy_process_group()


def test_nccl_without_a_usable_gpu_falls_back_to_the_cpu_with_a_log_line(monkeypatch, caplog):
    monkeypatch.setenv("PYCOLL_BACKEND", "nccl")
    monkeypatch.setattr("pycoll.distributed.env.gpu_count", lambda: 0)
    with caplog.at_level("WARNING", logger="pycoll"):
        world = dist.init_parallel_env()
    try:
        assert world.engine.name == "cpu" and world.backend == "GLOO" and world.process_group is world.engine
        assert "nccl backend needs a visible GPU" in caplog.text
    finally:
        dist.destroy_process_group()


def test_a_torchrun_world_without_an_mpi_launcher_is_refused(monkeypatch):
    monkeypatch.setenv("WORLD_SIZE", "2")
    with pytest.raises(RuntimeError, match="WORLD_SIZE=2.*pycoll.launch"):
        dist.init_parallel_env()
    assert not dist.is_initialized()


def test_timeout_argument_is_checked(world):
    with pytest.raises(ValueError, match="timeout"):
        dist.new_group([0], timeout=0)
    assert dist.new_group([0], timeout=5).timeout == 5.0


def test_every_collective_on_a_world_of_one(world):
    assert world.nranks == 1 and dist.get_rank() == 0 and dist.get_world_size() == 1
    x = np.arange(6, dtype=np.float64).reshape(2, 3)
    dist.all_reduce(x, op=dist.ReduceOp.AVG)
    assert np.array_equal(x, np.arange(6).reshape(2, 3))
    dist.reduce(x, dst=0, op=dist.ReduceOp.PROD)
    dist.broadcast(x, src=0)
    got = []
    dist.all_gather(got, x)
    assert len(got) == 1 and np.array_equal(got[0], x) and got[0] is not x
    out = np.zeros(3)
    dist.scatter(out, [np.array([1.0, 2.0, 3.0])], src=0)
    assert np.array_equal(out, [1, 2, 3])
    dist.reduce_scatter(out, [np.array([4.0, 5.0, 6.0])])
    assert np.array_equal(out, [4, 5, 6])
    outs = []
    dist.alltoall(outs, [np.array([7, 8])])
    assert np.array_equal(outs[0], [7, 8])
    task = dist.all_reduce(x, sync_op=False)
    assert task.wait() and task.is_completed()
    dist.all_reduce(x, sync_op=False).synchronize()  # paddle's other name for waiting
    world = dist.get_group()
    assert world.get_global_rank(0) == 0 and dist.ParallelEnv().pg_timeout == 1800000
    with pytest.raises(ValueError, match="rank=1"):
        world.get_global_rank(1)
    assert dist.stream.all_to_all is dist.stream.alltoall
    dist.barrier()


def test_tensors_are_moved_in_place_and_gathered_as_tensors(world):
    t = pycoll.to_tensor(np.array([1.0, 2.0], np.float32))
    dist.all_reduce(t)
    assert np.array_equal(t.numpy(), [1.0, 2.0])
    gathered = []
    dist.all_gather(gathered, t)
    assert isinstance(gathered[0], pycoll.Tensor) and np.array_equal(gathered[0].numpy(), [1.0, 2.0])
    dist.broadcast(t, src=0)


class DeviceArray:
    """What a GPU array looks like to pycoll: anything with ``__cuda_array_interface__``."""

    __cuda_array_interface__ = {"shape": (2,), "typestr": "<f8", "data": (0, False), "version": 3}


BAD_CALLS = [
    # (description, call, exception, words in the message)
    ("a list as tensor", lambda: dist.all_reduce([1.0, 2.0]), TypeError, ["all_reduce", "tensor", "list"]),
    ("a string as tensor", lambda: dist.broadcast("abc", src=0), TypeError, ["broadcast", "tensor", "str"]),
    ("a GPU array on the cpu backend", lambda: dist.all_reduce(DeviceArray()), TypeError,
     ["all_reduce", "tensor is a GPU array", "DeviceArray", "move it to the host"]),
    ("object dtype", lambda: dist.all_reduce(np.array([None])), TypeError, ["object"]),
    ("AVG of bools", lambda: dist.reduce(np.ones(2, bool), dst=0, op=dist.ReduceOp.AVG), TypeError, ["AVG", "bool"]),
    ("AVG of ints", lambda: dist.all_reduce(np.ones(2, np.int64), op=dist.ReduceOp.AVG), TypeError, ["AVG", "int64"]),
    ("MIN of complex", lambda: dist.all_reduce(np.ones(2, np.complex128), op=dist.ReduceOp.MIN), TypeError, ["MIN", "complex"]),
    ("unknown op", lambda: dist.all_reduce(np.ones(2), op=9), ValueError, ["op=9"]),
    ("op as a string", lambda: dist.reduce_scatter(np.ones(2), [np.ones(2)], op="max"), ValueError, ["op='max'"]),
    ("read-only output", lambda: dist.all_reduce(np.broadcast_to(np.ones(1), (3,))), ValueError, ["read-only"]),
    ("src out of range", lambda: dist.broadcast(np.ones(2), src=1), ValueError, ["src=1", "world"]),
    ("negative dst", lambda: dist.reduce(np.ones(2), dst=-1), ValueError, ["dst=-1"]),
    ("float root", lambda: dist.scatter(np.ones(2), [np.ones(2)], src=0.0), TypeError, ["src"]),
    ("bool root", lambda: dist.broadcast(np.ones(2), src=True), TypeError, ["src"]),
    # one tensor is taken as paddle takes it (the ranks' tensors stacked), if it is of that size
    ("tensor_list of the wrong size", lambda: dist.all_gather(np.ones(3), np.ones(2)), ValueError,
     ["tensor_list", "shape [1, 2]"]),
    ("tensor_list neither list nor tensor", lambda: dist.all_gather("abc", np.ones(2)), TypeError, ["tensor_list"]),
    ("too long tensor_list", lambda: dist.all_gather([np.ones(2)] * 2, np.ones(2)), ValueError, ["tensor_list", "2 entries"]),
    ("mis-shaped gather output", lambda: dist.all_gather([np.ones(3)], np.ones(2)), ValueError, ["tensor_list[0]", "shape"]),
    ("mis-typed gather output", lambda: dist.all_gather([np.ones(2, np.int32)], np.ones(2)), ValueError, ["tensor_list[0]", "int32"]),
    ("scatter without a list", lambda: dist.scatter(np.ones(2), None, src=0), ValueError, ["tensor_list is None"]),
    ("scatter list too short", lambda: dist.scatter(np.ones(2), [], src=0), ValueError, ["tensor_list", "0 entries"]),
    ("scatter mis-shaped block", lambda: dist.scatter(np.ones(2), [np.ones(3)], src=0), ValueError, ["tensor_list[0]"]),
    ("reduce_scatter mis-typed block", lambda: dist.reduce_scatter(np.ones(2), [np.ones(2, np.float32)]), ValueError, ["tensor_list[0]", "float32"]),
    ("alltoall empty input", lambda: dist.alltoall([], []), ValueError, ["in_tensor_list", "0 entries"]),
    ("alltoall read-only output", lambda: dist.alltoall([np.broadcast_to(np.ones(1), (2,))], [np.ones(2)]), ValueError, ["out_tensor_list[0]", "read-only"]),
    ("send to itself", lambda: dist.send(np.ones(2), dst=0), ValueError, ["dst=0", "itself"]),
    ("recv from out of range", lambda: dist.recv(np.ones(2), src=4), ValueError, ["src=4"]),
    ("group of the wrong type", lambda: dist.all_reduce(np.ones(2), group="world"), TypeError, ["group"]),
    ("new_group with a bad rank", lambda: dist.new_group([0, 1]), ValueError, ["ranks contains 1"]),
    ("new_group with a non-list", lambda: dist.new_group(0), TypeError, ["ranks"]),
]


@pytest.mark.parametrize("description, call, exc, words", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_bad_input_raises_a_clear_error_and_the_job_goes_on(world, description, call, exc, words):
    with pytest.raises(exc) as info:
        call()
    for word in words:
        assert word in str(info.value), f"{word!r} not in: {info.value}"
    x = np.ones(2)
    dist.all_reduce(x)
    assert np.array_equal(x, [1.0, 1.0])


def test_a_group_is_destroyed_once(world):
    group = dist.new_group([0])
    dist.destroy_process_group(group)
    with pytest.raises(ValueError, match="destroy_process_group: group=.* was destroyed already"):
        dist.destroy_process_group(group)  # paddle 3.3.1 asserts ("Destroy group with id 1 is invalid")
    with pytest.raises(TypeError, match="group must be a Group or None"):
        dist.destroy_process_group(0)
    dist.destroy_process_group(world)
    with pytest.raises(ValueError, match="destroyed already"):
        dist.destroy_process_group(world)
    dist.init_parallel_env()  # the fixture's teardown destroys this one


def test_alltoall_given_its_lists_in_torch_order_names_paddles(world):
    """A probe passed (in_tensor_list, out_tensor_list): the message said only that the second
    list was empty."""
    with pytest.raises(ValueError, match=r"paddle's order is alltoall\(out_tensor_list, in_tensor_list\)"):
        dist.alltoall([pycoll.ones([2])], [])
    received = []
    dist.alltoall(received, [pycoll.ones([2])])
    assert [r.numpy().tolist() for r in received] == [[1.0, 1.0]]
