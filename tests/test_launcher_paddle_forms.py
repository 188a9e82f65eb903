"""The launcher as paddle 3.3.1's users drive it: the script's ``__file__``, the PADDLE_*
variables paddle's launcher reads as options, ``dist.launch()`` from Python, and paddle's
spellings of the options' values."""
import logging
import shutil

import pytest

from conftest import RANKS_DIR, assert_ok, run_python
from pycoll._logging import logger
from pycoll.launch import build_command

ENV_SCRIPT = RANKS_DIR / "launcher_paddle_env.py"


def test_the_scripts_file_is_absolute_so_it_finds_its_files_after_a_chdir(tmp_path):
    shutil.copy(ENV_SCRIPT, tmp_path)
    result = run_python(["-m", "pycoll.launch", "--nproc_per_node", "1", ENV_SCRIPT.name], cwd=tmp_path)
    assert_ok(result, expect_lines=1)
    assert f"file_absolute=True argv0={tmp_path / ENV_SCRIPT.name} " in result.stdout, result.stdout


def test_paddles_variables_set_the_options_over_the_command_line(tmp_path):
    """paddle 3.3.1, measured: PADDLE_NPROC_PER_NODE=2 with --nproc_per_node 1 starts 2 ranks
    (its env_args_mapping overrides the command line); its CPU ranks get PADDLE_DISTRI_BACKEND=gloo."""
    env = {"PADDLE_NPROC_PER_NODE": "2", "PADDLE_LOG_DIR": str(tmp_path / "logs"), "PADDLE_LOG_LEVEL": "warn"}
    result = run_python(["-m", "pycoll.launch", "--nproc_per_node", "1", "--log_level", "error", ENV_SCRIPT],
                        env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "--nproc_per_node 2 from PADDLE_NPROC_PER_NODE" in result.stderr, result.stderr
    for rank in range(2):
        log = (tmp_path / "logs" / f"workerlog.{rank}").read_text()
        assert f"OK rank={rank} of=2 " in log and "backend=gloo level=WARNING" in log, log


@pytest.mark.parametrize("variable, value, words", [
    ("PADDLE_WITH_GLOO", "1", "unrecognized arguments: --with_gloo=1"),
    ("PADDLE_NNODES", "2:4", "invalid int value: '2:4'"),
    ("PADDLE_RUN_MODE", "ps", "--run_mode ps: pycoll runs collective jobs only"),
    ("PADDLE_LOG_OVERWRITE", "maybe", "give true or false"),
])
def test_a_variable_for_an_option_pycoll_refuses_is_refused_alike(variable, value, words, monkeypatch, capsys):
    monkeypatch.setenv(variable, value)
    with pytest.raises(SystemExit) as exited:
        build_command([str(ENV_SCRIPT)])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert words in err, err
    assert variable in err or variable == "PADDLE_RUN_MODE", err  # a value's own check names the option


def test_paddles_variables_reach_every_option_they_name(monkeypatch, tmp_path):
    for variable, value in {"PADDLE_NNODES": "1", "PADDLE_RANK": "0", "PADDLE_JOB_ID": "j7",
                            "PADDLE_MAX_RESTART": "2", "PADDLE_START_PORT": "6170",
                            "PADDLE_LOG_OVERWRITE": "true", "POD_IP": "127.0.0.1",
                            "PADDLE_MASTER": "127.0.0.1:6000", "PADDLE_IPS": "127.0.0.1"}.items():
        monkeypatch.setenv(variable, value)
    args, command, env = build_command(["--job_id", "cli", "--log_dir", str(tmp_path), str(ENV_SCRIPT)])
    assert (args.job_id, args.max_restart, args.start_port, args.log_overwrite) == ("j7", 2, 6170, True)
    assert (args.nnodes, args.node_rank, args.host, args.master_addr, args.master_port) == \
        (1, 0, "127.0.0.1", "127.0.0.1", 6000)
    assert env["PADDLE_TRAINER_ENDPOINTS"] == "127.0.0.1:6170"


def test_paddles_log_level_names_are_taken(monkeypatch):
    """paddle passes --log_level to logging, which takes WARN and FATAL."""
    level = logger.level
    try:
        for given, meant in (("warn", "WARNING"), ("FATAL", "CRITICAL"), ("debug", "DEBUG")):
            _, _, env = build_command(["--log_level", given, str(ENV_SCRIPT)])
            assert env["PYCOLL_LOG_LEVEL"] == meant and logger.level == getattr(logging, meant)
    finally:
        logger.setLevel(level)


def test_a_log_dir_that_is_a_file_is_a_usage_error(tmp_path, capsys):
    taken = tmp_path / "taken"
    taken.write_text("")
    with pytest.raises(SystemExit) as exited:
        build_command(["--log_dir", str(taken), str(ENV_SCRIPT)])
    assert exited.value.code == 2
    assert f"--log_dir {taken}: cannot make that folder" in capsys.readouterr().err


@pytest.mark.parametrize("order", ["package-first", "function-first"])
def test_dist_launch_runs_the_launcher_whatever_the_import_order(order, tmp_path):
    result = run_python([RANKS_DIR / "launcher_call.py", order, "--nproc_per_node", "2", ENV_SCRIPT],
                        cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("OK rank=") == 2, result.stdout  # paddle's logs are shown as they grow
