"""The rendezvous store (threads and real processes on 127.0.0.1) and the GPU-free parts of the
rendezvous: placement from the environment, id exchange, ``gpu_count`` without a GPU."""
import socket
import struct
import subprocess
import sys
import textwrap
import threading
import time
import types
from pathlib import Path

import pytest

from pycoll.device import gpu_count

from conftest import assert_ok, launch
from pycoll import CollectiveError
from pycoll.distributed import rendezvous
from pycoll.distributed.rendezvous import Placement, env_placement
from pycoll.distributed.store import TCPStore

HOST = "127.0.0.1"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def master():
    store = TCPStore(HOST, 0, is_master=True, timeout=10)
    yield store
    store.close()


def free_port():
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def run_children(code, nprocs, port, extra_env=None, timeout=60):
    """Start ``nprocs`` Python processes running ``code`` with RANK/PORT set; return them finished."""
    procs = []
    for rank in range(nprocs):
        env = {"PYTHONPATH": str(ROOT), "RANK": str(rank), "PORT": str(port), **(extra_env or {})}
        procs.append(subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=timeout)
            results.append((p.returncode, out, err))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    return results


# -- the store -------------------------------------------------------------------------------
def test_set_get_add_between_threads(master):
    n, errors, seen = 4, [], {}

    def rank(r):
        try:
            with TCPStore(HOST, master.port, timeout=10) as store:
                store.set(f"k{r}", f"value {r}".encode())
                seen[r] = [store.get(f"k{p}") for p in range(n)]  # waits for the later ranks
                store.add("count", r + 1)
                store.barrier(n, "threads")
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=rank, args=(r,)) for r in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors, errors
    assert all(seen[r] == [f"value {p}".encode() for p in range(n)] for r in range(n))
    assert master.add("count", 0) == sum(range(1, n + 1))
    assert master.get("count") == str(sum(range(1, n + 1))).encode()


def test_get_waits_for_a_later_set(master):
    threading.Timer(0.2, master.set, args=("late", b"here")).start()
    with TCPStore(HOST, master.port, timeout=10) as client:
        assert client.get("late", timeout=5) == b"here"
        client.set("late", b"again")  # replacing a value
        assert master.get("late") == b"again"


def test_values_of_any_size_and_partial_frames(master):
    big = bytes(range(256)) * 40_000  # 10 MB
    master.set("big", big)
    with TCPStore(HOST, master.port, timeout=10) as client:
        assert client.get("big") == big
    # a raw client writing one frame a few bytes at a time: the server reassembles it
    key = b"slow"
    body = b"S" + struct.pack("!I", len(key)) + key + b"dribbled"
    frame = struct.pack("!I", len(body)) + body
    with socket.create_connection((HOST, master.port), timeout=10) as raw:
        for i in range(0, len(frame), 3):
            raw.sendall(frame[i:i + 3])
            time.sleep(0.01)
        assert raw.recv(5) == struct.pack("!I", 1) + b"\x00"
    assert master.get("slow") == b"dribbled"


def test_get_of_a_missing_key_times_out_quickly(master):
    start = time.monotonic()
    with pytest.raises(CollectiveError) as info:
        master.get("never", timeout=0.3)
    assert time.monotonic() - start < 3
    message = str(info.value)
    assert "'never'" in message and f"{HOST}:{master.port}" in message and "0.3 s" in message
    master.set("never", b"now")  # the connection stays in step after a timed-out get
    assert master.get("never", timeout=0.1) == b"now"


def test_barrier_times_out_naming_the_arrivals(master):
    with pytest.raises(CollectiveError, match=r"barrier\('lonely'\): only 1 of 2 ranks arrived within 0.2 s"):
        master.barrier(2, "lonely", timeout=0.2)


def test_barrier_between_real_processes_and_add(master):
    code = """
        import os
        from pycoll.distributed.store import TCPStore
        rank, n = int(os.environ["RANK"]), 3
        with TCPStore("127.0.0.1", int(os.environ["PORT"]), timeout=20) as store:
            store.set(f"proc{rank}", str(os.getpid()).encode())
            total = store.add("hits", 10)
            store.barrier(n, "procs")
            pids = [int(store.get(f"proc{r}")) for r in range(n)]
            assert store.add("hits", 0) == 10 * n, "every add landed before the barrier"
            assert len(set(pids)) == n
        print("OK", rank, total)
    """
    results = run_children(code, 3, master.port)
    for code_, out, err in results:
        assert code_ == 0 and out.startswith("OK"), out + err
    assert master.add("hits", 0) == 30


