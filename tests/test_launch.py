"""python -m pycoll.launch: arguments, exit codes and a failing rank stopping the job."""
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import (RANKS_DIR, assert_gone, assert_ok, free_port, launch, run_python, run_under_mpiexec,
                      started_pids)
from pycoll.distributed._mpiexec import rank_command


def test_runs_every_rank_with_the_script_arguments():
    result = launch(3, "failing.py", "ok")
    assert_ok(result, expect_lines=3)
    assert "sum=3 argv=['ok']" in result.stdout


def test_module_mode_runs_a_module_as_main():
    result = run_python(["-m", "pycoll.launch", "--nproc_per_node", "2", "-m", "failing", "ok"],
                        cwd=RANKS_DIR)
    assert_ok(result, expect_lines=2)


def test_gpus_flag_sets_visibility_and_rank_count():
    result = run_python(["-m", "pycoll.launch", "--gpus", "0,1", str(RANKS_DIR / "failing.py"), "ok"])
    assert_ok(result, expect_lines=2)
    assert "cuda_visible=0,1" in result.stdout


@pytest.mark.parametrize("mode, status", [("raise", 1), ("exit", 3), ("kill", None)])
def test_a_failing_rank_stops_the_job_with_its_status(mode, status):
    start = time.monotonic()
    result = launch(2, "failing.py", mode)
    elapsed = time.monotonic() - start
    output = result.stdout + result.stderr
    if status is None:
        assert result.returncode != 0, output
    else:
        assert result.returncode == status, output
    # rank 0 sits in an all_reduce with a 60 s timeout: it must have been stopped, not timed out
    assert elapsed < 30, f"took {elapsed:.1f} s\n{output}"
    assert "failing.py OK" not in output
    if mode == "raise":
        assert 'KeyError: \'planted failure\'' in output and "pycoll: rank 1 failed" in output
        assert "_entry.py" not in output, "the traceback should show the user's frames only"
    pids = started_pids(output)
    assert len(pids) == 2, output
    assert_gone(pids)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_stopping_the_launcher_stops_every_rank(signum, tmp_path):
    """Ctrl-C or a scheduler's SIGTERM to the launcher, while rank 0 waits in a collective."""
    log = tmp_path / "output.txt"
    argv = [sys.executable, "-m", "pycoll.launch", "--nproc_per_node", "2", str(RANKS_DIR / "failing.py"), "hang"]
    with open(log, "w") as out:
        launcher = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
                                    env={**os.environ, "PYCOLL_TIMEOUT": "60"})
    try:
        deadline = time.monotonic() + 60
        while len(started_pids(log.read_text())) < 2:
            assert launcher.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        pids = started_pids(log.read_text())
        launcher.send_signal(signum)
        launcher.wait(timeout=30)
    finally:
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGKILL)
            launcher.wait()
    assert launcher.returncode != 0, log.read_text()
    assert_gone(pids)


def test_bad_launcher_arguments_are_refused():
    result = run_python(["-m", "pycoll.launch", "--gpus", "a,b", "x.py"])
    assert result.returncode == 2 and "--gpus" in result.stderr
    # a rank per listed GPU, as spawn's gpus: 3 ranks on 2 GPUs would share one
    result = run_python(["-m", "pycoll.launch", "--gpus", "0,1", "--nproc_per_node", "3", "x.py"])
    assert result.returncode == 2 and "--gpus 0,1 names 2 GPU(s) for --nproc_per_node 3 ranks" in result.stderr, \
        result.stderr
    # named as typed: paddle's spelling, and a script argument of the same name is the script's
    result = run_python(["-m", "pycoll.distributed.launch", "--devices=0", "--nproc_per_node", "2", "x.py", "--gpus"])
    assert result.returncode == 2 and "--devices 0 names 1 GPU(s)" in result.stderr, result.stderr


