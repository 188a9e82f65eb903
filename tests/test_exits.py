"""A rank that leaves before its peers, however it leaves, fails the job with a non-zero status and
a line naming it: under the launcher, plain mpiexec and spawn (os._exit here; exceptions,
sys.exit and signals in test_launch). A job whose ranks all os._exit(0) once done succeeds."""
import time

import pytest
from conftest import RANKS_DIR, assert_gone, launch, run_python, run_under_mpiexec, started_pids


LEFT = "all_reduce #1 on world (ranks [0, 1]) cannot complete: rank(s) [1] left the job"


def test_os_exit_0_while_a_peer_waits_fails_the_job_under_the_launcher():
    start = time.monotonic()
    result = launch(2, "failing.py", "os_exit")
    output = result.stdout + result.stderr
    assert result.returncode != 0 and LEFT in output, output
    assert time.monotonic() - start < 30, output
    assert_gone(started_pids(output))


def test_os_exit_with_a_status_ends_the_job_with_it():
    result = launch(2, "failing.py", "os_exit3")
    output = result.stdout + result.stderr
    assert result.returncode == 3, output
    assert "pycoll: rank 1 called os._exit(3); stopping the job" in output
    assert_gone(started_pids(output))


@pytest.mark.parametrize("code", [0, 9])
def test_os_exit_before_init_parallel_env_is_an_exit_of_the_rank(code, tmp_path):
    """Before MPI starts, os._exit skips the exit handlers: with a status it still stops the job at
    once naming the rank and the call (not after the others' 30 s, nor as a signal 9); 0 is a
    rank that finished, the job goes on."""
    script = tmp_path / "early.py"
    script.write_text(
        "import os, sys, time\n"
        "import pycoll.distributed as dist\n"
        "if int(os.environ['PADDLE_TRAINER_ID']) == 1:\n"
        "    time.sleep(0.3)\n"
        f"    os._exit({code})\n"
        "time.sleep(3 if %d == 0 else 30)\n"
        "print('rank 0 done', flush=True)\n" % code)
    start = time.monotonic()
    result = launch(2, str(script), timeout=60)
    output = result.stdout + result.stderr
    if code:
        assert result.returncode == code and f"rank 1 called os._exit({code})" in output, output
        assert "signal" not in output and time.monotonic() - start < 20, output
        assert_gone(started_pids(output))
    else:
        assert result.returncode == 0 and "rank 0 done" in output, output


def test_os_exit_0_under_plain_mpiexec():
    result = run_under_mpiexec(2, [str(RANKS_DIR / "failing.py"), "os_exit"])
    output = result.stdout + result.stderr
    assert result.returncode != 0 and LEFT in output, output


def test_os_exit_0_under_spawn(tmp_path):
    script = tmp_path / "spawned.py"
    script.write_text(
        "import os, sys, time, numpy as np, pycoll.distributed as dist\n"
        "def train():\n"
        "    dist.init_parallel_env()\n"
        "    if dist.get_rank() == 1:\n"
        "        time.sleep(0.3)\n"
        "        os._exit(0)\n"
        "    dist.all_reduce(np.ones(3))\n"
        "if __name__ == '__main__':\n"
        "    try:\n"
        "        dist.spawn(train, nprocs=2)\n"
        "    except dist.SpawnError as exc:\n"
        "        print('SpawnError', exc.exitcode, exc)\n"
        "        sys.exit(9)\n")
    result = run_python([str(script)], cwd=tmp_path)
    assert result.returncode == 9 and "SpawnError 1" in result.stdout, result.stdout + result.stderr
    assert LEFT in result.stdout


@pytest.mark.parametrize("how", ["launcher", "mpiexec"])
def test_ranks_that_all_os_exit_once_done_succeed(how, tmp_path):
    script = tmp_path / "done.py"
    script.write_text(
        "import os, time, numpy as np, pycoll.distributed as dist\n"
        "dist.init_parallel_env()\n"
        "x = np.ones(4)\n"
        "dist.all_reduce(x)\n"
        "if dist.get_rank() == 0:\n"
        "    time.sleep(1.0)  # still busy (a checkpoint) when rank 1 leaves\n"
        "    print('rank 0 finished its work', flush=True)\n"
        "os._exit(0)\n")
    if how == "launcher":
        result = launch(2, str(script))
    else:
        result = run_under_mpiexec(2, [str(script)])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "rank 0 finished its work" in result.stdout
    # the rank that left first finalised MPI while its watchdog thread still probed for questions
    # (a probe: MPICH's "Attempting to use an MPI routine (internal_Iprobe) after finalizing")
    assert "after finalizing" not in result.stderr, result.stderr


