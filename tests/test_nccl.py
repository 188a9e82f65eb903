"""The NCCL engine.

Tests marked ``gpu`` run real NCCL (2 and 3 ranks sharing one GPU, as separate "hosts" through
``NCCL_HOSTID`` and the socket transport on ``lo``); they are skipped where no GPU is visible.
The others run anywhere: they drive ``pycoll.backends.nccl`` against the CuPy stand-in of
host_cuda.py, whose log shows which stream each call goes to, what is grouped, and what happens
on errors, without a device; or run the public collectives on ranks over that stand-in.
"""
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

from conftest import RANKS_DIR, assert_ok, launch
from host_cuda import CURRENT, SIDE, Communicator, memory, zeros
from pycoll import CollectiveError
from pycoll.backends import nccl as engine
from pycoll.backends.reduce_op import ReduceOp

# CuPy without libnccl warns when cupy.cuda.nccl is imported; that is this machine, not a fault
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning:cupy._environment")
ROOT = Path(__file__).resolve().parent.parent


# -- GPU-free tests ------------------------------------------------------------------------------
def test_importing_the_engine_imports_no_cupy():
    code = "import sys, pycoll.backends.nccl; assert 'cupy' not in sys.modules, 'cupy imported'"
    subprocess.run([sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("dtype, op, words", [
    (np.int16, ReduceOp.SUM, ["int16", "nccl backend", "reducible dtypes", "float16"]),
    (np.bool_, ReduceOp.AVG, ["AVG", "bool"]),  # booleans reduce by any/all (paddle's), but not average
    (np.complex64, ReduceOp.MAX, ["ReduceOp.MAX", "complex"]),
    (np.complex128, ReduceOp.MIN, ["ReduceOp.MIN", "complex"]),
    (np.complex64, ReduceOp.PROD, ["ReduceOp.PROD", "complex64", "not as complex numbers"]),
    (np.int32, ReduceOp.AVG, ["AVG", "int32"]),
    (np.float32, "sum", ["op='sum' is not a ReduceOp", "ReduceOp.SUM"]),  # as the MPI engine says
])
def test_reduction_errors(dtype, op, words):
    message = engine.reduction_error(np.dtype(dtype), op)
    for word in words:
        assert word in message


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64,
                                   np.float16, np.float32, np.float64])
def test_reducible_dtypes_take_every_op(dtype):
    for op in (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PROD):
        assert engine.reduction_error(np.dtype(dtype), op) is None
    assert (engine.reduction_error(np.dtype(dtype), ReduceOp.AVG) is None) == (np.dtype(dtype).kind == "f")


def test_complex_sum_and_avg_travel_as_float_pairs(backend):
    for dtype, datatype in ((np.complex64, "NCCL_FLOAT32"), (np.complex128, "NCCL_FLOAT64")):
        for op in (ReduceOp.SUM, ReduceOp.AVG):
            plan = backend.plan(np.dtype(dtype), op)
            assert plan.factor == 2 and plan.datatype == getattr(engine.nccl_module(), datatype)
    with pytest.raises(TypeError, match="PROD of complex"):
        backend.plan(np.dtype(np.complex64), ReduceOp.PROD)
    assert not backend.can_reduce(np.dtype(np.complex64), ReduceOp.PROD)
    assert backend.plan(np.dtype(np.float32), ReduceOp.SUM) is backend.plan(np.dtype(np.float32), ReduceOp.SUM)


def test_bfloat16_is_reducible_where_nccl_has_it(fake):
    bf16 = types.SimpleNamespace(name="bfloat16", kind="V")  # as ml_dtypes.bfloat16's dtype
    assert engine.reduction_error(bf16, ReduceOp.SUM) is None
    assert engine.reduction_error(bf16, ReduceOp.AVG) is None
    del fake.nccl.NCCL_BFLOAT16
    assert "cannot be reduced" in engine.reduction_error(bf16, ReduceOp.SUM)


def test_blocking_all_reduce_is_enqueued_on_the_current_stream(backend, fake):
    arr = zeros(10, np.float32)
    plan = backend.plan(np.dtype(np.float32), ReduceOp.SUM)
    assert backend.all_reduce(arr, plan, True) is None
    # ... followed by the event that tells the watchdog when it is complete
    assert fake.log == [("allReduce", arr.data.ptr, arr.data.ptr, 10, 7, 0, CURRENT), ("record", CURRENT)]


