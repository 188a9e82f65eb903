"""pycoll-bench: flags, the JSON/CSV output, the progress line, the check catching a wrong result,
and every op self-launching on 2 CPU ranks (each run bounded in time). The collectives' registry,
factors and layouts are in test_bench_collectives.py, the timing loop in test_bench_timing.py.

--plot is tested only where matplotlib is importable; elsewhere its clear error is tested.
The nccl mode's choice and its error are tested here; its run is a ``gpu`` test.
"""
import csv
import io
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import RANK_TIMEOUT_S, launch, run_python
from pycoll.backends.reduce_op import ReduceOp
from pycoll import device
from pycoll.bench import cli, plot, report
from pycoll.bench.collectives import OPS, busbw_factor
from pycoll.bench.config import auto_iters, parse_size, sweep

# a short sweep: 8 B, 64 B, 512 B, 4 KiB; few calls
SMALL = ["-b", "8", "-e", "4K", "-f", "8", "-n", "3", "-w", "1"]
SMALL_SIZES = [8, 64, 512, 4096]
TIMEOUT = 60


def bench(*args, timeout=TIMEOUT, env=None):
    return run_python(["-m", "pycoll.bench", *map(str, args)], timeout=timeout, env=env)


def table_rows(stdout):
    return [line.split() for line in stdout.splitlines() if line.strip() and not line.startswith("#")]


# -- flags --------------------------------------------------------------------------------

@pytest.mark.parametrize("text, value", [
    ("8", 8), ("0", 0), ("1K", 1024), ("64k", 65536), ("32M", 32 << 20), ("1G", 1 << 30),
    ("1.5K", 1536), (" 2 M ", 2 << 20),
])
def test_sizes_take_binary_suffixes(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "K", "1X", "-8", "1.3", "8 KB", "0x10"])
def test_bad_sizes_are_refused(text):
    with pytest.raises(ValueError, match="size|whole number"):
        parse_size(text)


def test_factor_multiplies_and_step_adds():
    assert sweep(8, 64, 2, None) == [8, 16, 32, 64]
    assert sweep(8, 100, 4, None) == [8, 32]
    assert sweep(10, 40, None, 10) == [10, 20, 30, 40]
    assert sweep(0, 2, None, 1) == [0, 1, 2]
    assert sweep(5, 5, 2, None) == [5]


@pytest.mark.parametrize("args, flag", [
    ((64, 8, 2, None), "-b/--minbytes 64"),
    ((0, 8, 2, None), "-f/--stepfactor"),
    ((8, 64, None, 0), "-i/--stepbytes"),
    ((1, 1 << 30, None, 1), "more than"),
])
def test_bad_sweeps_name_the_flags(args, flag):
    with pytest.raises(ValueError, match=flag.replace("/", ".")):
        sweep(*args)


def test_defaults_are_a_quick_sweep_over_two_cpu_ranks():
    _, cfg = cli.parse(["all_reduce"])
    assert cfg.sizes[0] == 8 and cfg.sizes[-1] == 32 << 20 and len(cfg.sizes) == 23
    assert cfg.backend == "cpu" and cfg.nprocs is None and cli.DEFAULT_NPROCS == 2
    assert cfg.check and cfg.iters is None and cfg.average == 1
    assert cfg.dtype == np.float32 and cfg.reduce_op == ReduceOp.SUM and cfg.root == 0
    assert [auto_iters(8), auto_iters(1 << 20), auto_iters(32 << 20)] == [1000, 256, 8]


def test_nccl_style_flags_are_parsed():
    _, cfg = cli.parse(["reduce", "-b", "1K", "-e", "1M", "-i", "64K", "-n", "7", "-w", "0",
                        "-c", "0", "-d", "double", "-o", "max", "-r", "1", "-a", "3",
                        "--compare", "raw", "--nprocs", "3"])
    assert cfg.sizes == list(range(1024, (1 << 20) + 1, 64 << 10)) and cfg.step == "65536(bytes)"
    assert (cfg.iters, cfg.warmup, cfg.check, cfg.average) == (7, 0, False, 3)
    assert cfg.dtype == np.float64 and cfg.reduce_op == ReduceOp.MAX and cfg.root == 1
    assert cfg.compare and cfg.nprocs == 3
    _, cfg = cli.parse(["all", "-f", "4"])
    assert cfg.ops == list(OPS) and cfg.step == "4(factor)"