@pytest.mark.parametrize("env", [{}, {"PYCOLL_CHECK": "1"}])
def test_messages_sent_and_never_received_are_named_at_exit(env, tmp_path):
    """A pipeline whose rank 1 skips its first receive gets each message one step late, and the
    job ended with status 0 saying nothing (a probe); now the rank names what it never received
    on each group, sub-groups included (the job still ends with 0: every call completed).
    PYCOLL_CHECK's descriptor of each send is not counted as a message of its own."""
    script = tmp_path / "skipped.py"
    script.write_text(
        "import numpy as np, pycoll.distributed as dist\n"
        "dist.init_parallel_env()\n"
        "rank, pair = dist.get_rank(), dist.new_group([0, 1])\n"
        "for step in range(2):\n"
        "    if rank == 0:\n"
        "        dist.send(np.full(4, float(step), np.float32), dst=1)\n"
        "    elif step == 1:\n"
        "        x = np.zeros(4, np.float32)\n"
        "        dist.recv(x, src=0)\n"
        "        print('rank 1 received', x.tolist(), flush=True)\n"
        "if rank == 0:\n"
        "    dist.send(np.zeros(3, np.float64), dst=1, group=pair)\n")
    result = launch(2, str(script), env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "rank 1 received [0.0, 0.0, 0.0, 0.0]" in output, output
    for what in ("1 message(s) (16 bytes) that rank 0 sent on world (ranks [0, 1])",
                 "1 message(s) (24 bytes) that rank 0 sent on group 1 (ranks [0, 1])"):
        assert (f"[rank 1] pycoll: {what} were never received here: a send without its recv, so the receives "
                "before it may have taken messages meant for later ones") in output, output
    assert output.count("never received") == 2 and "[rank 0] pycoll" not in output, output


def test_under_check_a_peer_that_left_is_said_to_have_ended_without_the_call(tmp_path):
    """PYCOLL_CHECK compares every call first, so a peer that left made no other call: the message
    no longer guesses it made this one otherwise (nor suggests PYCOLL_CHECK, already on)."""
    script = tmp_path / "shorter.py"
    script.write_text("import numpy as np, pycoll.distributed as dist\n"
                      "dist.init_parallel_env()\n"
                      "for _ in range(3 if dist.get_rank() == 0 else 2):\n"
                      "    dist.all_reduce(np.ones(4))\n")
    result = launch(2, str(script), env={"PYCOLL_CHECK": "1"})
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert ("all_reduce #3 on world (ranks [0, 1]) cannot complete: rank(s) [1] left the job (exited) (it ended "
            "without making this call); stopping the job") in output, output


def test_a_caught_collective_failure_ends_the_job_at_exit_naming_the_call(tmp_path):
    """MPI cannot finalise after a failed collective, so a rank that caught the error still ends
    the job at exit: it now names the call, and the launcher names the rank (it said no rank had
    said why, and blamed MPI's message). The ranks compare each call's arguments first, so no
    mismatch reaches MPI: rank 1's engine is handed a root MPI refuses itself (MPI_ERR_ROOT), as
    the collectives wrap an engine's failure."""
    script = tmp_path / "caught.py"
    script.write_text("import numpy as np, pycoll.distributed as dist\n"
                      "from pycoll.distributed._failure import call_failed\n"
                      "dist.init_parallel_env()\n"
                      "g = dist.get_group()\n"
                      "if dist.get_rank() == 1:\n"
                      "    try:\n"
                      "        try:\n"
                      "            g.engine.broadcast(np.ones(4, np.float32), 5, True, 9)\n"
                      "        except Exception as exc:\n"
                      "            raise call_failed('broadcast', 9, g, exc) from exc\n"
                      "    except Exception as exc:\n"
                      "        print('caught', type(exc).__name__, flush=True)\n"
                      "dist.all_reduce(np.ones(3))\n")
    result = launch(2, str(script))
    output = result.stdout + result.stderr
    assert result.returncode == 1 and "caught CollectiveError" in output, output
    assert ("pycoll: rank 1: broadcast #9 on world (ranks [0, 1]) failed earlier in this process (its error was "
            "raised there); MPI cannot finalise after a failed collective, so the job ends with status 1") in output
    assert "pycoll.launch: rank 1 failed (exit status 1)" in output and "no rank said why" not in output, output
