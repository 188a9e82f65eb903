"""pycoll.distributed.rpc (paddle's paddle.distributed.rpc API).

Two workers calling each other run in tests/ranks/rpc_workers.py; here, in one process, a world
of one worker: its calls to itself, every argument check, what a caller sees of a worker that is
gone or of a foreign caller, and the life cycle (init twice, shutdown twice, calls after it).
Paddle 3.3.1's CPU build cannot run its RPC (core.WorkerInfo is missing), so values are checked
against the functions run here.
"""
import socket
import threading
import time

import numpy as np
import pytest
from conftest import assert_ok, free_port, launch, on_free_port, run_python

import pycoll
import pycoll.distributed.rpc as rpc
from pycoll._errors import CollectiveError
from pycoll.distributed.rpc import directory
from pycoll.distributed.rpc import rpc as rpc_module
from pycoll.distributed.rpc.client import call
from pycoll.distributed.rpc.messages import call_request
from pycoll.distributed.rpc.worker_info import WorkerInfo
from pycoll.distributed.store import TCPStore


def add(a, b=0):
    return a + b


def bad_decode():
    b"\xff".decode("utf-8")


@pytest.fixture
def solo(monkeypatch):
    """This process as the only worker, "solo", at a fresh master endpoint."""
    monkeypatch.delenv("PADDLE_WORKER_ENDPOINT", raising=False)
    on_free_port(lambda port: rpc.init_rpc("solo", rank=0, world_size=1, master_endpoint=f"127.0.0.1:{port}"))
    yield rpc.get_current_worker_info()
    if rpc_module._agent is not None:
        rpc.shutdown()


def test_two_workers_call_each_other():
    assert_ok(launch(2, "rpc_workers.py", timeout=60), expect_lines=2)


def test_a_worker_that_ends_without_shutdown_fails_its_peers_shutdown_at_once():
    result = launch(2, "rpc_leaver.py", timeout=60, env={"PYCOLL_TIMEOUT": "120"})
    assert_ok(result, expect_lines=2)


FRESH_PROCESS = """
import pycoll.distributed as dist
try:
    dist.rpc.get_all_worker_infos()
except RuntimeError as exc:
    print(dist.rpc.__name__, exc)
"""


def test_rpc_is_reached_from_the_distributed_face_and_refuses_calls_before_init():
    result = run_python(["-c", FRESH_PROCESS], timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == ("pycoll.distributed.rpc rpc.get_all_worker_infos: call "
                                     "rpc.init_rpc(name, rank, world_size, master_endpoint) first")


def test_a_worker_calls_itself(solo):
    assert rpc.get_all_worker_infos() == [solo] and rpc.get_worker_info("solo") == solo
    assert (solo.name, solo.rank, solo.ip) == ("solo", 0, "127.0.0.1") and solo.port > 0
    assert rpc.rpc_sync("solo", add, args=(2, 3)) == 5
    got = rpc.rpc_async("solo", add, args=[np.arange(3)], kwargs={"b": 1.5}).wait()
    np.testing.assert_array_equal(got, np.arange(3) + 1.5)
    t = rpc.rpc_sync("solo", add, args=(pycoll.to_tensor([1.0, 2.0]), 1))
    assert isinstance(t, pycoll.Tensor) and t.numpy().tolist() == [2.0, 3.0]


def test_remote_errors_keep_their_type_or_become_runtime_errors(solo):
    with pytest.raises(KeyError, match=r"missing.* \(raised on worker .*solo.* in getitem_missing; remote traceback"):
        rpc.rpc_sync("solo", getitem_missing)
    # UnicodeDecodeError cannot be made from one message: a RuntimeError names it instead
    with pytest.raises(RuntimeError, match=r"(?s)^UnicodeDecodeError: .*can't decode byte 0xff.*in bad_decode; remote traceback:\nTraceback"):
        rpc.rpc_sync("solo", bad_decode)


def getitem_missing():
    return {}["missing"]


def test_a_timeout_names_the_worker_and_the_function(solo):
    started = time.monotonic()
    with pytest.raises(TimeoutError, match=r"worker 'solo' .*running sleep did not complete within 0.2 s"):
        rpc.rpc_sync("solo", time.sleep, args=(1,), timeout=0.2)
    assert time.monotonic() - started < 0.9


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(to=3), TypeError, "to must be a worker's name"),
    (dict(fn=5), TypeError, "fn must be callable, got int"),
    (dict(args=5), TypeError, "args must be a tuple or list"),
    (dict(kwargs=[("b", 1)]), TypeError, "kwargs must be a dict"),
    (dict(timeout="1"), TypeError, "timeout must be a number"),
    (dict(fn=lambda a: a), TypeError, "must be picklable"),
    (dict(to="nobody"), ValueError, r"to='nobody' is no worker of this job; the workers are \['solo'\]"),
])
@pytest.mark.parametrize("api", ["rpc_sync", "rpc_async"])
def test_bad_call_arguments_are_refused_before_sending(solo, api, kwargs, error, words):
    call_args = {"to": "solo", "fn": add, "args": (1,), **kwargs}
    with pytest.raises(error, match=f"rpc.{api}: .*{words}"):
        getattr(rpc, api)(**call_args)
    with pytest.raises(TypeError, match="name must be a str"):
        rpc.get_worker_info(1)
    with pytest.raises(ValueError, match=r"name='x' is no worker"):
        rpc.get_worker_info("x")


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(name=3), TypeError, "name must be a non-empty str"),
    (dict(name=""), TypeError, "name must be a non-empty str"),
    (dict(rank="0"), TypeError, "rank must be an int, got str"),
    (dict(rank=True), TypeError, "rank must be an int, got bool"),
    (dict(rank=2), ValueError, r"rank=2; it must be in \[0, world_size=2\)"),
    (dict(world_size=0, rank=0), ValueError, "world_size=0; it must be >= 1"),
    (dict(master_endpoint="localhost"), ValueError, "master_endpoint='localhost'; it must be 'ip:port'"),
    (dict(master_endpoint="127.0.0.1:0"), ValueError, "master endpoint 127.0.0.1:0 has no port"),
    (dict(master_endpoint=8001), TypeError, "master_endpoint must be a str"),
])
def test_bad_init_arguments_are_refused_at_once(kwargs, error, words):
    init_args = {"name": "w", "rank": 1, "world_size": 2, "master_endpoint": "127.0.0.1:1", **kwargs}
    with pytest.raises(error, match=f"init_rpc: {words}"):
        rpc.init_rpc(**init_args)


