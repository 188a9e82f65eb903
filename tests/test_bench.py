"""pycoll-bench: flags, -d all / -o all and bfloat16, the JSON/CSV output, the progress line,
the check catching a wrong result, and every op self-launching on 2 CPU ranks (each run bounded
in time). The collectives' registry, factors and layouts are in test_bench_collectives.py, the
timing loop in test_bench_timing.py, the figures in test_bench_plot.py.

bfloat16 runs only where ml_dtypes is installed (NumPy knows the type through it); elsewhere
its clear error is tested. The nccl mode's choice and its error are tested here; its run is a
``gpu`` test.
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

from conftest import RANK_TIMEOUT_S, launch, run_command, run_python
from pycoll.backends.reduce_op import ReduceOp
from pycoll import device
from pycoll.bench import cli, config, report
from pycoll.bench.collectives import OPS, busbw_factor
from pycoll.bench.config import Case, auto_iters, parse_size, sweep

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
    assert cfg.dtypes == [np.float32] and cfg.redops == ["sum"] and cfg.root == 0
    assert [auto_iters(8), auto_iters(1 << 20), auto_iters(32 << 20)] == [1000, 256, 8]


def test_nccl_style_flags_are_parsed():
    _, cfg = cli.parse(["reduce", "-b", "1K", "-e", "1M", "-i", "64K", "-n", "7", "-w", "0",
                        "-c", "0", "-d", "double", "-o", "max", "-r", "1", "-a", "3",
                        "--compare", "raw", "--nprocs", "3"])
    assert cfg.sizes == list(range(1024, (1 << 20) + 1, 64 << 10)) and cfg.step == "65536(bytes)"
    assert (cfg.iters, cfg.warmup, cfg.check, cfg.average) == (7, 0, False, 3)
    assert cfg.dtypes == [np.float64] and cfg.redops == ["max"] and cfg.root == 1
    assert cfg.cases(reduces=True) == [Case(np.dtype(np.float64), "max")]
    assert cfg.cases(reduces=True)[0].reduce_op == ReduceOp.MAX
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
    (["all_reduce", "-d", "bfloat17"], "argument -d/--datatype: invalid choice"),
    (["all_reduce", "-o", "mean"], "argument -o/--op: invalid choice"),
    (["all_reduce", "-a", "4"], "argument -a/--average"),
    (["all_gatherer"], "argument OP: invalid choice"),
    (["all_reduce", "--bogus"], "unrecognized arguments: --bogus"),
    ([], "give OP, the collective to measure (all_reduce, "),
    (["--plot-from", "a.json"], "argument --plot-from: give the figure"),
    (["all_reduce", "--json", "/nonexistent/r.json"], "argument --json: folder /nonexistent does not exist"),
    (["all_reduce", "--csv", "/"], "argument --csv: / is a folder"),
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


# -- -d all, -o all, bfloat16 ---------------------------------------------------------------

HAS_ML_DTYPES = config.has_ml_dtypes()
needs_ml_dtypes = pytest.mark.skipif(not HAS_ML_DTYPES, reason="bfloat16 needs ml_dtypes")
ALL_TYPES = ["int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double"] + (
    ["bfloat16"] if HAS_ML_DTYPES else [])
ALL_REDOPS = ["sum", "prod", "max", "min", "avg"]


def test_all_types_and_reductions_are_one_case_each_types_first():
    _, cfg = cli.parse(["all_reduce", "-d", "all", "-o", "all"])
    assert [config.type_name(d) for d in cfg.dtypes] == ALL_TYPES and cfg.redops == ALL_REDOPS
    cases = cfg.cases(reduces=True)
    assert [str(c) for c in cases[:6]] == ["int8 sum", "int8 prod", "int8 max", "int8 min",
                                           "int8 avg", "uint8 sum"]
    assert len(cases) == len(ALL_TYPES) * len(ALL_REDOPS)
    # data movement runs each type once, whatever -o says
    assert [str(c) for c in cfg.cases(reduces=False)] == ALL_TYPES
    _, cfg = cli.parse(["broadcast", "-o", "all"])
    assert [str(c) for c in cfg.cases(reduces=False)] == ["float"]


def _refuse_half_and_integer_avg(dtype, op):
    """A stand-in engine: no float16 at all, no average of integers."""
    if dtype == np.float16:
        return "no float16 here"
    return "no integer average" if op == ReduceOp.AVG and dtype.kind in "iu" else None


def test_cases_the_engine_cannot_reduce_are_left_out_and_refused_only_when_none_remain():
    _, cfg = cli.parse(["all", "-d", "all", "-o", "all"])
    run, left_out = cfg.split(True, _refuse_half_and_integer_avg)
    assert [(str(c), why) for c, why in left_out][:2] == [("int8 avg", "no integer average"),
                                                         ("uint8 avg", "no integer average")]
    assert [str(c) for c, _ in left_out][6:] == [f"half {r}" for r in ALL_REDOPS]
    assert len(run) + len(left_out) == len(cfg.cases(True)) and "float avg" in map(str, run)
    assert cfg.split(False, _refuse_half_and_integer_avg) == (cfg.cases(False), [])
    assert cfg.problems(2, _refuse_half_and_integer_avg) == []
    assert report.left_out_line("all_reduce", "cpu", left_out) == [
        "# all_reduce: left out, as the cpu backend cannot reduce them: int8 avg, uint8 avg, "
        "int32 avg, uint32 avg, int64 avg, uint64 avg, half sum/prod/max/min/avg"]
    assert report.left_out_line("all_reduce", "cpu", []) == []
    for flags, named in ((["-d", "half", "-o", "all"], "-d/--datatype half with -o/--op all"),
                         (["-d", "int8", "-o", "avg"], "-d/--datatype int8 with -o/--op avg")):
        _, cfg = cli.parse(["reduce", *flags])
        assert cfg.problems(2, _refuse_half_and_integer_avg) == [
            f"{named}: {'no float16 here' if 'half' in flags else 'no integer average'}"]
    _, cfg = cli.parse(["broadcast", "-d", "half"])  # data movement: any type
    assert cfg.problems(2, _refuse_half_and_integer_avg) == []


def test_bfloat16_without_ml_dtypes_is_a_clear_error(monkeypatch, capsys):
    monkeypatch.setattr(config, "has_ml_dtypes", lambda: False)
    with pytest.raises(SystemExit) as exc:
        cli.parse(["broadcast", "-d", "bfloat16"])
    assert exc.value.code == 2
    assert ("argument -d/--datatype: bfloat16 needs the ml_dtypes package"
            in capsys.readouterr().err)
    _, cfg = cli.parse(["broadcast", "-d", "all"])  # -d all: every type NumPy knows here
    assert "bfloat16" not in [d.name for d in cfg.dtypes]


@needs_ml_dtypes
def test_bfloat16_is_a_type_where_ml_dtypes_is_installed():
    _, cfg = cli.parse(["broadcast", "-d", "bfloat16"])
    assert [d.name for d in cfg.dtypes] == ["bfloat16"]
    assert config.type_name(cfg.dtypes[0]) == "bfloat16"


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
    entry_types = {"time_us": float, "algbw": float, "busbw": float, "wrong": int, "wrong_ranks": int}
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


def test_out_of_bounds_values_count_each_rank_with_a_wrong_result_as_nccl_tests_does(tmp_path):
    path = tmp_path / "bad.json"
    result = launch(2, "bench_corrupt.py", "all_reduce", *SMALL, "--json", str(path), timeout=TIMEOUT,
                    env={"BENCH_CORRUPT_ALL": "1"})
    assert result.returncode == 1, result.stdout + result.stderr
    assert "# Out of bounds values : 16 FAILED" in result.stdout  # 4 sizes x 2 columns x 2 ranks
    data = json.loads(path.read_text())
    assert data["errors"] == 16
    assert all(row[side]["wrong"] == 2 and row[side]["wrong_ranks"] == 2 for row in data["rows"] for side in ("oop", "ip"))


def test_a_reduction_the_engine_cannot_run_is_refused_on_the_ranks():
    result = bench("all_reduce", *SMALL, "-d", "int32", "-o", "avg")
    assert result.returncode == 2
    assert "error: -d/--datatype int32 with -o/--op avg: ReduceOp.AVG needs a floating" in result.stderr


@pytest.mark.parametrize("dtype", ["half", pytest.param("bfloat16", marks=needs_ml_dtypes)])
def test_16_bit_floats_reduce_on_the_cpu_and_check_out(dtype):
    """MPI has no 16-bit floats: the engine reduces them as float32; -c 1 checks every result."""
    result = bench("all_reduce", *SMALL, "-d", dtype, "-c", "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "# Out of bounds values : 0 OK" in result.stdout and f" {dtype} " in result.stdout


@needs_ml_dtypes
def test_a_bfloat16_reduction_has_no_raw_mpi_peer_and_says_so(tmp_path):
    """MPI cannot reduce bfloat16 (pycoll reduces it with an operation of its own): --compare raw
    shows N/A there (null in JSON) and the run goes on, exit 0."""
    out = tmp_path / "r.json"
    result = bench("all_reduce", "-b", "1K", "-e", "1K", "-n", "2", "-w", "0", "-d", "bfloat16", "--compare", "raw",
                   "--json", out)
    assert result.returncode == 0, result.stdout + result.stderr
    assert table_rows(result.stdout)[0][9:10] + table_rows(result.stdout)[0][-1:] == ["N/A", "N/A"], result.stdout
    entry = json.loads(out.read_text())["rows"][0]["oop"]
    assert entry["wrong"] == 0 and (entry["raw_time_us"], entry["raw_wrong"], entry["ratio"]) == (None, None, None)


def test_paddles_launcher_variables_do_not_reach_the_ranks_it_starts(tmp_path):
    """pycoll-bench starts --nprocs ranks here with its table on stdout, whatever a user of
    paddle's launcher exported for it."""
    result = bench("all_reduce", "-b", "1K", "-e", "1K", "-n", "1", "-w", "0", "--nprocs", "2",
                   env={"PADDLE_NPROC_PER_NODE": "3", "PADDLE_LOG_DIR": str(tmp_path / "logs")})
    assert result.returncode == 0, result.stdout + result.stderr
    assert "backend cpu (MPI), 2 ranks" in result.stdout and len(table_rows(result.stdout)) == 1
    assert not (tmp_path / "logs").exists()


