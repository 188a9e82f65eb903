"""Paddle 3.3.1's argument forms: any integer (NumPy's too) where paddle takes a rank or a ReduceOp,
but never a bool; ``Group.get_group_rank(rank)``; ``Task.wait(timedelta)``;
``init_parallel_env(nccl_config)``; ``all_gather_object`` outside its group raising as paddle's does.

The 3-rank job (tests/ranks/arg_forms.py) checks values measured on Paddle 3.3.1; the in-process
cases run a world of one and pycoll's own MPI requests."""
import datetime
import logging
import re

import numpy as np
import pytest
from conftest import assert_ok, launch
from mpi4py import MPI

import pycoll.distributed as dist
from pycoll import CollectiveError
from pycoll.backends.mpi import MPIRequest
from pycoll.backends.reduce_op import ReduceOp, reduce_op_value
from pycoll.distributed import _failure
from pycoll.distributed.env import _nccl_config_unused
from pycoll.distributed.group import as_rank
from pycoll.distributed.task import Task


@pytest.fixture
def world():
    group = dist.init_parallel_env()
    yield group
    dist.destroy_process_group()


def test_paddle_argument_forms_on_three_ranks_give_paddles_values():
    assert_ok(launch(3, "arg_forms.py", timeout=60), expect_lines=3)


@pytest.mark.parametrize("value", [np.int64(2), np.int32(2), np.uint8(2), 2])
def test_any_integer_is_a_rank(value):
    got = as_rank(value, "f", "src")
    assert got == 2 and type(got) is int


@pytest.mark.parametrize("value", [True, np.bool_(True), 2.0, np.float64(2), "2", None])
def test_a_bool_or_a_non_integer_is_not_a_rank(value):
    with pytest.raises(TypeError, match=r"f: src=.* a rank must be an integer") as info:
        as_rank(value, "f", "src")
    assert str(info.value).endswith(", not a bool") == isinstance(value, (bool, np.bool_)), info.value


def test_rank_arguments_of_the_groups_and_object_collectives_take_numpy_integers(world):
    group = dist.new_group([np.int64(0)])
    assert group.ranks == [0] and type(group.ranks[0]) is int
    # paddle 3.3.1 (measured, 2 ranks): new_group(np.arange(0, 2)).ranks == [0, 1]
    assert dist.new_group(np.arange(0, 1)).ranks == [0]
    assert group.get_group_rank(np.int32(0)) == 0 and group.get_global_rank(np.uint8(0)) == 0
    with pytest.raises(ValueError, match="5 is not in list"):  # paddle 3.3.1: ValueError: 5 is not in list
        group.get_group_rank(rank=5)
    objs = ["mine"]
    dist.broadcast_object_list(objs, src=np.int64(0), group=group)
    out = []
    dist.scatter_object_list(out, ["one"], src=np.int16(0))
    assert (objs, out) == (["mine"], ["one"])
    for call, words in ((lambda: dist.new_group([True]), "new_group: ranks[0]=True"),
                        (lambda: dist.new_group([0.0]), "new_group: ranks[0]=0.0"),
                        (lambda: dist.broadcast_object_list([1], src=False), "broadcast_object_list: src=False"),
                        (lambda: dist.scatter_object_list([], [1], src=0.0), "scatter_object_list: src=0.0"),
                        (lambda: group.get_group_rank(True), "Group.get_group_rank: rank=True"),
                        (lambda: dist.send_object_list([1], dst_in_group=np.float32(0)), "dst_in_group=np.float32(0.0)")):
        with pytest.raises(TypeError, match=re.escape(words) + r" \(\w+\); a rank must be an integer"):
            call()
    with pytest.raises(ValueError, match=r"ranks contains 3; every entry must be a global rank in \[0, 1\)"):
        dist.new_group(list(np.arange(3, 4)))


def test_reduce_ops_are_the_integers_naming_one():
    assert [reduce_op_value(v) for v in (np.int64(1), np.uint16(4), np.int8(0), 3)] == [
        ReduceOp.MAX, ReduceOp.AVG, ReduceOp.SUM, ReduceOp.PROD]
    assert [reduce_op_value(v) for v in (True, False, 1.0, np.float32(2), 5, -1, np.int64(9), "sum", None)] == [None] * 9