@pytest.mark.parametrize("status", ["3", "0"])
def test_under_plain_mpiexec_a_rank_that_exits_while_a_peer_waits_ends_the_job(status, tmp_path):
    script = tmp_path / "leave.py"
    script.write_text(
        "import sys, time, numpy as np, pycoll.distributed as dist\n"
        "dist.init_parallel_env()\n"
        "if dist.get_rank() == 1:\n"
        "    time.sleep(0.5)\n"
        f"    sys.exit({status})\n"
        "dist.all_reduce(np.ones(4))\n")
    start = time.monotonic()
    result = run_under_mpiexec(2, [str(script)])  # mpiexec -n 2 python leave.py
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "all_reduce #1 on world (ranks [0, 1]) cannot complete: rank(s) [1] left the job" in output
    assert time.monotonic() - start < 30, f"rank 0 waits with a 60 s timeout: it must be stopped\n{output}"


def test_ranks_get_the_variables_torchrun_and_paddle_set():
    result = launch(2, "environment.py", env={"HYDRA_PASSED": "kept", "RANK": "7"})
    assert_ok(result, expect_lines=2)
    lines = sorted(line for line in result.stdout.splitlines() if "environment OK" in line)
    values = [dict(item.split("=", 1) for item in line.split()[2:]) for line in lines]
    endpoints = values[0]["PADDLE_TRAINER_ENDPOINTS"].split(",")
    assert len(endpoints) == 2 and len(set(endpoints)) == 2
    for rank, seen in enumerate(values):
        assert seen["RANK"] == seen["PADDLE_TRAINER_ID"] == seen["LOCAL_RANK"] == str(rank), seen
        assert seen["PADDLE_GLOBAL_RANK"] == seen["PADDLE_LOCAL_RANK"] == seen["PADDLE_RANK_IN_NODE"] == str(rank)
        assert seen["WORLD_SIZE"] == seen["PADDLE_TRAINERS_NUM"] == seen["LOCAL_WORLD_SIZE"] == "2"
        assert seen["PADDLE_GLOBAL_SIZE"] == seen["PADDLE_LOCAL_SIZE"] == "2" and seen["PADDLE_NNODES"] == "1"
        assert seen["PADDLE_CURRENT_ENDPOINT"] == endpoints[rank]
        assert seen["MASTER_ADDR"] == "127.0.0.1" and seen["MASTER_PORT"].isdigit()
        assert seen["HYDRA_PASSED"] == "kept", "MPI's own configuration passes through"
        assert len(seen["PYCOLL_STORE_TOKEN"]) == 32 and seen["PYCOLL_STORE_TOKEN"] == values[0]["PYCOLL_STORE_TOKEN"]


def test_a_launcher_command_that_is_no_program_is_refused_by_name(tmp_path):
    script = tmp_path / "x.py"
    script.write_text("print('never')\n")
    result = run_python(["-m", "pycoll.launch", "--nproc_per_node", "2", str(script)],
                        env={"PYCOLL_MPIEXEC": "/no/such/mpiexec -n 1"})
    assert result.returncode == 2 and "PYCOLL_MPIEXEC='/no/such/mpiexec -n 1': '/no/such/mpiexec' is no program" \
        in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_a_launcher_command_with_arguments():
    mpiexec = rank_command(1, [])[0]
    result = launch(2, "environment.py", env={"PYCOLL_MPIEXEC": f"{mpiexec} -genv PYCOLL_TEST_GENV yes"})
    assert_ok(result, expect_lines=2)
    assert result.stdout.count("PYCOLL_TEST_GENV=yes") == 2


@pytest.mark.parametrize("argv, words", [
    (["--nproc_per_node", "0", "x.py"], "--nproc_per_node 0: it must be at least 1"),
    (["--nproc_per_node", "2", "no_such_script.py"], "no_such_script.py: no such script"),
    (["-m", "no_such_package.module"], "-m no_such_package.module: no module of that name"),
])
def test_a_job_that_cannot_start_is_refused_before_any_rank_starts(argv, words):
    result = run_python(["-m", "pycoll.launch", *argv])
    assert result.returncode == 2 and words in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


