"""bench/run_gpu.sh, the one command for a GPU machine, exercised without a GPU: its arguments,
its plan (--dry-run, for the GPU and for --cpu), and whole runs with a stand-in in place of each
step's command (every step runs whatever the others do; the summary, the tarball and its copies;
time limits, the budget and leftover processes), plus the one step that runs here for real."""
import importlib.util
import json
import os
import re
import signal
import sys
import tarfile
from pathlib import Path

import pytest

from conftest import assert_gone, run_command

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "run_gpu.sh"
PARTS = {
    "build": ["build", "environment"],
    "tests": ["tests-inprocess", "tests-nccl", "tests-ranks"],
    "kernels": ["kernels"],
    "collectives": ["collectives-1rank", "host-cost-1rank", "collectives-2ranks"],
    "peers": ["peers-1rank", "peers-2ranks"],
    "dp": ["dp-1rank", "dp-2ranks", "sharding-2ranks"],
    "failures": ["failures"],
}
STEPS = [step for steps in PARTS.values() for step in steps]
PLANNED = re.compile(r"^\[(\S+)\] (\S+) \(limit (\d+) s\)\n    (.*)$", re.M)
STAND_IN = r"""#!/usr/bin/env bash
# A stand-in for every step: it leaves a JSON file; some steps fail, overrun or leave a process.
step=$1 out=$2
echo "stand-in for $step"
echo "{\"step\": \"$step\"}" > "$out/$step.json"
case $step in
  tests-inprocess) echo '<testsuites><testsuite tests="5" failures="1" errors="1" skipped="1"/></testsuites>' > "$out/$step.xml" ;;
  kernels) exit 3 ;;
  dp-1rank) sleep 60 ;;
  peers-1rank) setsid bash -c "echo \$\$ > '$out/leftover.pid'; exec sleep 300" > /dev/null 2>&1 & sleep 0.5 ;;
  dp-2ranks) sleep "${STAND_IN_SLEEP:-0}" ;;
esac
"""


def run_gpu(*args, timeout=120, env=None):
    return run_command(["bash", SCRIPT, *args], timeout=timeout,
                       env={"PYTHON": sys.executable, **(env or {})})


def plan(*args):
    """[(part, step, limit, command)] of a --dry-run."""
    result = run_gpu("--dry-run", *args, timeout=30)
    assert result.returncode == 0, result.stderr
    return [(part, step, int(limit), command) for part, step, limit, command in
            PLANNED.findall(result.stdout)]


def summary_rows(path):
    """{step: (exit, seconds, limit, notes)} of a summary.txt."""
    rows = {}
    for line in path.read_text().splitlines():
        if line.startswith("#") or line.startswith("step "):
            continue
        step, _part, status, seconds, limit, *notes = line.split(None, 5)
        rows[step] = (status, seconds, limit, notes[0] if notes else "")
    return rows


def test_help_names_every_part_and_step():
    result = run_gpu("--help", timeout=30)
    assert result.returncode == 0, result.stderr
    for name in [*PARTS, *STEPS]:
        assert name in result.stdout


def test_the_suggested_device_calls_run_every_step_once():
    """The two calls the header suggests for a GPU machine cover every step exactly once."""
    calls = re.findall(r"^#   --part (\S+)", SCRIPT.read_text(), re.M)
    assert len(calls) == 2, calls
    covered = [step for call in calls for _, step, _, _ in plan("--part", call)]
    assert sorted(covered) == sorted(STEPS)


def test_dry_run_plans_every_gpu_step_in_order_and_makes_nothing(tmp_path):
    out = tmp_path / "out"
    steps = plan(out)
    assert [step for _, step, _, _ in steps] == STEPS
    assert all(step in PARTS[part] for part, step, _, _ in steps)
    commands = {step: command for _, step, _, command in steps}
    expected = {
        "build": ["pycoll.info --json", f"> {out}/info.json", "build_check"],
        "environment": ["nvidia-smi", "versions"],
        "tests-inprocess": ["pytest -m gpu", "--timeout 240", f"--junitxml={out}/tests-inprocess.xml",
                            "tests/test_kernels_gpu.py tests/test_tensor.py", "tests/test_nn_rnn.py"],
        "tests-nccl": ["pytest -m gpu", "tests/test_nccl.py tests/test_nccl_failures.py"],
        "tests-ranks": ["pytest -m gpu", "tests-ranks.xml tests --ignore=tests/test_kernels_gpu.py",
                        "--ignore=tests/test_nn_rnn.py", "--ignore=tests/test_nccl_failures.py"],
        "kernels": ["bench/bench_kernels.py --gpu", f"--json {out}/kernels.json"],
        "collectives-1rank": ["pycoll.bench all --backend nccl -c 1 --compare raw --nprocs 1",
                              "-e 256M", f"--plot {out}/collectives-1rank.png"],
        "host-cost-1rank": ["bench/nccl_host_cost.py  --json", f"{out}/host-cost-1rank.json"],
        "collectives-2ranks": ["--backend nccl", "--nprocs 2", f"--json {out}/collectives-2ranks.json"],
        "peers-1rank": ["pycoll.launch --nproc_per_node 1 bench/gpu_peers.py"],
        "peers-2ranks": ["pycoll.launch --nproc_per_node 2 bench/gpu_peers.py",
                         f"--plot {out}/peers-2ranks.png"],
        "dp-1rank": ["bench/data_parallel_overhead.py --device gpu --torch"],
        "dp-2ranks": ["--nproc_per_node 2 bench/data_parallel_overhead.py --device gpu --torch"],
        "failures": ["bench/detection.py --backend nccl"],
    }
    for step, fragments in expected.items():
        for fragment in fragments:
            assert fragment in commands[step], (step, fragment, commands[step])
    assert not out.exists()


