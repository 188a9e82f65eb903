"""The rendezvous: the store's address, the NCCL unique id's journey (through the store or MPI),
and the GPU each rank picks: pycoll.distributed.rendezvous."""
import sys
import textwrap
import types

import pytest

from conftest import assert_ok, free_port, launch, run_children
from pycoll.device import gpu_count
from pycoll.distributed import rendezvous

HOST = "127.0.0.1"


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


# -- the unique id's journey -------------------------------------------------------------------
ID_CHILD = """
    import os
    from pycoll.distributed import rendezvous
    from pycoll.distributed.placement import placement
    rank = int(os.environ["RANK"])
    rendezvous._new_unique_id = lambda: bytes((rank * 7 + i) % 256 for i in range(128))
    where = placement()
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
        from pycoll.distributed.placement import placement, under_mpi
        rank = MPI.COMM_WORLD.Get_rank()
        rendezvous._new_unique_id = lambda: bytes((rank + 5 + i) % 256 for i in range(128))
        where = placement()
        assert under_mpi() and where.via == "mpi", where
        assert (where.rank, where.world, where.local_rank) == (rank, 3, rank), where
        uid = rendezvous.nccl_unique_id(where.rank, where.world, 20)
        assert uid == bytes((5 + i) % 256 for i in range(128)), uid
        print(f"mpi id OK rank={rank}", flush=True)
    """))
    assert_ok(launch(3, str(script), timeout=90), expect_lines=3)