def test_bad_values_and_keys(master):
    master.set("text", b"not a number")
    with pytest.raises(ValueError, match="not an integer"):
        master.add("text", 1)
    with pytest.raises(TypeError, match="value must be bytes"):
        master.set("k", "str")
    with pytest.raises(TypeError, match="key must be a non-empty str"):
        master.get("")
    with pytest.raises(TypeError, match="amount must be an int"):
        master.add("k", 1.5)
    with pytest.raises(ValueError, match="nranks must be a positive int"):
        master.barrier(0, "t")


def test_bad_address_errors_name_the_variables():
    with pytest.raises(ValueError, match="MASTER_PORT=70000"):
        TCPStore(HOST, 70000, timeout=1)
    with pytest.raises(ValueError, match="MASTER_PORT=0"):
        TCPStore(HOST, 0, timeout=1)  # only the master may ask for an ephemeral port
    with pytest.raises(ValueError, match="MASTER_ADDR=''"):
        TCPStore("", 1234, timeout=1)
    with pytest.raises(ValueError, match="MASTER_ADDR='no such host.invalid' cannot be resolved"):
        TCPStore("no such host.invalid", 1234, timeout=1)


def test_nobody_listening_fails_after_the_timeout():
    port = free_port()
    start = time.monotonic()
    with pytest.raises(CollectiveError) as info:
        TCPStore(HOST, port, timeout=0.5)
    assert time.monotonic() - start < 5
    assert f"MASTER_ADDR:MASTER_PORT = {HOST}:{port}" in str(info.value) and "0.5 s" in str(info.value)


def test_a_port_in_use_cannot_host_a_second_store(master):
    with pytest.raises(CollectiveError, match="cannot host the rendezvous store.*MASTER_PORT"):
        TCPStore(HOST, master.port, is_master=True, timeout=1)


def test_connect_retries_until_the_master_appears():
    port = free_port()
    box = {}

    def late_master():
        time.sleep(0.5)
        box["master"] = TCPStore(HOST, port, is_master=True, timeout=10)
        box["master"].set("ready", b"yes")

    threading.Thread(target=late_master).start()
    with TCPStore(HOST, port, timeout=10) as client:
        assert client.get("ready") == b"yes"
    box["master"].close()


def test_close_stops_the_server(master):
    client = TCPStore(HOST, master.port, timeout=5)
    thread = master._server._thread
    master.close()
    master.close()  # idempotent
    assert not thread.is_alive()
    with pytest.raises(CollectiveError, match="rank 0 exit"):
        client.get("x", timeout=1)
    with pytest.raises(CollectiveError, match="closed"):
        client.get("x", timeout=1)
    client.close()


# -- gpu_count: never a crash, whatever CuPy does -----------------------------------------------
def test_gpu_count_when_cupy_cannot_be_imported(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # makes `import cupy` raise ImportError
    assert gpu_count() == 0


def fake_cupy(count):
    def get_device_count():
        if isinstance(count, Exception):
            raise count
        return count

    runtime = types.SimpleNamespace(getDeviceCount=get_device_count)
    return types.SimpleNamespace(cuda=types.SimpleNamespace(runtime=runtime))


@pytest.mark.parametrize("count, expected", [
    (RuntimeError("cudaErrorInsufficientDriver"), 0), (0, 0), (2, 2)])
def test_gpu_count_with_cupy_importable(monkeypatch, count, expected):
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(count))
    assert gpu_count() == expected


def test_select_device_validates_and_wraps(monkeypatch):
    with pytest.raises(ValueError, match="local_rank=-1"):
        rendezvous.select_device(-1)
    used = []
    cupy = fake_cupy(3)
    cupy.cuda.Device = lambda d: types.SimpleNamespace(use=lambda: used.append(d))
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    assert rendezvous.select_device(4) == 1 and used == [1]
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy(0))
    with pytest.raises(RuntimeError, match="no CUDA device is visible"):
        rendezvous.select_device(0)


# -- placement from the environment --------------------------------------------------------------
@pytest.mark.parametrize("env, expected", [
    ({}, Placement(0, 1, 0, "single")),
    ({"LOCAL_RANK": "2"}, Placement(0, 1, 2, "single")),
    ({"RANK": "0", "WORLD_SIZE": "1"}, Placement(0, 1, 0, "single")),
    ({"RANK": "2", "WORLD_SIZE": "4", "LOCAL_RANK": "0"}, Placement(2, 4, 0, "store")),
])
def test_env_placement(env, expected):
    assert env_placement(env) == expected