@pytest.mark.parametrize("argv, message", [
    (["all_reduce", "-b", "1X"], "argument -b/--minbytes: '1X' is not a size"),
    (["all_reduce", "-f", "2", "-i", "8"], "argument -i/--stepbytes: not allowed with argument -f"),
    (["all_reduce", "-f", "1"], "argument -f/--stepfactor: 1 is too small"),
    (["all_reduce", "-b", "64", "-e", "8"], "-b/--minbytes 64 is larger than -e/--maxbytes 8"),
    (["all_reduce", "-n", "0"], "argument -n/--iters"),
    (["all_reduce", "-c", "2"], "argument -c/--check"),
    (["all_reduce", "-d", "bfloat16"], "argument -d/--datatype: invalid choice"),
    (["all_reduce", "-a", "4"], "argument -a/--average"),
    (["all_gatherer"], "argument OP: invalid choice"),
    (["all_reduce", "--bogus"], "unrecognized arguments: --bogus"),
    ([], "the following arguments are required: OP"),
    (["--plot-from", "a.json"], "argument --plot-from: give the figure"),
])
def test_bad_flags_exit_2_naming_the_flag(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.parse(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("gpus, backend, nprocs", [(0, "cpu", 2), (2, "nccl", 2), (4, "nccl", 4)])
def test_the_default_backend_follows_the_visible_gpus(gpus, backend, nprocs, monkeypatch):
    monkeypatch.delenv("PYCOLL_DEVICE", raising=False)
    monkeypatch.setattr(device, "gpu_count", lambda: gpus)
    assert cli.default_backend() == backend
    assert cli.default_nprocs(backend) == nprocs
    _, cfg = cli.parse(["all_reduce"])
    assert cfg.backend == backend and cfg.nprocs is None
    monkeypatch.setenv("PYCOLL_DEVICE", "cpu")  # as the CPU test suite runs on a GPU machine
    assert cli.default_backend() == "cpu"


def test_nccl_without_a_usable_gpu_is_a_clear_error(monkeypatch, capsys):
    monkeypatch.setattr(device, "gpu_count", lambda: 0)
    with pytest.raises(SystemExit) as exc:
        cli.parse(["all_reduce", "--backend", "nccl"])
    assert exc.value.code == 2
    assert "argument --backend: nccl needs a usable GPU" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["broadcast", "-r", "2"], "-r/--root 2: the job has 2 ranks"),
    (["sendrecv", "--nprocs", "1"], "sendrecv needs at least 2 ranks"),
])
def test_impossible_runs_are_refused_before_starting_ranks(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err


# -- runs on 2 CPU ranks ----------------------------------------------------------------------

# each op with other flags, so that dtypes, reductions, roots and -a are exercised too
OP_FLAGS = {
    "all_reduce": ["-o", "max", "-a", "3", "-d", "double"],
    "reduce": ["-r", "1", "-o", "prod", "-d", "int64"],
    "broadcast": ["-r", "1", "-d", "half"],
    "all_gather": ["-d", "uint8"],
    "reduce_scatter": ["-o", "avg", "-a", "2"],
    "scatter": ["-r", "1", "-a", "0"],
    "alltoall": ["-d", "int32"],
    "sendrecv": [],
}


@pytest.mark.parametrize("op", list(OP_FLAGS))
def test_each_op_self_launches_on_two_cpu_ranks_and_compares_with_raw(op, tmp_path):
    path = tmp_path / "result.json"
    result = bench(op, *SMALL, *OP_FLAGS[op], "--compare", "raw", "--json", path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 ranks" in result.stdout and "# Out of bounds values : 0 OK" in result.stdout
    header = next(line for line in result.stdout.splitlines() if "#wrong" in line)
    assert header.split().count("ratio") == 2
    rows = table_rows(result.stdout)
    assert [int(r[0]) for r in rows] == SMALL_SIZES and all(len(r) == 5 + 2 * 5 for r in rows)
    data = json.loads(path.read_text())
    assert (data["op"], data["nranks"], data["errors"], data["raw_errors"]) == (op, 2, 0, 0)
    for row in data["rows"]:
        entries = [row["oop"]] if op == "sendrecv" else [row["oop"], row["ip"]]
        assert (row["ip"] is None) == (op == "sendrecv")
        for entry in entries:
            assert entry["wrong"] == 0 and entry["raw_wrong"] == 0
            assert entry["ratio"] == pytest.approx(entry["time_us"] / entry["raw_time_us"])


def test_json_schema_for_all_ops(tmp_path):
    path = tmp_path / "all.json"
    result = bench("all", *SMALL, "--json", path)
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(path.read_text())
    assert isinstance(data, list) and [r["op"] for r in data] == list(OPS)
    entry_types = {"time_us": float, "algbw": float, "busbw": float, "wrong": int}
    for res in data:
        assert {"op", "backend", "nranks", "devices", "versions", "avg_busbw", "rows",
                "errors"} <= set(res)
        assert res["backend"] == "cpu" and res["nranks"] == 2 and isinstance(res["avg_busbw"], float)
        assert [d["rank"] for d in res["devices"]] == [0, 1]
        assert {"pycoll", "numpy", "mpi4py", "mpi"} <= set(res["versions"])
        assert [row["size"] for row in res["rows"]] == SMALL_SIZES
        for row in res["rows"]:
            assert set(row) == {"size", "count", "type", "redop", "root", "iters", "oop", "ip"}
            assert row["type"] == "float" and row["iters"] == 3
            assert row["redop"] == ("sum" if OPS[res["op"]].reduces else "none")
            assert row["root"] == (0 if OPS[res["op"]].rooted else -1)
            for entry in (row["oop"], row["ip"]):
                if entry is None:
                    assert res["op"] == "sendrecv"
                    continue
                assert set(entry) == set(entry_types)
                for key, kind in entry_types.items():
                    assert isinstance(entry[key], kind), (key, entry)
                factor = busbw_factor(res["op"], 2)
                assert entry["busbw"] == pytest.approx(entry["algbw"] * factor)
                assert entry["algbw"] == pytest.approx(row["size"] / entry["time_us"] / 1e3)


def test_csv_has_one_line_per_size_with_both_columns(tmp_path):
    path = tmp_path / "r.csv"
    result = bench("reduce", *SMALL, "-c", "0", "--csv", path)
    assert result.returncode == 0, result.stdout + result.stderr
    with open(path, newline="") as f:
        lines = list(csv.DictReader(f))
    assert [int(line["size"]) for line in lines] == SMALL_SIZES
    for line in lines:
        assert line["op"] == "reduce" and line["redop"] == "sum" and line["root"] == "0"
        assert float(line["oop_time_us"]) > 0 and float(line["ip_busbw"]) >= 0
        assert line["oop_wrong"] == "" and line["ip_wrong"] == ""  # -c 0: not checked
    assert "N/A" in table_rows(result.stdout)[0]


def test_a_wrong_result_is_counted_and_fails_the_run(tmp_path):
    path = tmp_path / "bad.json"
    result = launch(2, "bench_corrupt.py", "all_reduce", *SMALL, "--json", str(path),
                    timeout=TIMEOUT)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "# Out of bounds values : 8 FAILED" in result.stdout  # 4 sizes x 2 columns
    data = json.loads(path.read_text())
    assert data["errors"] == 8
    assert all(row["oop"]["wrong"] == 1 and row["ip"]["wrong"] == 1 for row in data["rows"])


def test_a_dtype_the_engine_cannot_reduce_is_refused_on_the_ranks():
    result = bench("all_reduce", *SMALL, "-d", "half")
    assert result.returncode == 2
    assert "error: -d/--datatype half with -o/--op sum" in result.stderr


def test_one_rank_runs_in_this_process_and_shows_progress():
    result = bench("all_gather", *SMALL, "--nprocs", "1", "--progress")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "backend cpu (MPI), 1 rank\n" in result.stdout
    assert "pycoll-bench all_gather: 4096 B (4/4)" in result.stderr  # behind a carriage return


def test_the_progress_line_is_rewritten_per_size_and_cleared():
    out = io.StringIO()
    progress = report.Progress(True, out)
    progress.size("alltoall", 4096, 1, 4, op_index=6, ops=8)
    assert re.fullmatch(r"\rpycoll-bench alltoall: 4096 B \(2/4\), op 7/8, \d+ s", out.getvalue())
    width = len(out.getvalue()) - 1
    progress.clear()
    assert out.getvalue().endswith("\r" + " " * width + "\r")
    silent = io.StringIO()
    report.Progress(False, silent).size("alltoall", 8, 0, 4)
    assert silent.getvalue() == ""


def bench_on_a_terminal(*args, timeout=TIMEOUT):
    """``python -m pycoll.bench ARGS`` with stderr on a pseudo-terminal (stdout a pipe): the
    exit status, stdout and what the terminal received; killed past ``timeout`` seconds."""
    master, terminal = pty.openpty()
    env = {**os.environ, "PYCOLL_TIMEOUT": RANK_TIMEOUT_S}
    proc = subprocess.Popen([sys.executable, "-m", "pycoll.bench", *map(str, args)],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=terminal,
                            env=env, start_new_session=True)
    os.close(terminal)
    received, deadline = b"", time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            if select.select([master], [], [], 0.1)[0]:
                try:
                    data = os.read(master, 4096)
                except OSError:  # EIO: every process holding the terminal has exited
                    data = b""
                if not data:
                    break
                received += data
            elif proc.poll() is not None:
                break
        else:
            os.killpg(proc.pid, signal.SIGKILL)
            pytest.fail(f"pycoll-bench ran past {timeout} s on a terminal: {received!r}")
        stdout = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))[0]
    finally:
        os.close(master)
    return proc.returncode, stdout.decode(), received.decode()


