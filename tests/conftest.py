"""Shared helpers: starting real MPI ranks with a wall-clock bound, and the gpu marker's skip."""
import compileall
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest_plugins = ["nccl_fixtures"]  # the CuPy stand-in and nccl engine fixtures of test_nccl, test_watchdog
RANKS_DIR = Path(__file__).parent / "ranks"
# The seed's examples live beside the checkout (../shared/seeds/examples); PYCOLL_SEED_EXAMPLES
# points elsewhere. Their tests skip, saying so, where neither is found.
SEEDS = Path(os.environ.get("PYCOLL_SEED_EXAMPLES")
             or Path(__file__).resolve().parent.parent.parent / "shared" / "seeds" / "examples")
SEEDS_MISSING = (f"the seed examples are not at {SEEDS}: run from a checkout beside ../shared, or set "
                 f"PYCOLL_SEED_EXAMPLES to their folder")
SEED_EXAMPLES = [  # the seed's examples translated to pycoll, and what each prints per rank
    ("ex1_spawn_dataparallel.py", "EX1 OK"), ("ex2_pylayer_no_sync.py", "EX2 OK"),
    ("ex3_no_sync.py", "EX3 OK"), ("ex4_state_dict.py", "EX4 OK"),
]
# The CPU tests run on the CPU even on a GPU machine (where pycoll's default device is the GPU);
# GPU tests ask for the GPU through their own environment.
os.environ["PYCOLL_DEVICE"] = "cpu"
# A collective that waits longer than this inside a test job fails it with CollectiveError.
RANK_TIMEOUT_S = "60"


def pytest_sessionstart(session):
    """Compile pycoll's modules to bytecode once, before any test starts a process.

    The suite starts about a thousand Python processes (launchers, ranks), and each imports
    pycoll's 300 modules. Where PYTHONDONTWRITEBYTECODE is set (as on the CI machine) and pycoll is
    installed editable (as the README's command does), nothing ever writes their bytecode, so every
    process compiled them all again: a launch of 2 ranks took 3.1 s instead of 1.6 s. Python still
    reads bytecode it finds, and compileall writes it whatever that variable says; the files go
    where Python's own would (``__pycache__``, ignored by git) and are redone when a source changes.
    """
    compileall.compile_dir(Path(__file__).resolve().parent.parent / "pycoll", quiet=1)


