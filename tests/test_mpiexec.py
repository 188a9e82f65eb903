"""Starting a job through MPI's launcher: each rank's share of the cores for OpenMP and BLAS (the
user's own setting wins), said once by the launching process."""
import re

import pytest
from conftest import RANKS_DIR, launch, run_python

from pycoll.distributed import _mpiexec


@pytest.mark.parametrize("nprocs, cores, share", [(2, 2, "1"), (3, 2, "1"), (2, 16, "8"), (3, 16, "5")])
def test_each_rank_gets_its_share_of_the_cores(nprocs, cores, share, monkeypatch):
    monkeypatch.setattr(_mpiexec, "usable_cores", lambda: cores)
    chosen = _mpiexec.thread_share(nprocs, {})
    assert chosen == {name: share for name in _mpiexec.THREAD_VARS}
    assert "OMP_NUM_THREADS" in chosen and "OPENBLAS_NUM_THREADS" in chosen


def test_a_users_setting_or_a_single_rank_changes_nothing():
    assert _mpiexec.thread_share(2, {"OMP_NUM_THREADS": "4"}) == {}
    assert _mpiexec.thread_share(2, {"MKL_NUM_THREADS": "2"}) == {}
    assert _mpiexec.thread_share(1, {}) == {}


def pools(stdout):
    return re.findall(r"omp=(\S+) pools=(\S+)", stdout)


def test_the_launchers_ranks_run_with_their_share_and_it_is_said_once():
    result = launch(2, "threads.py", env={"OMP_NUM_THREADS": None})
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    cores = _mpiexec.usable_cores()
    share = str(max(1, cores // 2))
    for omp, found in pools(result.stdout):
        assert omp == share and f"blas={share}" in found, output
    assert len(pools(result.stdout)) == 2
    assert result.stderr.count("ranks share") == 1, output


def test_the_users_thread_count_wins():
    result = launch(2, "threads.py", env={"OMP_NUM_THREADS": "3"})
    assert result.returncode == 0, result.stderr
    assert [omp for omp, _ in pools(result.stdout)] == ["3", "3"]
    blas = min(3, _mpiexec.usable_cores())  # OpenBLAS runs no more threads than there are cores
    assert all(f"blas={blas}" in found for _, found in pools(result.stdout)), result.stdout
    assert "ranks share" not in result.stderr


def test_spawned_ranks_get_their_share_too(tmp_path):
    script = tmp_path / "spawned.py"
    script.write_text(
        "import runpy, pycoll.distributed as dist\n"
        f"def run():\n    runpy.run_path({str(RANKS_DIR / 'threads.py')!r})\n"
        "if __name__ == '__main__':\n    dist.spawn(run, nprocs=2)\n")
    result = run_python([str(script)], cwd=tmp_path, env={"OMP_NUM_THREADS": None})
    assert result.returncode == 0, result.stdout + result.stderr
    share = str(max(1, _mpiexec.usable_cores() // 2))
    assert [omp for omp, _ in pools(result.stdout)] == [share, share], result.stdout


def test_each_job_gets_its_own_store_token_unless_the_user_gave_one(monkeypatch):
    monkeypatch.delenv("PYCOLL_STORE_TOKEN", raising=False)
    first, second = (_mpiexec.job_environment({}, 2)["PYCOLL_STORE_TOKEN"] for _ in range(2))
    assert re.fullmatch("[0-9a-f]{32}", first) and first != second
    monkeypatch.setenv("PYCOLL_STORE_TOKEN", "shared-by-every-node")
    assert _mpiexec.job_environment({}, 2)["PYCOLL_STORE_TOKEN"] == "shared-by-every-node"