def test_defaults_come_from_paddles_variables(monkeypatch):
    for name in ("PADDLE_TRAINER_ID", "PADDLE_MASTER_ENDPOINT", "PADDLE_MASTER", "MASTER_ADDR"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="rank was not given and PADDLE_TRAINER_ID is not set"):
        rpc.init_rpc("w", world_size=1)
    monkeypatch.setenv("PADDLE_TRAINER_ID", "0")
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "one")
    with pytest.raises(ValueError, match="PADDLE_TRAINERS_NUM='one' must be an int"):
        rpc.init_rpc("w")
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "1")
    with pytest.raises(ValueError, match="master_endpoint was not given and PADDLE_MASTER_ENDPOINT is not set"):
        rpc.init_rpc("w")
    worker_port = free_port()
    monkeypatch.setenv("PADDLE_MASTER_ENDPOINT", f"127.0.0.1:{free_port()}")
    monkeypatch.setenv("PADDLE_WORKER_ENDPOINT", f"127.0.0.1:{worker_port}")
    rpc.init_rpc("w")
    try:
        assert rpc.get_current_worker_info() == ("w", 0, "127.0.0.1", worker_port)
        assert str(rpc.get_current_worker_info()) == f"{{name: w, rank: 0, ip: 127.0.0.1, port: {worker_port}}}"
    finally:
        rpc.shutdown()


def test_life_cycle_errors(solo):
    with pytest.raises(RuntimeError, match="already RPC worker 'solo'; call rpc.shutdown"):
        rpc.init_rpc("again", rank=0, world_size=1, master_endpoint="127.0.0.1:1")
    rpc.shutdown()
    for fn, args in ((rpc.shutdown, ()), (rpc.rpc_sync, ("solo", add, (1,))), (rpc.get_current_worker_info, ())):
        with pytest.raises(RuntimeError, match="rpc was shut down on this worker"):
            fn(*args)


def test_a_gone_worker_is_an_error_not_a_hang(solo):
    request = call_request("test", rpc_module._agent.token, add, (1,), {})
    nobody = solo._replace(port=free_port())
    with pytest.raises(CollectiveError, match=r"rpc to worker 'solo' .* running add failed: .*refused"):
        call(nobody, request, "add", 30.0, "test")

    # a worker that takes the call and dies before answering
    listener = socket.create_server(("127.0.0.1", 0))
    dying = threading.Thread(target=lambda: listener.accept()[0].close())
    dying.start()
    started = time.monotonic()
    with pytest.raises(CollectiveError, match="running add failed: (the peer closed the connection|.*reset by peer)"):
        call(solo._replace(port=listener.getsockname()[1]), request, "add", 30.0, "test")
    assert time.monotonic() - started < 5
    dying.join()
    listener.close()


