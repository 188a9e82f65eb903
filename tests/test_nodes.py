"""Several launchers forming one job (pycoll.distributed.nodes), two "machines" simulated on
127.0.0.1: one job of every node's ranks, node-major; a node whose launcher stops ends the job;
bad node ranks, a missing node or an unreachable master fail clearly within PYCOLL_TIMEOUT."""
import os
import signal
import subprocess
import sys
import time

from conftest import RANKS_DIR, finished, free_port, run_python

JOB = str(RANKS_DIR / "nodes_job.py")


def start_node(node_rank, port, *script_args, nnodes=2, env=None):
    argv = [sys.executable, "-m", "pycoll.launch", "--nnodes", str(nnodes), "--node_rank", str(node_rank),
            "--master_addr", "127.0.0.1", "--master_port", str(port), "--nproc_per_node", "2", JOB,
            *script_args]
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYCOLL_TIMEOUT": "8", **(env or {})}, start_new_session=True)


def test_two_launchers_form_one_job_of_all_their_ranks():
    port = free_port()
    first, second = start_node(0, port), start_node(1, port)
    (code0, out0), (code1, out1) = finished(first), finished(second)
    assert code0 == 0 and code1 == 0, out0 + out1
    assert sorted(line.split()[2] for line in out0.splitlines() if "nodes OK" in line) == [
        f"rank={r}" for r in range(4)], out0
    assert out0.count("world=4 sum=6") == 4, out0
    assert "node 1 joined the job at 127.0.0.1:" in out1
    assert "node 1 of 2 meets the others' launchers at 127.0.0.1:" in out1  # said before it waits


def test_a_node_whose_launcher_stops_ends_the_job():
    port = free_port()
    first, second = start_node(0, port, "hold"), start_node(1, port, "hold")
    time.sleep(6)  # both launchers have met and the job runs (its ranks hold for 60 s)
    os.killpg(second.pid, signal.SIGKILL)
    second.wait()
    start = time.monotonic()
    code0, out0 = finished(first, timeout=60)
    assert code0 != 0 and "the launcher of node 1 has been silent" in out0, out0
    assert time.monotonic() - start < 30, out0


def test_a_node_rank_out_of_range_is_refused_at_once():
    result = run_python(["-m", "pycoll.launch", "--nnodes", "2", "--node_rank", "2", "--master_port", "1234", JOB])
    assert result.returncode == 2 and "--node_rank 2: it must be in [0, 2)" in result.stderr, result.stderr
    result = run_python(["-m", "pycoll.launch", "--nnodes", "2", JOB])
    assert result.returncode == 2 and "--master_port None" in result.stderr, result.stderr


def test_a_node_rank_taken_twice_is_refused_and_the_job_goes_on():
    port = free_port()
    first, second, third = start_node(0, port), start_node(1, port), start_node(1, port)
    (code0, out0), (code1, out1), (code2, out2) = finished(first), finished(second), finished(third)
    refused = [out for code, out in ((code1, out1), (code2, out2)) if code == 1 and "--node_rank 1 is already taken" in out]
    assert len(refused) == 1 and sorted([code1, code2]) == [0, 1], out1 + out2
    assert code0 == 0 and out0.count("world=4 sum=6") == 4, out0


def test_a_missing_node_or_master_fails_within_the_timeout():
    port = free_port()
    start = time.monotonic()
    code, out = finished(start_node(0, port, env={"PYCOLL_TIMEOUT": "3"}))
    assert code == 1 and "node(s) [1] did not join the job at 127.0.0.1:" in out, out
    code, out = finished(start_node(1, port, env={"PYCOLL_TIMEOUT": "3"}))
    assert code == 1 and "could not connect to the rendezvous store" in out and f"127.0.0.1:{port}" in out, out
    assert time.monotonic() - start < 40


def test_a_hostfile_goes_to_mpis_launcher(tmp_path):
    hosts = tmp_path / "hosts.txt"
    hosts.write_text("127.0.0.1:4\n")
    result = run_python(["-m", "pycoll.launch", "--hostfile", str(hosts), "--nproc_per_node", "3", JOB])
    assert result.returncode == 0 and result.stdout.count("world=3 sum=3") == 3, result.stdout + result.stderr
    result = run_python(["-m", "pycoll.launch", "--hostfile", str(tmp_path / "none.txt"), JOB])
    assert result.returncode == 2 and "none.txt: no such file" in result.stderr, result.stderr


def test_the_ranks_of_several_machines_are_told_each_machines_address(monkeypatch):
    from pycoll.distributed.launch.node_job import _addresses_across_machines
    monkeypatch.delenv("MASTER_ADDR", raising=False)
    env = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "6000", "PADDLE_MASTER": "127.0.0.1:6000",
           "PADDLE_TRAINER_ENDPOINTS": "127.0.0.1:6001,127.0.0.1:6002,127.0.0.1:6003,127.0.0.1:6004"}
    _addresses_across_machines(env, ["10.0.0.1", "10.0.0.2"], per_node=2)
    assert env["MASTER_ADDR"] == "10.0.0.1" and env["PADDLE_MASTER"] == "10.0.0.1:6000"
    assert env["PADDLE_TRAINER_ENDPOINTS"] == "10.0.0.1:6001,10.0.0.1:6002,10.0.0.2:6003,10.0.0.2:6004"
    monkeypatch.setenv("MASTER_ADDR", "head.example")  # the user's own meeting point stays
    env["MASTER_ADDR"] = "head.example"
    _addresses_across_machines(env, ["10.0.0.1", "10.0.0.2"], per_node=2)
    assert env["PADDLE_MASTER"] == "head.example:6000"