def test_a_bool_or_float_op_is_refused_even_after_its_value_was_used(world):
    """The engines keep one plan per (dtype, op): True and 1.0 hash and compare as 1 and must not
    find MAX's plan there."""
    x = np.array([3.0])
    dist.all_reduce(x, op=np.int64(ReduceOp.MAX))
    dist.all_reduce(x, op=ReduceOp.MAX)
    for bad in (True, 1.0):
        with pytest.raises(ValueError, match=f"all_reduce: op={bad!r} is"):
            dist.all_reduce(x, op=bad)
    assert dist.can_reduce(np.float32, np.int64(ReduceOp.PROD)) and not dist.can_reduce(np.float32, True)


@pytest.fixture
def pending(monkeypatch):
    """A task over a real MPI receive that nobody has sent to yet, and the send that completes it."""
    monkeypatch.setattr(_failure, "_broken", None)  # a timed-out wait marks the process broken
    group = dist.init_parallel_env()
    got = np.zeros(2)
    request = MPI.COMM_SELF.Irecv(got, source=0, tag=41)
    yield Task(MPIRequest(request), group, "irecv", 1, keep=(got,)), got, \
        lambda: MPI.COMM_SELF.Send(np.array([4.0, 5.0]), dest=0, tag=41)
    if not request.Test():
        request.Cancel()
        request.Wait()
    dist.destroy_process_group()


def test_wait_takes_a_timedelta_and_zero_means_the_groups_timeout(pending):
    task, got, send = pending
    with pytest.raises(CollectiveError, match="did not complete within 0.05 s"):
        task.wait(datetime.timedelta(milliseconds=50))
    send()
    assert task.wait(datetime.timedelta(0)) is True  # paddle's default: no limit of its own
    assert got.tolist() == [4.0, 5.0]


@pytest.mark.parametrize("bad", [datetime.timedelta(seconds=-1), -1, float("nan"), "soon", True])
def test_wait_refuses_a_bad_timeout_before_looking(pending, bad):
    task, _, _ = pending
    with pytest.raises(ValueError, match="Task.wait: timeout="):
        task.wait(bad)


def test_init_parallel_env_takes_paddles_nccl_config():
    try:
        world = dist.init_parallel_env(nccl_config={"commName": "world", "nchannels": 4})
        assert world.ranks == [0] and world.backend == "GLOO"
    finally:
        dist.destroy_process_group()
    try:  # paddle's only parameter, given by position
        assert dist.init_parallel_env(dist.create_nccl_config({"algoStr": "Ring"})).ranks == [0]
    finally:
        dist.destroy_process_group()
    with pytest.raises(ValueError, match=r"unknown keys \['nranks'\]"):
        dist.init_parallel_env(nccl_config={"nranks": 2})
    with pytest.raises(TypeError, match="nccl_config must be a dict or None, got str"):
        dist.init_parallel_env(nccl_config="ring")
    with pytest.raises(TypeError, match=r"init_parallel_env: backend must be a str .* got list"):
        dist.init_parallel_env(["cpu"])
    assert not dist.is_initialized()


def test_an_nccl_config_that_asks_for_tuning_is_said_not_to_be_applied_on_nccl(caplog):
    with caplog.at_level(logging.WARNING, logger="pycoll"):
        _nccl_config_unused({"commName": "tp", "nchannels": 0, "algoStr": ""}, "nccl", "init_parallel_env")
        _nccl_config_unused({"nchannels": 4, "protoStr": "Simple"}, "cpu", "init_parallel_env")
        assert caplog.records == []  # nothing asked for on nccl; no NCCL on cpu
        _nccl_config_unused({"commName": "tp", "nchannels": 4, "protoStr": "Simple"}, "nccl", "new_group")
    assert [r.getMessage() for r in caplog.records] == [
        "new_group: nccl_config {'nchannels': 4, 'protoStr': 'Simple'} is not applied (CuPy's NCCL communicator "
        "takes no configuration); NCCL's environment variables (NCCL_ALGO, NCCL_PROTO, NCCL_BUFFSIZE, "
        "NCCL_MAX_NCHANNELS) tune every group"]