STDIN_READER = """
import os, sys
print(f"rank {os.environ['PADDLE_TRAINER_ID']} read {sys.stdin.read()!r}", flush=True)
"""


def test_rank_0_reads_the_launchers_input_and_the_others_an_empty_one(tmp_path):
    """MPI hands the other ranks a pipe that never ends: their read must not wait forever."""
    script = tmp_path / "reader.py"
    script.write_text(STDIN_READER)
    result = run_python(["-m", "pycoll.launch", "--nproc_per_node", "2", str(script)], timeout=60, input="hello\n")
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(result.stdout.splitlines()) == ["rank 0 read 'hello\\n'", "rank 1 read ''"], result.stdout


def test_a_syntax_error_in_the_script_is_shown_as_python_shows_it(tmp_path):
    script = tmp_path / "broken.py"
    script.write_text("x = (1,\nprint('hi'\n")
    result = run_python(["-m", "pycoll.launch", "--nproc_per_node", "2", str(script)], timeout=60)
    assert result.returncode == 1
    assert f'File "{script}", line 2' in result.stderr and "SyntaxError: '(' was never closed" in result.stderr
    assert "_entry.py" not in result.stderr and "runpy" not in result.stderr, result.stderr


@pytest.mark.parametrize("stderr_too", [False, True])
def test_a_job_whose_output_reader_exits_ends_with_sigpipes_status_and_says_so(stderr_too, tmp_path):
    """``... | head -2`` (``2>&1 | head -2``): the reader goes away while the ranks still print."""
    script = tmp_path / "chatty.py"
    script.write_text("for i in range(10 ** 6):\n    print('line', i)\n")
    proc = subprocess.Popen([sys.executable, "-m", "pycoll.launch", "--nproc_per_node", "2", str(script)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT if stderr_too else subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        assert any(proc.stdout.readline().startswith("line") for _ in range(3))
        proc.stdout.close()
        status = proc.wait(timeout=60)
        err = "" if stderr_too else proc.stderr.read()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert status == 128 + signal.SIGPIPE, err
    if not stderr_too:
        assert "a pipe whose reader has exited" in err and "PYCOLL_CHECK" not in err, err


def test_sys_exit_with_a_message_shows_it(tmp_path):
    script = tmp_path / "say.py"
    script.write_text("import os, sys\nif os.environ['RANK'] == '1':\n    sys.exit('the data is missing')\n")
    result = launch(2, str(script))
    assert result.returncode == 1 and "the data is missing" in result.stderr, result.stderr


def test_ctrl_c_stops_the_job_with_status_130_and_no_tracebacks(tmp_path):
    log = tmp_path / "output.txt"
    argv = [sys.executable, "-m", "pycoll.launch", "--nproc_per_node", "2", str(RANKS_DIR / "failing.py"), "hang"]
    with open(log, "w") as out:
        launcher = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while len(started_pids(log.read_text())) < 2:
            assert launcher.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        os.killpg(launcher.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole group
        launcher.wait(timeout=30)
    finally:
        if launcher.poll() is None:
            os.killpg(launcher.pid, signal.SIGKILL)
            launcher.wait()
    output = log.read_text()
    assert launcher.returncode == 130, output
    assert "Traceback" not in output and "KeyboardInterrupt" not in output, output
    assert output.count("pycoll.launch: interrupted (Ctrl-C)") == 1, output


def test_a_keyboard_interrupt_the_code_raises_is_a_failure_with_its_traceback(tmp_path):
    """Only a Ctrl-C that reached every rank is reported once by the launcher; a rank's own
    ``raise KeyboardInterrupt`` showed nothing ('no rank said why') before."""
    script = tmp_path / "interrupts.py"
    script.write_text("import os\nif os.environ['RANK'] == '1':\n    raise KeyboardInterrupt('stop here')\n")
    result = launch(2, str(script))
    assert result.returncode == 130, result.stderr
    assert "KeyboardInterrupt: stop here" in result.stderr and "interrupts.py\", line 3" in result.stderr
    assert "rank 1 failed" in result.stderr and "no rank said why" not in result.stderr, result.stderr


def test_paddles_module_name_and_option_spelling_start_the_same_launcher(tmp_path):
    """Under paddle's name the logs default to paddle's log/workerlog.RANK, and are also shown on
    the terminal as they grow (paddle's users read either)."""
    result = run_python(["-m", "pycoll.distributed.launch", "--nproc_per_node", "2",
                         str(RANKS_DIR / "environment.py")], cwd=tmp_path)
    assert_ok(result, expect_lines=2)
    for rank in range(2):
        assert f"environment OK rank={rank}" in (tmp_path / "log" / f"workerlog.{rank}").read_text()
    assert "log/workerlog.RANK (and is shown here as it comes)" in result.stderr
    failed = run_python(["-m", "pycoll.distributed.launch", "--nproc_per_node", "2",
                         str(RANKS_DIR / "failing.py"), "raise"], cwd=tmp_path)
    assert failed.returncode == 1 and "KeyError: 'planted failure'" in failed.stdout, failed.stdout
    assert "KeyError: 'planted failure'" in (tmp_path / "log" / "workerlog.1").read_text()
    result = run_python(["-m", "pycoll.distributed.launch", "--devices", "x", "x.py"])
    assert result.returncode == 2 and "--devices 'x'" in result.stderr, result.stderr  # named as typed


def test_log_dir_gives_each_rank_its_log_and_shows_the_failed_ones(tmp_path):
    logs = tmp_path / "log"
    result = run_python(["-m", "pycoll.launch", "--nproc_per_node", "2", "--log_dir", str(logs),
                         str(RANKS_DIR / "failing.py"), "ok"])
    assert result.returncode == 0 and "OK rank=" not in result.stdout, result.stdout + result.stderr
    assert all("OK rank=%d" % r in (logs / f"workerlog.{r}").read_text() for r in range(2))
    result = run_python(["-m", "pycoll.launch", "--nproc_per_node", "2", "--log_dir", str(logs),
                         str(RANKS_DIR / "failing.py"), "raise"])
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"pycoll.launch: the end of {logs}/workerlog.1:" in result.stderr, result.stderr
    assert "planted" in (logs / "workerlog.1").read_text()


BEFORE_INIT = {  # rank 1 fails before init_parallel_env while rank 0 waits in MPI's start-up
    "raise": "raise KeyError('planted before init')",
    "exit": "sys.exit(3)",
    "import": "import no_such_module_for_pycoll",
}


@pytest.mark.parametrize("mode, status, words", [
    ("raise", 1, "KeyError: 'planted before init'"), ("exit", 3, "rank 1 exited with status 3"),
    ("import", 1, "ModuleNotFoundError: No module named 'no_such_module_for_pycoll'"),
    ("no_init", 1, "RuntimeError: planted, and rank 0 never initialises"),
])
def test_a_rank_that_fails_before_init_parallel_env_stops_the_job_at_once(mode, status, words, tmp_path):
    """MPI's start-up waits for every rank, and a plain failing exit of a rank that has not
    started MPI does not end an MPI job: the job must still end at once, with the rank's status."""
    script = tmp_path / "early.py"
    if mode == "no_init":  # no rank uses pycoll.distributed: rank 0 just works on
        script.write_text("import os, time\n"
                          "print(f'started pid={os.getpid()}', flush=True)\n"
                          "if os.environ['RANK'] == '1':\n"
                          "    raise RuntimeError('planted, and rank 0 never initialises')\n"
                          "time.sleep(60)\n")
    else:
        script.write_text("import os, sys, pycoll.distributed as dist\n"
                          "print(f'started pid={os.getpid()}', flush=True)\n"
                          "if os.environ['RANK'] == '1':\n"
                          f"    {BEFORE_INIT[mode]}\n"
                          "dist.init_parallel_env()\n"
                          "print('through start-up', flush=True)\n")
    start = time.monotonic()
    result = launch(2, str(script))  # PYCOLL_TIMEOUT is 60 s
    elapsed = time.monotonic() - start
    output = result.stdout + result.stderr
    assert result.returncode == status, output
    assert words in output and "pycoll: rank 1 failed; stopping the job" in output, output
    assert "through start-up" not in output and "did not complete" not in output, output
    assert elapsed < 20, f"took {elapsed:.1f} s\n{output}"
    assert_gone(started_pids(output))


def test_a_rank_killed_by_a_fatal_signal_is_named_with_its_python_stack():
    result = launch(2, "failing.py", "segv")
    output = result.stdout + result.stderr
    assert result.returncode == signal.SIGSEGV, output
    pid = dict(re.findall(r"started rank=(\d) pid=(\d+)", result.stdout))["1"]
    assert f"pycoll.launch: rank 1 (pid {pid}) was killed by signal 11 (SIGSEGV); its Python stack:" \
           in result.stderr, output
    stack = result.stderr.split("its Python stack:", 1)[1]
    assert "Segmentation fault" in stack and 'failing.py", line' in stack and "in crash" in stack, output
    assert "_entry.py" not in stack and "Extension modules" not in stack, "the user's frames only"
    assert_gone(started_pids(output))


def test_a_rank_killed_by_sigkill_is_named_by_its_process_id():
    result = launch(2, "failing.py", "kill")
    output = result.stdout + result.stderr
    assert result.returncode == signal.SIGKILL, output
    assert "pycoll.launch: a rank was killed by signal 9 (SIGKILL) before it could say why" in result.stderr
    ranks = dict(re.findall(r"started rank=(\d) pid=(\d+)", result.stdout))
    assert f"rank 0: pid {ranks['0']}, rank 1: pid {ranks['1']}" in result.stderr, output
    assert_gone(started_pids(output))


def test_paddles_launcher_options_are_accepted(tmp_path):
    port = free_port()
    result = run_python(["-m", "pycoll.distributed.launch", "--master", f"127.0.0.1:{port}", "--rank", "0",
                         "--nnodes", "1", "--job_id", "job7", "--run_mode", "collective", "--log_level", "info",
                         "--max_restart", "3", "--log_overwrite", "True", "--legacy", "False",
                         "--host", "127.0.0.1", "--start_port", "6170", "--devices", "0,1",
                         "--log_dir", str(tmp_path / "log"), str(RANKS_DIR / "environment.py")],
                        env={"CUDA_VISIBLE_DEVICES": None})
    assert result.returncode == 0, result.stdout + result.stderr
    seen = [dict(item.split("=", 1) for item in (tmp_path / "log" / f"workerlog.{rank}").read_text().split()[2:])
            for rank in range(2)]
    for rank, env in enumerate(seen):
        assert env["FLAGS_selected_gpus"] == str(rank) and env["CUDA_VISIBLE_DEVICES"] == "0,1", env
        assert env["PADDLE_TRAINER_ENDPOINTS"] == "127.0.0.1:6170,127.0.0.1:6171", env
        assert env["PADDLE_CURRENT_ENDPOINT"] == f"127.0.0.1:{6170 + rank}", env
        assert env["PADDLE_MASTER"] == f"{env['MASTER_ADDR']}:{env['MASTER_PORT']}", env
        assert env["PADDLE_LOG_DIR"] == str(tmp_path / "log") and env["PYCOLL_LOG_LEVEL"] == "INFO", env


@pytest.mark.parametrize("argv, words", [
    (["--run_mode", "ps"], "--run_mode ps: pycoll runs collective jobs only"),
    (["--master", "etcd://10.0.0.1:2379"], "--master etcd://10.0.0.1:2379: give node 0's IP:PORT"),
    (["--master", "10.0.0.1:29500", "--master_port", "29501"], "disagrees with --master_port 29501"),
    (["--hos", "h"], "unrecognized arguments: --hos"),  # no abbreviation: --hos is neither --host nor --hostfile
    (["--log_overwrite", "maybe"], "--log_overwrite: 'maybe': give true or false"),
    (["--log_level", "loud"], "--log_level: invalid choice: 'LOUD'"),
])
def test_paddles_launcher_options_are_checked(argv, words):
    result = run_python(["-m", "pycoll.launch", *argv, str(RANKS_DIR / "environment.py")])
    assert result.returncode == 2 and words in result.stderr, result.stderr


def test_logs_are_appended_unless_overwritten_and_only_this_jobs_failure_is_shown(tmp_path):
    logs = tmp_path / "log"
    argv = ["-m", "pycoll.launch", "--nproc_per_node", "2", "--log_dir", str(logs), str(RANKS_DIR / "failing.py")]
    assert run_python([*argv, "raise"]).returncode == 1
    result = run_python([*argv, "exit"])
    assert result.returncode == 3, result.stderr
    shown = result.stderr.split(f"pycoll.launch: the end of {logs}/workerlog.1:", 1)[1]
    assert "rank 1 exited with status 3" in shown and "planted" not in shown, result.stderr
    assert "planted" in (logs / "workerlog.1").read_text(), "paddle appends to the logs"
    result = run_python([*argv[:-1], "--log_overwrite", "true", argv[-1], "ok"])
    assert result.returncode == 0, result.stderr
    assert (logs / "workerlog.0").read_text().count("started rank=0") == 1


def test_a_job_mpi_ended_without_a_ranks_word_points_at_pycoll_check(tmp_path):
    """MPICH ends a job itself on some mismatched collectives ('Message truncated', exit status
    142), before any rank can say why: the launcher's line says what that usually means."""
    from pycoll.distributed import _jobdir

    failed = _jobdir.failure(str(tmp_path), 142, 2)
    assert failed.rank is None and failed.status == 142 and not failed.reported
    assert "exit status 142 and no rank said why" in failed.text and "PYCOLL_CHECK=1" in failed.text


def test_failed_logs_show_any_of_pycolls_reasons_for_ending_a_job(tmp_path, capsys):
    """Under --log_dir the ranks' words are in their logs only: the launcher shows the end of each
    log that tells why the job ended, a watchdog verdict as well as a traceback (a probe saw a
    stall-notice verdict or 'left the job' shown nowhere)."""
    from pycoll.distributed.launch.logs import prepare_logs, show_failed_logs

    starts = prepare_logs(str(tmp_path), 0, 2, overwrite=False)
    (tmp_path / "workerlog.0").write_text("step 1\npycoll.CollectiveError: all_reduce #4 on world (ranks [0, 1]) "
                                          "cannot complete: rank(s) [1] left the job (exited); stopping the job\n")
    (tmp_path / "workerlog.1").write_text("step 1\nstep 2\n")
    show_failed_logs(starts)
    shown = capsys.readouterr().err
    assert f"the end of {tmp_path / 'workerlog.0'}" in shown and "left the job (exited)" in shown
    assert "workerlog.1" not in shown


def test_a_scripts_import_path_begins_with_its_folder_not_the_launch_folder(tmp_path):
    # as `python sub/train.py` and paddle's ranks: a module in the folder the job is launched from
    # does not hide an installed one (here the standard library's sqlite3)
    (tmp_path / "sqlite3.py").write_text("raise RuntimeError('the launch folder was searched first')\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "train.py").write_text("import sqlite3, sys\nprint('found', sqlite3.connect(':memory:') "
                                               "is not None, sys.path[0].endswith('sub'), flush=True)\n")
    result = launch(2, tmp_path / "sub" / "train.py", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout.count("found True True") == 2, result.stdout + result.stderr


def test_paddles_collective_launcher_flags_are_taken_and_named_as_ignored():
    result = run_python(["-m", "pycoll.launch", "--nproc_per_node", "1", "--with_gloo", "1", "--sort_ip", "False",
                         "--enable_gpu_log", "0", str(RANKS_DIR / "failing.py"), "ok"])
    assert result.returncode == 0, result.stdout + result.stderr
    assert "ignoring --sort_ip False, --with_gloo 1, --enable_gpu_log 0" in result.stderr, result.stderr
