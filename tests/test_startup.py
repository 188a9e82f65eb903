"""A rank that never reaches init_parallel_env ends the job within PYCOLL_TIMEOUT instead of
leaving the others inside MPI's start-up for good; the launcher names the missing rank, and a rank
that ended without it ends the job at once. Processes started one by one with a launcher's
variables are refused instead of each forming a world of one."""
import time

import pytest
from conftest import launch, run_python, run_under_mpiexec


SCRIPT = (
    "import os, time, pycoll.distributed as dist\n"
    "if os.environ['PMI_RANK'] == '1':\n"
    "    time.sleep(120)  # never reaches init_parallel_env in time\n"
    "dist.init_parallel_env()\n"
    "print('through start-up', flush=True)\n")


@pytest.mark.parametrize("how, words", [
    ("launcher", "rank(s) [1] did not reach init_parallel_env"),
    ("mpiexec", "a rank did not reach init_parallel_env"),
])
def test_a_rank_that_never_starts_ends_the_job(how, words, tmp_path):
    script = tmp_path / "late.py"
    script.write_text(SCRIPT)
    env = {"PYCOLL_TIMEOUT": "3"}
    start = time.monotonic()
    if how == "launcher":
        result = launch(2, str(script), env=env)
    else:
        result = run_under_mpiexec(2, [str(script)], env=env)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "the job's start-up did not complete within 3 s on rank 0" in output and words in output, output
    assert "through start-up" not in output
    assert time.monotonic() - start < 60, output


def test_a_job_whose_ranks_all_start_is_untouched(tmp_path):
    script = tmp_path / "prompt.py"
    script.write_text(SCRIPT.replace("120", "1"))
    result = launch(2, str(script), env={"PYCOLL_TIMEOUT": "30"})
    assert result.returncode == 0 and result.stdout.count("through start-up") == 2, result.stdout + result.stderr
    assert "has waited" not in result.stdout + result.stderr


def test_a_long_wait_in_start_up_is_said_naming_the_ranks_not_arrived(tmp_path):
    """As a collective's long wait is (PYCOLL_STALL_WARN): once, then the job goes on."""
    script = tmp_path / "slow.py"
    script.write_text(SCRIPT.replace("120", "4"))
    result = launch(2, str(script), env={"PYCOLL_TIMEOUT": "60", "PYCOLL_STALL_WARN": "1"})
    output = result.stdout + result.stderr
    assert result.returncode == 0 and result.stdout.count("through start-up") == 2, output
    assert output.count("pycoll: rank 0 has waited 1 s in init_parallel_env (PYCOLL_STALL_WARN) for rank(s) [1], "
                        "which have not reached it; it fails after 60 s (PYCOLL_TIMEOUT)") == 1, output


def test_a_rank_that_ends_without_init_parallel_env_ends_the_job_at_once(tmp_path):
    script = tmp_path / "skip.py"
    script.write_text(SCRIPT.replace("time.sleep(120)  # never reaches init_parallel_env in time", "sys.exit(0)")
                      .replace("import os, time", "import os, sys, time"))
    start = time.monotonic()
    result = launch(2, str(script))  # PYCOLL_TIMEOUT is 60 s
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert ("the job's start-up cannot complete on rank 0: rank(s) [1] ended without calling "
            "init_parallel_env") in output, output
    assert time.monotonic() - start < 20, output


@pytest.mark.parametrize("env, words", [
    ({"PADDLE_TRAINERS_NUM": "2", "PADDLE_TRAINER_ID": "0"},
     "PADDLE_TRAINERS_NUM=2 but MPI started 1 process(es)"),
    ({"PADDLE_TRAINER_ENDPOINTS": "127.0.0.1:6170,127.0.0.1:6171", "PADDLE_CURRENT_ENDPOINT": "127.0.0.1:6170"},
     "PADDLE_TRAINER_ENDPOINTS names 2 rank(s) but MPI started 1 process(es)"),
    ({"WORLD_SIZE": "2", "RANK": "0"}, "WORLD_SIZE=2 but MPI started 1 process(es)"),
])
def test_a_process_started_by_hand_with_a_launchers_variables_is_refused(env, words):
    result = run_python(["-c", "import pycoll.distributed as dist; dist.init_parallel_env()"],
                        env={**env, "PYCOLL_BACKEND": "cpu"})
    assert result.returncode == 1 and f"RuntimeError: {words}" in result.stderr, result.stderr
    assert "not one by one" in result.stderr


def test_a_world_of_one_with_matching_variables_starts():
    result = run_python(["-c", "import pycoll.distributed as dist; print(dist.init_parallel_env().nranks)"],
                        env={"PADDLE_TRAINERS_NUM": "1", "PADDLE_TRAINER_ENDPOINTS": "127.0.0.1:6170"})
    assert result.returncode == 0 and result.stdout.strip() == "1", result.stderr