def _gpu_visible() -> bool:
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    if _gpu_visible():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU visible (CuPy with a device is needed)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def run_command(argv, timeout=120, env=None, cwd=None, input=None):
    """Run ``argv`` with a hard wall-clock bound; return the completed process. ``input``: text
    for its standard input (else it inherits pytest's).

    On timeout the whole process group (launcher, mpiexec, ranks) is killed and the test fails.
    A variable that ``env`` maps to None is left unset.
    """
    full_env = {**os.environ, "PYCOLL_TIMEOUT": RANK_TIMEOUT_S, **(env or {})}
    full_env = {k: v for k, v in full_env.items() if v is not None}
    proc = subprocess.Popen([str(a) for a in argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=None if input is None else subprocess.PIPE,
                            text=True, env=full_env, cwd=cwd, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        pytest.fail(f"{' '.join(map(str, argv))} ran past {timeout} s\n{stdout}{stderr}")
    except BaseException:  # pytest-timeout, Ctrl-C: no rank may outlive the test
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def run_under_mpiexec(nprocs, args, **run_options):
    """Run ``python args...`` on ``nprocs`` ranks under plain ``mpiexec`` (no pycoll launcher), as
    :func:`run_command` does; then remove what a failed job left in /dev/shm and /tmp, which MPI
    itself leaves there (only pycoll's launchers tidy it: ``job_leftovers``)."""
    from pycoll.distributed import job_leftovers
    from pycoll.distributed._mpiexec import rank_command

    before = job_leftovers.snapshot()
    try:
        return run_command(rank_command(nprocs, args), **run_options)
    finally:  # the ranks mpiexec stopped may hold theirs a moment longer (their pids are not known here)
        for pause in (0.0, 0.5, 1.5):
            time.sleep(pause)
            job_leftovers.remove_left(before)


def finished(proc, timeout=90):
    """(exit status, stdout + stderr) of ``proc``, a process started in a session of its own
    with text pipes, waited for at most ``timeout`` s; its whole process group is killed if it
    is still running then (and the test fails with the timeout)."""
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, out + err


def run_python(args, timeout=120, env=None, cwd=None, input=None):
    """Run ``python ARGS`` (a launcher, a script) with a hard wall-clock bound."""
    return run_command([sys.executable, *args], timeout=timeout, env=env, cwd=cwd, input=input)


def launch(nprocs, script, *args, timeout=120, env=None, cwd=None):
    """Start ``script`` (a file in tests/ranks unless a path is given) on ``nprocs`` ranks."""
    path = Path(script) if os.sep in str(script) else RANKS_DIR / script
    return run_python(["-m", "pycoll.launch", "--nproc_per_node", str(nprocs), str(path), *args],
                      timeout=timeout, env=env, cwd=cwd)


def launch_source(tmp_path, source, nprocs=2, *args, timeout=120, env=None):
    """Write the program ``source`` into ``tmp_path`` and run it on ``nprocs`` ranks (``launch``)."""
    script = tmp_path / "program.py"
    script.write_text(source)
    return launch(nprocs, str(script), *args, timeout=timeout, env=env)


def free_port(host="127.0.0.1"):
    """A TCP port nobody listens on now."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def on_free_port(start, tries=5):
    """``start(port)`` at a port nobody listens on; again at another where something took the port
    between the choice and the bind (the kernel may hand it, an ephemeral port, to another socket
    meanwhile: the other xdist worker's connections, say)."""
    for attempt in range(tries):
        try:
            return start(free_port())
        except Exception as exc:  # the store's CollectiveError, or an OSError
            if "Address already in use" not in str(exc) or attempt == tries - 1:
                raise


def run_children(code, nprocs, port, extra_env=None, timeout=60):
    """Start ``nprocs`` Python processes running ``code`` with RANK/PORT set; return them finished."""
    procs = []
    for rank in range(nprocs):
        env = {"PYTHONPATH": str(Path(__file__).resolve().parent.parent), "RANK": str(rank), "PORT": str(port), **(extra_env or {})}
        procs.append(subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=env,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    results = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=timeout)
            results.append((p.returncode, out, err))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    return results


def started_pids(output):
    """The process ids the rank workers announce with ``pid=N``."""
    return [int(pid) for pid in re.findall(r"\bpid=(\d+)", output)]


def _running(pid):
    """Whether ``pid`` is a live process (an exited one not yet reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def assert_gone(pids, within=5.0):
    """Every one of ``pids`` has ended, or does within ``within`` seconds: no orphan ranks."""
    deadline = time.monotonic() + within
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        time.sleep(0.05)
        alive = [pid for pid in alive if _running(pid)]
    assert not alive, f"rank processes {alive} outlived their job"


def assert_ok(result, expect_lines=None):
    """The job exited 0 (else show its output) and ``expect_lines`` ranks reported "OK rank=".

    Counted as occurrences, not lines: the ranks' output may interleave within a line.
    """
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"exit status {result.returncode}\n{output}"
    if expect_lines is not None:
        assert result.stdout.count("OK rank=") == expect_lines, output


def run_seed_example(example, tmp_path, env=None, timeout=120):
    """Run a seed example as its header says, in a scratch folder: ex1 as `python ex1...py`
    (it spawns its ranks), the others on 2 ranks through the launcher."""
    script = tmp_path / example
    shutil.copy(SEEDS / example, script)
    if example.startswith("ex1"):
        return run_python([str(script)], cwd=tmp_path, env=env, timeout=timeout)
    return launch(2, str(script), cwd=tmp_path, env=env, timeout=timeout)


@pytest.fixture
def fresh_fleet():
    """After the test, fleet's state, the layers' default model-parallel group and the process
    group are gone, so the next test starts as a fresh script (the fleet tests use it for all)."""
    yield
    import pycoll.distributed as dist
    from pycoll.distributed.fleet import collective_mode
    from pycoll.parallel.mp_ops import set_model_parallel_group

    collective_mode._state.clear()
    set_model_parallel_group(None)
    dist.destroy_process_group()