def test_async_all_reduce_runs_on_the_side_stream_behind_the_current_one(backend, fake):
    arr = zeros(10, np.float32)
    request = backend.all_reduce(arr, backend.plan(np.dtype(np.int64), ReduceOp.MAX), False)
    assert fake.log == [("record", CURRENT), ("wait", SIDE, CURRENT),
                        ("allReduce", arr.data.ptr, arr.data.ptr, 10, 4, 2, SIDE), ("record", SIDE)]
    fake.clear()
    assert request.test() is False
    assert fake.log == [("query", SIDE), ("check",)]  # an async error would show here
    fake.done = True
    assert request.test() is True and request.test() is True
    assert request._keep is None  # the arrays are released once done


def test_join_stream_makes_the_current_stream_wait(backend, fake):
    request = backend.broadcast(zeros(3, np.float32), 1, False)
    fake.clear()
    request.join_stream()
    assert fake.log == [("check",), ("wait", CURRENT, SIDE)]
    assert request.test() is True


@pytest.mark.parametrize("version, native", [(22703, True), (20907, False)])
def test_avg_uses_ncclavg_or_divides_on_the_same_stream(fake, monkeypatch, version, native):
    fake.nccl.get_version = lambda: version
    b = engine.NCCLBackend(Communicator(fake), timeout=1)
    plan = b.plan(np.dtype(np.float16), ReduceOp.AVG)
    assert plan.op == (fake.nccl.NCCL_AVG if native else fake.nccl.NCCL_SUM)
    fake.clear()
    b.all_reduce(zeros(4, np.float32), plan, True)
    b.all_reduce(zeros(4, np.float32), plan, False)
    divides = fake.log.calls("divide")
    assert divides == ([] if native else [("divide", CURRENT, 2), ("divide", SIDE, 2)])
    if not native:  # the divide follows the reduction, before the completion event
        names = [c[0] for c in fake.log]
        assert names[-3:] == ["allReduce", "divide", "record"]


def test_reduce_divides_on_the_root_only(fake):
    fake.nccl.get_version = lambda: 20900
    b = engine.NCCLBackend(Communicator(fake, rank=1, size=3), timeout=1)
    plan = b.plan(np.dtype(np.float32), ReduceOp.AVG)
    b.reduce(zeros(2, np.float32), 0, plan, True)
    assert not fake.log.calls("divide")
    b.reduce(zeros(2, np.float32), 1, plan, True)
    assert fake.log.calls("divide") == [("divide", CURRENT, 3)]


def test_scatter_and_alltoall_are_grouped_sends_and_receives(fake):
    b = engine.NCCLBackend(Communicator(fake, rank=1, size=3), timeout=1)
    out, send = zeros(4, np.float32), zeros(12, np.float32)
    fake.clear()
    b.scatter(out, send, 1, True)
    u8 = fake.nccl.NCCL_UINT8
    assert fake.log == [("groupStart",), ("recv", out.data.ptr, 16, u8, 1, CURRENT)] + [
        ("send", send.data.ptr + 16 * i, 16, u8, i, CURRENT) for i in range(3)] + [("groupEnd",),
                                                                                   ("record", CURRENT)]
    fake.clear()
    b.scatter(out, None, 0, True)  # not the root: one receive
    assert [c[0] for c in fake.log] == ["groupStart", "recv", "groupEnd", "record"]
    fake.clear()
    blocks = zeros(12, np.float32)
    b.alltoall(blocks, send, True)
    assert fake.log.calls("send") == [("send", send.data.ptr + 16 * j, 16, u8, j, CURRENT) for j in range(3)]
    assert fake.log.calls("recv") == [("recv", blocks.data.ptr + 16 * j, 16, u8, j, CURRENT) for j in range(3)]


def test_async_recv_waits_for_the_next_send_and_goes_with_it(backend, fake):
    inbox, outbox = zeros(5, np.float32), zeros(5, np.float32)
    request = backend.recv(inbox, 1, 7, False)
    assert fake.log == [("record", CURRENT), ("wait", SIDE, CURRENT)]  # nothing launched yet
    fake.clear()
    assert backend.send(outbox, 1, 7, True) is None
    u8 = fake.nccl.NCCL_UINT8
    assert fake.log == [("record", CURRENT), ("wait", SIDE, CURRENT), ("groupStart",),
                        ("recv", inbox.data.ptr, 20, u8, 1, SIDE), ("send", outbox.data.ptr, 20, u8, 1, SIDE),
                        ("groupEnd",), ("record", SIDE), ("wait", CURRENT, SIDE)]
    fake.done = True
    assert request.test() is True


def test_a_blocking_send_alone_runs_on_the_current_stream(backend, fake):
    backend.send(zeros(2, np.float32), 1, 7, True)
    assert [c[0] for c in fake.log] == ["groupStart", "send", "groupEnd", "record"]
    assert fake.log[1][-1] == fake.log[3][1] == CURRENT