def test_cpu_dry_run_plans_the_cpu_counterparts():
    commands = " ".join(command for *_, command in plan("--cpu"))
    for gpu_only in ("--gpu", "nvidia-smi", "--backend nccl", "gpu_peers.py", "--device gpu"):
        assert gpu_only not in commands
    for cpu in ("--backend cpu", "bench/cpu_peers.py", "--device cpu", "bench_kernels.py",
                "nccl_host_cost.py --stand-in"):
        assert cpu in commands
    tests = [command for _, step, _, command in plan("--cpu", "--part", "tests")]
    assert len(tests) == 3 and all(
        f"PYCOLL_TEST_STRICT_GPU=1 PYTHONPATH={ROOT}/tests/stand_in_site" in command and
        command.count("--deselect tests/") == 6 for command in tests), tests


def test_the_stand_in_site_runs_a_gpu_test_unchanged_in_a_process_of_its_own():
    """What --cpu's test steps rely on: with the variable and tests/stand_in_site on PYTHONPATH, a
    fresh pytest sees a "GPU" (the strict stand-in) and runs a gpu test on it; without, it skips."""
    argv = [sys.executable, "-m", "pytest", "-m", "gpu", "-p", "no:cacheprovider", "-q", "-rs",
            "tests/test_view_writes.py"]
    site = {"PYTHONPATH": str(ROOT / "tests" / "stand_in_site")}
    ran = run_command(argv, timeout=120, env={**site, "PYCOLL_TEST_STRICT_GPU": "1"})
    assert ran.returncode == 0 and "1 passed" in ran.stdout, ran.stdout + ran.stderr
    skipped = run_command(argv, timeout=120, env=site)
    assert "1 skipped" in skipped.stdout and "no CUDA GPU visible" in skipped.stdout, skipped.stdout


def test_parts_and_steps_are_chosen_in_the_run_order_with_their_limits():
    chosen = plan("--part", "dp,kernels", "--part", "tests-nccl", "--limit", "kernels=7")
    assert [(step, limit) for _, step, limit, _ in chosen] == [
        ("tests-nccl", 300), ("kernels", 7), ("dp-1rank", 120), ("dp-2ranks", 240), ("sharding-2ranks", 120)]


def test_the_rank_tests_run_as_pytest_xdist_workers_where_xdist_is_installed():
    """--jobs N gives the two rank-starting test steps N xdist workers (default 4, or the cores if
    fewer); without xdist the default is one pytest process and --jobs 2 is refused, naming what is
    missing."""
    def workers(*args):
        return {step: re.findall(r" -n (\d+) ", command) for _, step, _, command in plan(*args)
                if step.startswith("tests-")}
    if importlib.util.find_spec("xdist") is None:
        assert workers("--part", "tests") == {"tests-inprocess": [], "tests-nccl": [], "tests-ranks": []}
        result = run_gpu("--dry-run", "--jobs", "2", timeout=30)
        assert result.returncode == 2 and "--jobs 2 needs pytest-xdist" in result.stderr
    else:
        n = str(min(4, len(os.sched_getaffinity(0))))  # nproc's count
        assert workers("--part", "tests") == {"tests-inprocess": [], "tests-nccl": [n], "tests-ranks": [n]}
    assert workers("--part", "tests", "--jobs", "1") == {"tests-inprocess": [], "tests-nccl": [], "tests-ranks": []}