def test_buffers_larger_than_memory_are_a_clear_error_naming_maxbytes():
    """nccl-tests lowers maxBytes; pycoll-bench says what to lower (exit 2, not a traceback)."""
    result = run_command(["bash", "-c", f"ulimit -v 3000000; exec {sys.executable} -m pycoll.bench all_reduce "
                                        f"-b 4G -e 4G -n 1 -w 0 --nprocs 1"], timeout=TIMEOUT)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "error: -e/--maxbytes 4294967296: rank 0 cannot allocate its 8589934592 bytes" in result.stderr
    assert "Traceback" not in result.stderr, result.stderr


def test_every_type_and_reduction_in_one_run(tmp_path):
    """-d all -o all: one block of rows per type (and reduction, for reducing ops) under each
    op's table; what MPI cannot reduce (the integers' avg) is left out with one line; data
    movement runs every type; the JSON and CSV say which each row is."""
    js, cs = tmp_path / "all.json", tmp_path / "all.csv"
    # from 16 B: a block of 8-byte elements on each of 2 ranks is not empty
    result = bench("all", "-b", "16", "-e", "64", "-n", "2", "-w", "1", "-d", "all", "-o", "all",
                   "--json", js, "--csv", cs)
    assert result.returncode == 0, result.stdout + result.stderr
    sizes = [16, 32, 64]
    floats = ("half", "float", "double", "bfloat16")
    reducible = [(t, r) for t in ALL_TYPES for r in ALL_REDOPS if r != "avg" or t in floats]
    tables = result.stdout.split("# Out of bounds values : 0 OK")[:-1]
    assert len(tables) == len(OPS)
    data = json.loads(js.read_text())
    for name, table in zip(OPS, tables):
        cases = reducible if OPS[name].reduces else [(t, "none") for t in ALL_TYPES]
        assert [(r[2], r[3]) for r in table_rows(table)] == [c for c in cases for _ in sizes]
        assert [int(r[0]) for r in table_rows(table)] == sizes * len(cases)
        left_out = [line for line in table.splitlines() if "left out" in line]
        assert len(left_out) == (1 if OPS[name].reduces else 0), left_out
        mine = [r for r in data if r["op"] == name]
        assert [(r["dtype"], r["redop"]) for r in mine] == cases
        assert all(row["type"] == r["dtype"] and row["redop"] == r["redop"]
                   for r in mine for row in r["rows"])
    assert "int8 avg, uint8 avg" in left_out_line(result.stdout, "all_reduce")
    with open(cs, newline="") as f:
        lines = list(csv.DictReader(f))
    assert len(lines) == sum(len(r["rows"]) for r in data)
    assert ("alltoall", "half", "none") in {(l["op"], l["type"], l["redop"]) for l in lines}


