"""spawn and ParallelEnv in the forms paddle 3.3.1 takes them: paddle's local-rank variables,
spawn's deprecated options, processes alive from spawn's return, a script without the
``__main__`` guard, daemon ranks stopped quietly at the parent's exit, and a rank a signal
killed named in the SpawnError."""
import os
import re
import signal
import time

import pytest

import pycoll.distributed as dist
from conftest import RANKS_DIR, assert_gone, free_port, run_python
from pycoll.distributed.placement import LOCAL_RANK_VARS, LOCAL_SIZE_VARS, env_placement, local_world_size


@pytest.fixture
def bare_env(monkeypatch):
    """No launcher's variables: each test sets the ones it means."""
    for name in (*LOCAL_RANK_VARS, *LOCAL_SIZE_VARS, "RANK", "WORLD_SIZE", "PMI_RANK", "PMI_SIZE",
                 "PADDLE_TRAINER_ID", "PADDLE_TRAINERS_NUM", "FLAGS_selected_gpus"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_local_rank_reads_paddles_rank_in_node(bare_env):
    """In a fresh process (ParallelEnv answers from the job once one is initialized here, and
    other tests of this process initialize a world of one)."""
    code = """if True:
        import os
        import pycoll.distributed as dist
        from pycoll.distributed import fleet
        env = dist.ParallelEnv()
        print("placed", env.rank, env.world_size, env.local_rank, repr(fleet.local_rank()))
        del os.environ["PADDLE_RANK_IN_NODE"]
        os.environ["PADDLE_LOCAL_RANK"] = "1"
        print("paddle_local_rank", dist.ParallelEnv().local_rank)
        os.environ["LOCAL_RANK"] = "0"
        print("torchrun_first", dist.ParallelEnv().local_rank)
    """
    # the probe's case: paddle 3.3.1 gives ParallelEnv().local_rank == 1 (measured); paddle's
    # fleet.local_rank() is PADDLE_RANK_IN_NODE, a string; torchrun's LOCAL_RANK comes first
    result = run_python(["-c", code], env={"PADDLE_TRAINER_ID": "1", "PADDLE_TRAINERS_NUM": "2",
                                           "PADDLE_RANK_IN_NODE": "1"}, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "placed 1 2 1 '1'" in result.stdout, result.stdout
    assert "paddle_local_rank 1" in result.stdout and "torchrun_first 0" in result.stdout, result.stdout


def test_paddles_local_variables_place_a_torchrun_style_rank(bare_env):
    for name, value in (("RANK", "3"), ("WORLD_SIZE", "4"), ("PADDLE_RANK_IN_NODE", "1"), ("PADDLE_LOCAL_SIZE", "2")):
        bare_env.setenv(name, value)
    assert env_placement(os.environ).local_rank == 1
    assert local_world_size() == 2


def _endpoints():
    return os.environ["PADDLE_TRAINER_ENDPOINTS"], os.environ["PADDLE_CURRENT_ENDPOINT"]


def test_paddles_deprecated_options_warn_and_are_honoured():
    port = free_port()
    with pytest.warns(DeprecationWarning) as warned:
        context = dist.spawn(_endpoints, nprocs=2, started_port=port, cluster_node_ips="127.0.0.1",
                             node_ip="localhost", use_paddlecloud=False)
    named = sorted(re.search(r"option '(\w+)'", str(w.message)).group(1) for w in warned)
    assert named == ["cluster_node_ips", "node_ip", "started_port", "use_paddlecloud"]
    everyone = f"127.0.0.1:{port},127.0.0.1:{port + 1}"  # paddle's GPU build: ip:started_port+i
    assert [q.get() for q in context.return_queues] == [(everyone, f"127.0.0.1:{port + r}") for r in range(2)]


@pytest.mark.parametrize("options, words", [
    ({"cluster_node_ips": "10.0.0.1,10.0.0.2"}, ["cluster_node_ips='10.0.0.1,10.0.0.2'", "this machine only"]),
    ({"node_ip": "10.0.0.9"}, ["node_ip='10.0.0.9'", "this machine only"]),
    ({"started_port": "6170"}, ["started_port='6170'", "int port"]),
    ({"started_port": 65535}, ["started_port=65535", "from 1 to 65534"]),
    ({"started_port": 0}, ["started_port=0"]),
])
def test_deprecated_options_are_checked_before_any_rank_starts(options, words):
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError) as info:
        dist.spawn(print, nprocs=2, **options)
    for word in words:
        assert word in str(info.value), info.value


def test_unknown_options_are_still_refused():
    with pytest.raises(ValueError, match="option 'started_ports' is not supported"):
        dist.spawn(print, nprocs=2, started_ports=6170)


def _own_pid_after(seconds):
    time.sleep(seconds)
    return os.getpid()


def test_processes_have_pids_and_are_alive_as_soon_as_spawn_returns():
    context = dist.spawn(_own_pid_after, args=(2.0,), nprocs=2, join=False)
    seen = [(p.pid, p.is_alive()) for p in context.processes]
    start = time.monotonic()
    while any(p.is_alive() for p in context.processes):  # a monitor loop, as paddle's users write
        time.sleep(0.05)
    assert time.monotonic() - start > 1.0, "the ranks sleep 2 s after they record their pid"
    assert context.join(timeout=120) is True
    assert seen == [(q.get(), True) for q in context.return_queues]
    assert not any(p.is_alive() for p in context.processes)


def test_a_script_without_the_main_guard_is_told_the_fix():
    result = run_python([str(RANKS_DIR / "spawn_forms_noguard.py")])
    output = result.stdout + result.stderr
    assert result.returncode == 9, output
    assert "parent caught SpawnError" in output and 'if __name__ == "__main__":' in output, output
    assert output.count("SpawnError") == 1, "no rank started a job of its own"
    assert "__mp_main__'" not in output, output


def test_daemon_ranks_stop_quietly_when_the_parent_exits():
    result = run_python([str(RANKS_DIR / "spawn_forms_daemon.py")])
    output = result.stdout + result.stderr
    assert result.returncode == 0 and "parent leaves" in output, output
    pids = re.search(r"pids (\d+) (\d+)", output)
    assert pids is not None, output
    for noise in ("Ctrl-C", "failed", "BAD TERMINATION", "exit status"):
        assert noise not in output, output
    assert_gone([int(pid) for pid in pids.groups()])


def _killed_on_rank_one(survivor_returns):
    if os.environ["RANK"] == "1":
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGKILL)
    if not survivor_returns:
        time.sleep(60)


@pytest.mark.parametrize("survivor_returns", [False, True])
def test_a_rank_killed_by_a_signal_is_named(survivor_returns):
    # paddle 3.3.1 says "Process 1 terminated with signal SIGKILL."
    context = dist.spawn(_killed_on_rank_one, args=(survivor_returns,), nprocs=2, join=False)
    with pytest.raises(dist.SpawnError) as info:
        context.join(timeout=120)
    assert (info.value.rank, info.value.exitcode) == (1, signal.SIGKILL), info.value
    assert "rank 1 (pid" in str(info.value) and "signal 9 (SIGKILL)" in str(info.value)
    assert [p.exitcode for p in context.processes] == [0 if survivor_returns else -signal.SIGKILL, -signal.SIGKILL]