def test_held_back_transfers_launch_on_test_and_before_collectives(backend, fake):
    a, b = zeros(1, np.float32), zeros(1, np.float32)
    r1 = backend.send(a, 1, 7, False)
    r2 = backend.recv(b, 1, 7, False)
    fake.clear()
    assert r2.test() is False  # launches both, as one group
    assert [c[0] for c in fake.log][:5] == ["groupStart", "send", "recv", "groupEnd", "record"]
    assert r1._event is r2._event
    r3 = backend.recv(zeros(1, np.float32), 1, 7, False)
    fake.clear()
    backend.all_reduce(zeros(1, np.float32), backend.plan(np.dtype(np.int32), ReduceOp.SUM), True)
    assert [c[0] for c in fake.log] == ["groupStart", "recv", "groupEnd", "record", "allReduce", "record"]
    assert r3._event is not None


def test_an_async_error_aborts_and_then_every_call_fails(backend, fake):
    request = backend.all_gather(zeros(4, np.float32), zeros(2, np.float32), False)
    backend.comm.async_error = RuntimeError("NCCL_ERROR_REMOTE_ERROR: remote process exited")
    with pytest.raises(CollectiveError, match=r"all_gather on the nccl communicator \(rank 0 of 2"):
        request.test()
    assert backend.comm.aborted
    with pytest.raises(CollectiveError, match="unusable.*remote process exited"):
        backend.broadcast(zeros(1, np.float32), 0, True)
    fake.done = True  # aborted kernels end, and their events complete, without results
    with pytest.raises(CollectiveError, match="unusable"):
        request.test()
    with pytest.raises(CollectiveError, match="unusable"):
        request.join_stream()


def test_a_failed_launch_is_a_collective_error(backend, fake):
    def boom(*args):
        raise RuntimeError("NCCL_ERROR_INVALID_ARGUMENT")

    backend.comm.broadcast = boom
    with pytest.raises(CollectiveError, match="broadcast on the nccl communicator.*INVALID_ARGUMENT"):
        backend.broadcast(zeros(1, np.float32), 0, True)
    assert backend.comm.aborted


def test_a_launch_that_fails_because_another_thread_aborted_says_so(backend, fake, caplog):
    """A first call blocks inside NCCL until its peers connect; the watchdog's abort ends it with
    NCCL's "internal error", which is not the cause: the call says the communicator was aborted,
    and does not abort and log again."""
    def blocked_then_aborted(*args):
        backend.abort()  # what the watchdog's thread does meanwhile
        raise RuntimeError("NCCL_ERROR_INTERNAL_ERROR: internal error")

    backend.comm.allReduce = blocked_then_aborted
    with pytest.raises(CollectiveError, match=r"^all_reduce: the nccl communicator was aborted$"):
        backend.all_reduce(zeros(1, np.float32), backend.plan(np.dtype(np.float32), ReduceOp.SUM), True)
    assert not [r for r in caplog.records if "aborting the communicator" in r.getMessage()]


def test_barrier_waits_on_the_host_and_is_bounded(backend, fake):
    fake.done = True
    assert backend.barrier(True) is None
    assert [c[0] for c in fake.log][:4] == ["allReduce", "record", "record", "query"]
    assert fake.log[0][3:] == (1, fake.nccl.NCCL_INT32, fake.nccl.NCCL_SUM, CURRENT)
    fake.done = False
    with pytest.raises(CollectiveError, match="barrier.*not complete within 0.2 s"):
        backend.barrier(True)
    assert backend.comm.aborted


def test_split_uses_comm_split(backend, fake):
    fake.done = True
    sub = backend.split(True, 3, 7.5)
    assert isinstance(sub, engine.NCCLBackend) and sub.rank == 3 and sub.timeout == 7.5
    assert fake.log.calls("commSplit") == [("commSplit", 0, 3)]
    assert backend.split(False, 0, 7.5) is None
    assert fake.log.calls("commSplit")[-1] == ("commSplit", -1, 0)


