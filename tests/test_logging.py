"""The pycoll logger: its level from PYCOLL_LOG_LEVEL (a bad one refused, naming the variable), its
own stderr line with the rank when the application configured no logging, and the application's
logging otherwise, with "pycoll" said once."""
from conftest import launch, run_python

SCRIPT = "from pycoll._logging import logger; logger.info('hello %d', 1); logger.warning('careful')"


def test_without_configuration_pycoll_writes_its_own_line_at_the_chosen_level():
    quiet = run_python(["-c", SCRIPT], env={"PYCOLL_LOG_LEVEL": None})
    assert quiet.stderr == "pycoll: careful\n", quiet.stderr
    chatty = run_python(["-c", SCRIPT], env={"PYCOLL_LOG_LEVEL": "info", "PMI_RANK": "3"})
    assert chatty.stderr == "[rank 3] pycoll: hello 1\n[rank 3] pycoll: careful\n", chatty.stderr


def test_the_applications_logging_shows_the_records_once():
    configured = run_python(["-c", "import logging; logging.basicConfig(); " + SCRIPT],
                            env={"PYCOLL_LOG_LEVEL": "INFO"})
    assert configured.stderr == "INFO:pycoll:hello 1\nWARNING:pycoll:careful\n", configured.stderr


def test_a_bad_level_is_refused_naming_the_variable():
    result = run_python(["-c", "import pycoll"], env={"PYCOLL_LOG_LEVEL": "bogus"})
    assert result.returncode != 0
    assert "PYCOLL_LOG_LEVEL='bogus': use one of DEBUG, INFO, WARNING, ERROR, CRITICAL" in result.stderr


def test_ranks_log_with_their_rank(tmp_path):
    script = tmp_path / "hello.py"
    script.write_text("import pycoll.distributed as dist\ndist.init_parallel_env()\n")
    result = launch(2, str(script), env={"PYCOLL_LOG_LEVEL": "INFO"})
    assert result.returncode == 0, result.stderr
    for rank in (0, 1):
        assert f"[rank {rank}] pycoll: rank {rank} of 2 started (cpu backend" in result.stderr, result.stderr