def left_out_line(stdout, op):
    return next(line for line in stdout.splitlines() if line.startswith(f"# {op}: left out"))


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
    several = io.StringIO()  # -d all / -o all: which type and reduction, too
    report.Progress(True, several).size("all_reduce", 64, 3, 4, 0, 8, case="double max (3/34)")
    assert re.fullmatch(r"\rpycoll-bench all_reduce: 64 B \(4/4\), double max \(3/34\), "
                        r"op 1/8, \d+ s", several.getvalue())


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


# -- on GPUs --------------------------------------------------------------------------------

@pytest.mark.gpu
def test_nccl_all_reduce_on_two_ranks_is_right():
    """Two NCCL ranks (sharing one GPU where there is one: each gets its own NCCL_HOSTID). Few
    sizes and calls: two processes on one GPU take turns on it (time slices of about a
    millisecond each call), so the default 1000 calls a size took minutes on an H100."""
    env = {"NCCL_SOCKET_IFNAME": "lo", "PYCOLL_DEVICE": "gpu"}  # the default backend: nccl
    result = bench("all_reduce", "-b", "8", "-e", "1M", "-f", "8", "-n", "5", "-w", "1", "--nprocs", "2",
                   "--compare", "raw", timeout=180, env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "backend nccl (NCCL " in result.stdout and "device gpu:" in result.stdout
    rows = table_rows(result.stdout)
    assert len(rows) == 6 and all(r[8] == "0" and r[13] == "0" for r in rows)  # the #wrong columns
    assert "# Out of bounds values : 0 OK" in result.stdout