def test_a_caller_without_the_jobs_token_is_refused(solo):
    request = call_request("test", b"not-the-token" + rpc_module._agent.token, add, (1,), {})
    with pytest.raises(RuntimeError, match="refused the call of add: .*PYCOLL_STORE_TOKEN is not this job's"):
        call(solo, request, "add", 30.0, "test")


def test_a_join_timeout_lists_the_missing_ranks(monkeypatch):
    monkeypatch.setenv("PYCOLL_TIMEOUT", "0.4")
    monkeypatch.delenv("PADDLE_WORKER_ENDPOINT", raising=False)
    endpoint = f"127.0.0.1:{free_port()}"
    prefix = f"pycoll/rpc/{rpc_module._generation + 1}"  # the meeting init_rpc below holds
    errors = []

    def rank_2():  # joins on time, through its own client of rank 0's store
        with TCPStore("127.0.0.1", int(endpoint.split(":")[1]), timeout=5) as store:
            with pytest.raises(CollectiveError) as info:
                directory.meet(store, prefix, WorkerInfo("c", 2, "127.0.0.1", 1), 3, 0.4)
            errors.append(str(info.value))

    joiner = threading.Thread(target=rank_2)
    joiner.start()
    with pytest.raises(CollectiveError, match=r"init_rpc: the worker\(s\) of rank\(s\) \[1\] had not "
                                              r"joined within 0.4 s at .*; 2 of 3 had"):
        rpc.init_rpc("a", rank=0, world_size=3, master_endpoint=endpoint)
    joiner.join()
    assert "rank(s) [1] had not joined within 0.4 s" in errors[0], errors


def test_a_lost_store_is_told_at_once_not_as_a_timeout():
    master = TCPStore("127.0.0.1", 0, is_master=True, timeout=5)
    client = TCPStore("127.0.0.1", master.port, timeout=5)
    threading.Timer(0.2, master.close).start()
    started = time.monotonic()
    with pytest.raises(CollectiveError) as info:
        directory.meet(client, "t/meet", WorkerInfo("b", 1, "127.0.0.1", 1), 2, 60.0)
    text = str(info.value)
    assert text.startswith("init_rpc: lost the rendezvous store, which rank 0's process serves: "
                           "TCPStore.get('t/meet/worker/0')"), text
    assert "did rank 0 exit?" in text and "60 s" not in text and time.monotonic() - started < 5, text  # not the timeout
    with pytest.raises(CollectiveError, match=r"rpc.shutdown: lost the rendezvous store, .* lost its connection earlier \(TCPStore.get\('t/meet/worker/0'\)"):
        directory.leave_together(client, "t/leave", 1, 2, 60.0, "rpc.shutdown")
    client.close()


def test_a_shutdown_timeout_lists_the_missing_ranks():
    with TCPStore("127.0.0.1", 0, is_master=True, timeout=5) as store:
        with pytest.raises(CollectiveError, match=r"rpc.shutdown: the worker\(s\) of rank\(s\) \[0, 2\] "
                                                  r"had not arrived within 0.2 s at .*; 1 of 3 had"):
            directory.leave_together(store, "t/bye", 1, 3, 0.2, "rpc.shutdown")


def test_a_wait_for_every_worker_ends_when_a_missing_one_no_longer_serves():
    """Rank 0 still listens (it is only late); rank 2's port refuses: the wait ends within a
    poll or two, naming rank 2 alone."""
    late = socket.create_server(("127.0.0.1", 0))
    workers = [WorkerInfo("a", 0, "127.0.0.1", late.getsockname()[1]), WorkerInfo("b", 1, "127.0.0.1", 1),
               WorkerInfo("c", 2, "127.0.0.1", free_port())]
    with TCPStore("127.0.0.1", 0, is_master=True, timeout=5) as store:
        started = time.monotonic()
        with pytest.raises(CollectiveError) as info:
            directory.leave_together(store, "t/gone", 1, 3, 60.0, "rpc.shutdown", workers)
    late.close()
    assert str(info.value) == ("rpc.shutdown: the worker(s) [('c', 2)] (name, rank) exited before reaching it "
                               "(their RPC servers no longer listen); every worker must call rpc.shutdown "
                               "before its process ends")
    assert time.monotonic() - started < 10