@pytest.mark.parametrize("member, key, color", [(True, 1, 0), (False, 0, 0), (True, 1, 1)])
def test_split_without_comm_split_gathers_fresh_ids(fake, member, key, color):
    """NCCL before 2.18.1 or CuPy 13: gather who joins which color, the new rank 0 of each color
    makes an id, the ids are gathered, each member builds its color's communicator."""
    fake.nccl.get_version = lambda: 21703
    parent = Communicator(fake, rank=2, size=5)
    b = engine.NCCLBackend(parent, timeout=1)
    mine = [int(member), key, color if member else -1]
    # color 0: ranks 3 (key 0), 0 (key 5) and 2 when it joins color 0; color 1: rank 4, then 2
    table = np.array([[1, 5, 0], [0, 0, -1], mine, [1, 0, 0], [1, 0, 1]], np.int32)
    uids = np.zeros((5, engine.UNIQUE_ID_BYTES), np.uint8)
    uids[3], uids[4] = np.arange(7, 135), np.arange(100, 228)
    sent = []

    def all_gather(sptr, optr, nbytes, dtype, stream):  # nbytes from each of the 5 ranks
        gathered = table if not sent else uids
        sent.append(memory(sptr, nbytes, fake.nccl.NCCL_UINT8).copy())
        memory(optr, 5 * nbytes, fake.nccl.NCCL_UINT8)[:] = gathered.view(np.uint8).ravel()

    parent.allGather = all_gather
    built = []
    fake.nccl.NcclCommunicator = lambda n, commId, rank: built.append((n, commId, rank)) or Communicator(fake, rank, n)
    fake.done = True
    sub = b.split(member, key, 1.0, color=color)
    assert not fake.log.calls("commSplit")
    assert sent[0].view(np.int32).tolist() == mine
    assert not sent[1].any(), "rank 2 is the new rank 0 of no color here: it offers no id"
    if not member:
        assert built == [] and sub is None
    elif color == 0:
        assert built == [(3, uids[3].tobytes(), 1)] and (sub.rank, sub.size) == (1, 3)
    else:
        assert built == [(2, uids[4].tobytes(), 1)] and (sub.rank, sub.size) == (1, 2)


def test_split_without_comm_split_the_founder_offers_its_id(fake):
    fake.nccl.get_version = lambda: 21703
    parent = Communicator(fake, rank=0, size=2)
    b = engine.NCCLBackend(parent, timeout=1)
    fresh = bytes(range(1, 129))
    fake.nccl.get_unique_id = lambda: fresh
    sent = []

    def all_gather(sptr, optr, nbytes, dtype, stream):  # each rank founds its own color
        mine = memory(sptr, nbytes, fake.nccl.NCCL_UINT8).copy()
        sent.append(mine)
        rows = [mine, mine] if len(sent) == 2 else [mine, np.array([1, 0, 1], np.int32).view(np.uint8)]
        memory(optr, 2 * nbytes, fake.nccl.NCCL_UINT8)[:] = np.concatenate(rows)

    parent.allGather = all_gather
    built = []
    fake.nccl.NcclCommunicator = lambda n, commId, rank: built.append((n, commId, rank)) or Communicator(fake, rank, n)
    fake.done = True
    sub = b.split(True, 0, 1.0, color=0)
    assert sent[1].tobytes() == fresh and built == [(1, fresh, 0)] and (sub.rank, sub.size) == (0, 1)


def test_split_order_follows_key_then_rank_within_a_color():
    table = np.array([[1, 1, 0], [0, 0, -1], [1, 0, 0], [1, 1, 0], [0, 5, -1], [1, 0, 7]], np.int32)
    assert engine.split_order(table, 0) == [2, 0, 3]
    assert engine.split_order(table, 7) == [5]


def test_unique_ids_and_communicators_across_cupy_versions(fake):
    raw = bytes(range(64, 192))
    fake.nccl.get_unique_id = lambda: tuple(b - 256 if b > 127 else b for b in raw)  # CuPy 13
    assert engine.new_unique_id() == raw
    uid = bytes(range(128, 256))
    fake.nccl.NcclCommunicator = lambda n, commId, rank: ("comm", n, commId, rank)
    assert engine.new_communicator(2, uid, 1) == ("comm", 2, uid, 1)

    def old_cupy(n, commId, rank):  # CuPy 13: a tuple of signed chars
        if not isinstance(commId, tuple):
            raise TypeError("Argument 'commId' has incorrect type (expected tuple, got bytes)")
        return ("old", commId[0], commId[-1])

    fake.nccl.NcclCommunicator = old_cupy
    assert engine.new_communicator(2, uid, 0) == ("old", -128, -1)
    with pytest.raises(ValueError, match="uid has 3 bytes"):
        engine.new_communicator(2, b"abc", 0)


def test_free_launches_held_back_transfers_then_destroys(backend, fake):
    backend.send(zeros(1, np.float32), 1, 7, False)
    comm = backend.comm
    backend.free()
    assert comm.destroyed and fake.log.calls("send")
    backend.free()  # idempotent
    with pytest.raises(CollectiveError, match="freed"):
        backend.all_gather(zeros(2, np.float32), zeros(1, np.float32), True)