@pytest.mark.parametrize("args, message", [
    (["--part", "nope"], "--part nope: not a part"),
    (["--part"], "--part needs a value"),
    (["--limit", "kernels=soon"], "--limit kernels=soon: give STEP=SECONDS"),
    (["--limit", "nope=5"], "--limit nope=5: no step is called nope"),
    (["--budget", "0"], "--budget 0: give a number of seconds"),
    (["--jobs", "none"], "--jobs none: give a number of pytest workers"),
    (["--frobnicate"], "unknown option --frobnicate"),
    (["one", "two"], "one OUTDIR only"),
    (["--cpu", "--stand-in", "true"], "give --cpu or --stand-in, not both"),
])
def test_bad_arguments_exit_2_naming_them(args, message):
    result = run_gpu("--dry-run", *args, timeout=30)
    assert result.returncode == 2
    assert message in result.stderr, result.stderr


@pytest.fixture
def stand_in(tmp_path):
    path = tmp_path / "stand_in.sh"
    path.write_text(STAND_IN)
    return f"bash {path}"


def test_a_run_goes_through_every_step_whatever_fails_and_packs_the_folder(tmp_path, stand_in):
    out, copies = tmp_path / "run", tmp_path / "copies"
    try:
        result = run_gpu("--stand-in", stand_in, "--limit", "dp-1rank=1", "--copy-to", copies, out)
        leftover = int((out / "leftover.pid").read_text())
    finally:
        pid_file = out / "leftover.pid"
        if pid_file.exists():  # the runner should have killed it; never leave it running
            try:
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert result.returncode == 1, result.stdout + result.stderr
    assert_gone([leftover])
    rows = summary_rows(out / "summary.txt")
    assert list(rows) == STEPS
    assert {step: row[0] for step, row in rows.items()} == {
        **{step: "0" for step in STEPS}, "kernels": "3", "dp-1rank": "124"}
    assert rows["dp-1rank"][2:] == ("1", "timed out")
    assert rows["tests-inprocess"][3] == "2 passed, 1 failed, 1 errors, 1 skipped"
    assert rows["peers-1rank"][3] == f"killed 1 leftover process(es): {leftover}"
    for step in STEPS:
        assert f"stand-in for {step}" in (out / f"{step}.log").read_text()
        assert re.search(rf"^\[\d\d:\d\d:\d\d\] >>> {step} ", result.stdout, re.M)
        assert re.search(rf"^\[\d\d:\d\d:\d\d\] <<< {step}: exit {rows[step][0]} after ", result.stdout, re.M)
    with tarfile.open(tmp_path / "run.tar.gz") as tar:
        packed = set(tar.getnames())
    assert {"run/summary.txt", *(f"run/{s}.log" for s in STEPS), *(f"run/{s}.json" for s in STEPS)} <= packed
    assert sorted(p.name for p in copies.iterdir()) == ["run.tar.gz", "summary.txt"]
    assert (copies / "summary.txt").read_text() == (out / "summary.txt").read_text()


def test_the_budget_shortens_the_last_steps_and_skips_what_cannot_start(tmp_path, stand_in):
    """--budget 17: kernels may take 12 s of it (what is left, less 5 s); dp-2ranks, sleeping
    3 s here, leaves under 15 s, so failures is not started."""
    out = tmp_path / "run"
    result = run_gpu("--stand-in", stand_in, "--budget", "17", "--part", "failures,dp-2ranks,kernels",
                     out, env={"STAND_IN_SLEEP": "3"})
    assert result.returncode == 1, result.stdout + result.stderr
    rows = summary_rows(out / "summary.txt")
    assert list(rows) == ["kernels", "dp-2ranks", "failures"]
    assert rows["kernels"][0] == "3" and int(rows["kernels"][2]) <= 12
    assert rows["dp-2ranks"][0] == "0"
    assert rows["failures"][0] == "-" and rows["failures"][3] == "not run: budget spent"


def test_the_build_and_host_cost_steps_run_here_in_cpu_mode(tmp_path):
    out = tmp_path / "run"
    result = run_gpu("--cpu", "--part", "build,host-cost-1rank", out)
    assert result.returncode == 0, result.stdout + result.stderr
    assert {step: row[0] for step, row in summary_rows(out / "summary.txt").items()} == {
        "build": "0", "environment": "0", "host-cost-1rank": "0"}
    host_cost = json.loads((out / "host-cost-1rank.json").read_text())
    assert host_cost["stand_in"] is True
    assert all(us > 0 for us in host_cost["per_call_us"].values())
    assert "pycoll all_reduce" in host_cost["per_call_us"]
    assert "cProfile of pycoll all_reduce" in (out / "host-cost-1rank.log").read_text()
    info = json.loads((out / "info.json").read_text())
    assert {"cuda_kernels", "nccl", "mpi", "gpus"} <= info.keys()
    assert "python 3." in (out / "environment.log").read_text()