def test_progress_shows_on_a_terminal_one_line_per_size_and_nowhere_else():
    status, stdout, terminal = bench_on_a_terminal("all_reduce", *SMALL)
    assert status == 0, stdout + terminal
    shown = re.findall(r"\rpycoll-bench all_reduce: (\d+) B \((\d)/4\), \d+ s", terminal)
    assert shown == [(str(size), str(i + 1)) for i, size in enumerate(SMALL_SIZES)]
    assert re.search(r"\(4/4\), \d+ s\r +\r$", terminal)  # cleared at the end
    assert len(table_rows(stdout)) == len(SMALL_SIZES)
    piped = bench("all_reduce", *SMALL)
    assert piped.returncode == 0 and "pycoll-bench all_reduce:" not in piped.stderr


def test_under_a_launcher_it_runs_on_the_jobs_ranks():
    result = run_python(["-m", "pycoll.launch", "--nproc_per_node", "3", "-m", "pycoll.bench",
                         "scatter", *SMALL, "-r", "2"], timeout=TIMEOUT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 ranks" in result.stdout and "# Out of bounds values : 0 OK" in result.stdout
    mismatch = run_python(["-m", "pycoll.launch", "--nproc_per_node", "2", "-m", "pycoll.bench",
                           "scatter", *SMALL, "--nprocs", "3"], timeout=TIMEOUT)
    assert mismatch.returncode == 2 and "--nprocs 3: this job already has 2 ranks" in mismatch.stderr


# -- plots ----------------------------------------------------------------------------------

def _result_file(path, op, backend):
    rows = [{"size": s, "count": s // 4, "type": "float", "redop": "none", "root": -1, "iters": 3,
             "oop": {"time_us": 10.0 + s / 1e3, "algbw": s / (10e3 + s), "busbw": s / (10e3 + s),
                     "wrong": 0},
             "ip": None} for s in SMALL_SIZES]
    path.write_text(json.dumps({"op": op, "backend": backend, "nranks": 2, "rows": rows}))
    return str(path)


needs_matplotlib = pytest.mark.skipif(not plot.available(), reason="matplotlib is not installed")


@needs_matplotlib
def test_plot_from_several_json_files(tmp_path):
    a = _result_file(tmp_path / "a.json", "broadcast", "cpu")
    b = _result_file(tmp_path / "b.json", "broadcast", "nccl")
    png = tmp_path / "both.png"
    assert cli.main(["--plot-from", a, b, "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@needs_matplotlib
def test_plot_after_a_run_compared_with_raw_draws_both(tmp_path):
    png, path = tmp_path / "run.png", tmp_path / "run.json"
    result = bench("all_reduce", *SMALL, "--compare", "raw", "--plot", png, "--json", path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    labels = [curve.label for curve in plot.curves(plot.load([str(path)]))]
    assert labels == ["run: all_reduce (cpu, 2 ranks) out-of-place",
                      "run: all_reduce (cpu, 2 ranks) out-of-place, raw MPI",
                      "run: all_reduce (cpu, 2 ranks) in-place",
                      "run: all_reduce (cpu, 2 ranks) in-place, raw MPI"]


def test_the_raw_curve_has_the_raw_calls_times_and_bandwidth():
    rows = [{"size": s, "oop": {"time_us": 10.0, "algbw": s / 1e4, "busbw": s / 2e4,
                                "raw_time_us": 5.0},
             "ip": None} for s in (0, 64, 4096)]
    result = {"op": "reduce", "backend": "nccl", "nranks": 2, "rows": rows}
    ours, raw = plot.curves([(None, result)])
    assert ours.sizes == raw.sizes == [64, 4096]  # a log axis has no size 0
    assert raw.label == "reduce (nccl, 2 ranks) out-of-place, raw NCCL"
    assert raw.time_us == [5.0, 5.0] and raw.busbw == [64 / 1e4, 4096 / 1e4]
    assert ours.busbw == [64 / 2e4, 4096 / 2e4] and raw.colour != ours.colour
    for row in rows:
        del row["oop"]["raw_time_us"]  # a run without --compare raw
    assert [c.label for c in plot.curves([("a", result)])] == [
        "a: reduce (nccl, 2 ranks) out-of-place"]


def test_plot_without_matplotlib_is_a_clear_error(capsys, monkeypatch):
    monkeypatch.setattr(plot, "available", lambda: False)  # as on a machine without matplotlib
    with pytest.raises(SystemExit) as exc:
        cli.parse(["all_reduce", "--plot", "x.png"])
    assert exc.value.code == 2 and "pip install 'pycoll[plot]'" in capsys.readouterr().err


def test_plot_from_refuses_files_that_are_not_results(tmp_path, capsys):
    if not plot.available():
        pytest.skip("matplotlib is not installed")
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert cli.main(["--plot-from", str(bad), "--plot", str(tmp_path / "x.png")]) == 2
    assert "not a pycoll-bench JSON result" in capsys.readouterr().err


# -- on GPUs --------------------------------------------------------------------------------

@pytest.mark.gpu
def test_nccl_all_reduce_on_two_ranks_is_right():
    """Two NCCL ranks (sharing one GPU where there is one: each gets its own NCCL_HOSTID)."""
    env = {"NCCL_SOCKET_IFNAME": "lo", "PYCOLL_DEVICE": "gpu"}  # the default backend: nccl
    result = bench("all_reduce", "-b", "8", "-e", "1M", "--nprocs", "2", "--compare", "raw",
                   timeout=180, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "backend nccl (NCCL " in result.stdout and "device gpu:" in result.stdout
    rows = table_rows(result.stdout)
    assert len(rows) == 18 and all(r[8] == "0" and r[13] == "0" for r in rows)  # the #wrong columns
    assert "# Out of bounds values : 0 OK" in result.stdout
