"""A rank that never reaches init_parallel_env ends the job within PYCOLL_TIMEOUT instead of
leaving the others inside MPI's start-up for good; the launcher names the missing rank."""
import time

import pytest
from conftest import launch, run_command

from pycoll.distributed._mpiexec import rank_command

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
        result = run_command(rank_command(2, [str(script)]), env=env)
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