@pytest.mark.parametrize("env, words", [
    ({"WORLD_SIZE": "2", "LOCAL_RANK": "0"}, ["WORLD_SIZE=2", "RANK is not"]),
    ({"RANK": "1"}, ["RANK=1", "WORLD_SIZE is not"]),
    ({"RANK": "2", "WORLD_SIZE": "2", "LOCAL_RANK": "0"}, ["RANK=2", "out of range", "[0, 2)"]),
    ({"RANK": "1", "WORLD_SIZE": "2"}, ["LOCAL_RANK is not set"]),
    ({"RANK": "one", "WORLD_SIZE": "2"}, ["RANK='one'", "integer"]),
    ({"RANK": "0", "WORLD_SIZE": "0"}, ["WORLD_SIZE='0'", ">= 1"]),
    ({"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "-1"}, ["LOCAL_RANK='-1'"]),
])
def test_env_placement_errors(env, words):
    with pytest.raises(ValueError) as info:
        env_placement(env)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("env, words", [
    ({}, ["MASTER_ADDR is not set"]),
    ({"MASTER_ADDR": HOST}, ["MASTER_PORT=None"]),
    ({"MASTER_ADDR": HOST, "MASTER_PORT": "http"}, ["MASTER_PORT='http'"]),
    ({"MASTER_ADDR": HOST, "MASTER_PORT": "99999"}, ["MASTER_PORT='99999'", "65535"]),
])
def test_master_address_errors(env, words):
    with pytest.raises(ValueError) as info:
        rendezvous.rendezvous_store(0, 1.0, env)
    for word in words:
        assert word in str(info.value)


def test_under_mpi_follows_the_launcher_variables(monkeypatch):
    for name in ("PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delitem(sys.modules, "mpi4py.MPI", raising=False)
    assert rendezvous.under_mpi() is False
    monkeypatch.setenv("PMI_RANK", "0")
    assert rendezvous.under_mpi() is True


# -- the unique id's journey -------------------------------------------------------------------
ID_CHILD = """
    import os
    from pycoll.distributed import rendezvous
    rank = int(os.environ["RANK"])
    rendezvous._new_unique_id = lambda: bytes((rank * 7 + i) % 256 for i in range(128))
    where = rendezvous.placement()
    assert (where.rank, where.via) == (rank, "store"), where
    for _ in range(2):  # a second world gets a fresh id, never the first one's
        uid = rendezvous.nccl_unique_id(where.rank, where.world, 20)
        print(uid.hex(), flush=True)
"""


def test_unique_id_travels_through_the_store_between_processes():
    port = free_port()
    env = {"WORLD_SIZE": "3", "LOCAL_RANK": "0", "MASTER_ADDR": HOST, "MASTER_PORT": str(port)}
    results = run_children(ID_CHILD, 3, port, env)
    for code, out, err in results:
        assert code == 0, out + err
    expected = bytes(i % 256 for i in range(128)).hex()  # rank 0's
    assert all(out.split() == [expected, expected] for _, out, _ in results), results


def test_inconsistent_world_sizes_are_reported():
    port = free_port()
    code = """
        import os
        from pycoll.distributed import rendezvous
        rendezvous._new_unique_id = lambda: bytes(128)
        rank = int(os.environ["RANK"])
        try:
            rendezvous.nccl_unique_id(rank, 2 + rank, 3)
        except Exception as exc:
            print(type(exc).__name__, exc)
    """
    results = run_children(code, 2, port, {"MASTER_ADDR": HOST, "MASTER_PORT": str(port)})
    # rank 1 refuses the id; rank 0, waiting for every rank to fetch it, reports the absentee
    assert "ValueError WORLD_SIZE=3 on rank 1 but 2 on rank 0" in results[1][1], results
    assert "CollectiveError only 0 of the 1 other ranks fetched the NCCL unique id" in results[0][1], results


def test_a_missing_rank_0_times_out_naming_the_store():
    port = free_port()
    code = """
        from pycoll.distributed import rendezvous
        try:
            rendezvous.nccl_unique_id(1, 2, 0.5)
        except Exception as exc:
            print(type(exc).__name__, exc)
    """
    [(rc, out, err)] = run_children(code, 1, port, {"MASTER_ADDR": HOST, "MASTER_PORT": str(port)})
    assert out.startswith("CollectiveError") and f"{HOST}:{port}" in out, out + err


def test_unique_id_and_placement_under_mpi(tmp_path):
    script = tmp_path / "mpi_id.py"
    script.write_text(textwrap.dedent("""
        from mpi4py import MPI
        from pycoll.distributed import rendezvous
        rank = MPI.COMM_WORLD.Get_rank()
        rendezvous._new_unique_id = lambda: bytes((rank + 5 + i) % 256 for i in range(128))
        where = rendezvous.placement()
        assert rendezvous.under_mpi() and where.via == "mpi", where
        assert (where.rank, where.world, where.local_rank) == (rank, 3, rank), where
        uid = rendezvous.nccl_unique_id(where.rank, where.world, 20)
        assert uid == bytes((5 + i) % 256 for i in range(128)), uid
        print(f"mpi id OK rank={rank}", flush=True)
    """))
    assert_ok(launch(3, str(script), timeout=90), expect_lines=3)