def test_nccl_module_without_libnccl_says_what_to_install(fake):
    fake.nccl.available = False
    with pytest.raises(RuntimeError, match="could not load libnccl.*nvidia-nccl"):
        engine.nccl_module()


# -- on host memory, without a GPU -----------------------------------------------------------
NCCL_ENV = {"PYCOLL_BACKEND": "nccl", "NCCL_SOCKET_IFNAME": "lo", "NCCL_IB_DISABLE": "1"}
HOST_CUPY = {**NCCL_ENV, "PYCOLL_TEST_HOST_CUPY": "1"}


@pytest.mark.parametrize("nprocs, debug", [(2, "0"), (3, "0"), (2, "1")])
def test_the_public_collectives_through_the_nccl_engine_on_host_memory(nprocs, debug):
    """The GPU worker's value checks, on ranks whose "CuPy" is host memory and whose NCCL calls
    are carried out over MPI (tests/host_cuda.py): what pycoll hands NCCL is checked
    by the values that come back; streams are not (see the gpu tests)."""
    result = launch(nprocs, "nccl_collectives.py", env={**HOST_CUPY, "PYCOLL_DEBUG": debug})
    assert_ok(result, expect_lines=nprocs)
    assert "watchdog" not in result.stderr, result.stderr  # its NCCL checks ran without failing


def test_bad_input_through_the_nccl_engine_on_host_memory():
    assert_ok(launch(2, "bad_input_nccl.py", env=HOST_CUPY), expect_lines=2)


@pytest.mark.parametrize("nprocs", [2, 3])
def test_gather_alltoall_single_objects_and_batches_through_the_nccl_engine_on_host_memory(nprocs):
    """gather and alltoall_single as grouped send/recv, the object collectives' bytes and a
    batch of transfers as one NCCL group, checked by the values that come back."""
    assert_ok(launch(nprocs, "more_collectives.py", env=HOST_CUPY), expect_lines=nprocs)


# -- on a GPU --------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.timeout(660)
@pytest.mark.parametrize("nprocs", [2, 3])
def test_every_collective_and_dtype_on_nccl_ranks_sharing_one_gpu(nprocs):
    assert_ok(launch(nprocs, "nccl_collectives.py", env=NCCL_ENV, timeout=600), expect_lines=nprocs)


@pytest.mark.gpu
@pytest.mark.parametrize("nprocs", [2, 3])
def test_gather_alltoall_single_objects_batches_and_stream_variants_on_a_gpu(nprocs):
    assert_ok(launch(nprocs, "more_collectives.py", env=NCCL_ENV, timeout=300), expect_lines=nprocs)


@pytest.mark.gpu
def test_arrays_of_other_frameworks_on_a_gpu_through_dlpack_and_cuda_array_interface():
    assert_ok(launch(2, "foreign_arrays.py", env=NCCL_ENV, timeout=300), expect_lines=2)


@pytest.mark.gpu
def test_torchrun_style_store_rendezvous_and_the_backend_directly():
    """Ranks started without MPI meet through the TCP store; the backend's own API is checked."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    n, procs = 3, []
    for rank in range(n):
        env = {**os.environ, **NCCL_ENV, "RANK": str(rank), "WORLD_SIZE": str(n), "LOCAL_RANK": str(rank),
               "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "PYTHONPATH": str(ROOT)}
        for name in ("PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK"):
            env.pop(name, None)
        procs.append(subprocess.Popen([sys.executable, str(RANKS_DIR / "nccl_collectives.py"), "backend"],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outputs = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=300)
            outputs.append((p.returncode, out + err))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    for code, output in outputs:
        assert code == 0 and "OK rank=" in output, output


@pytest.mark.gpu
def test_a_world_of_one_in_process():
    import cupy

    from pycoll.distributed import rendezvous

    backend, rank, world = rendezvous.make_nccl_world(60.0)
    assert (rank, world, backend.name, backend.size) == (0, 1, "nccl", 1)
    x = cupy.arange(6, dtype=cupy.float32)
    backend.all_reduce(x, backend.plan(x.dtype, ReduceOp.AVG), True)
    request = backend.all_reduce(x, backend.plan(x.dtype, ReduceOp.SUM), False)
    request.join_stream()
    assert cupy.array_equal(x, cupy.arange(6, dtype=cupy.float32))
    sub = backend.split(True, 0, backend.timeout)
    assert sub.size == 1
    sub.barrier(True)
    sub.abort()
    with pytest.raises(CollectiveError, match="aborted"):
        sub.barrier(True)
    backend.free()
