"""pycoll-bench's figures (pycoll/bench/plot.py): sizes labelled in B/KiB/MiB/GiB, a title naming
what every curve shares (host, backend, ranks, type, reduction, date) and labels naming the rest,
--plot-from several files, and a run's own --plot. The figure object is inspected, not its pixels.

Figures are tested only where matplotlib is importable; elsewhere its clear error is tested.
"""
import json
import re
import socket

import pytest

from conftest import run_python
from pycoll.bench import cli, plot
from pycoll.bench.report import size_text

SIZES = [8, 64, 512, 4096, 32768, 1 << 20, 4 << 20]
TIMEOUT = 60
needs_matplotlib = pytest.mark.skipif(not plot.available(), reason="matplotlib is not installed")


def result(op="all_reduce", backend="cpu", hosts=("node-a", "node-a"), dtype="float",
           redop="sum", date="2025-06-01 10:00", raw=False):
    """A result as --json writes it, with made-up times."""
    def entry(size):
        e = {"time_us": 10.0 + size / 1e3, "algbw": size / (10e3 + size),
             "busbw": size / (10e3 + size), "wrong": 0}
        return {**e, "raw_time_us": 5.0 + size / 1e3} if raw else e
    rows = [{"size": s, "count": s // 4, "type": dtype, "redop": redop, "root": -1, "iters": 3,
             "oop": entry(s), "ip": None} for s in SIZES]
    devices = [{"rank": i, "host": h, "pid": 1, "device": "cpu"} for i, h in enumerate(hosts)]
    return {"op": op, "backend": backend, "nranks": len(hosts), "devices": devices, "date": date,
            "dtype": dtype, "redop": redop, "rows": rows}


def write(path, results):
    path.write_text(json.dumps(results[0] if len(results) == 1 else results))
    return str(path)


@pytest.mark.parametrize("nbytes, text", [(8, "8 B"), (1023, "1023 B"), (1024, "1 KiB"),
                                          (1536, "1.5 KiB"), (4 << 20, "4 MiB"),
                                          (256 << 20, "256 MiB"), (1 << 30, "1 GiB")])
def test_sizes_read_in_binary_units(nbytes, text):
    assert size_text(nbytes) == text


def test_the_title_holds_what_runs_share_and_each_label_the_rest():
    one = [(None, result())]
    assert plot.title_and_labels(one) == (
        "all_reduce on node-a, backend cpu, 2 ranks, float, sum, 2025-06-01 10:00", [""])
    assert [c.label for c in plot.curves(one)] == ["out-of-place"]
    # --plot-from: two files, another backend and host in the second
    two = [("a", result()), ("b", result(backend="nccl", hosts=("gpu-1", "gpu-1")))]
    assert plot.title_and_labels(two) == (
        "all_reduce, 2 ranks, float, sum, 2025-06-01 10:00",
        ["a: on node-a, backend cpu", "b: on gpu-1, backend nccl"])
    # one -d all run: the type differs; an op without a reduction shows none
    typed = [("r", result(dtype=t)) for t in ("int8", "double")]
    typed.append(("r", result(op="broadcast", dtype="double", redop="none")))
    title, labels = plot.title_and_labels(typed)
    assert title == "on node-a, backend cpu, 2 ranks, 2025-06-01 10:00"
    assert labels == ["all_reduce, int8, sum", "all_reduce, double, sum", "broadcast, double"]


def test_results_without_devices_or_date_still_have_a_title():
    old = result()
    for key in ("devices", "date", "dtype", "redop"):
        del old[key]
    assert plot.title_and_labels([(None, old)]) == ("all_reduce, backend cpu, 2 ranks", [""])


def test_the_raw_curve_has_the_raw_calls_times_and_bandwidth():
    rows = [{"size": s, "oop": {"time_us": 10.0, "algbw": s / 1e4, "busbw": s / 2e4,
                                "raw_time_us": 5.0},
             "ip": None} for s in (0, 64, 4096)]
    res = {"op": "reduce", "backend": "nccl", "nranks": 2, "rows": rows}
    ours, raw = plot.curves([(None, res)])
    assert ours.sizes == raw.sizes == [64, 4096]  # a log axis has no size 0
    assert (ours.label, raw.label) == ("out-of-place", "out-of-place, raw NCCL")
    assert raw.time_us == [5.0, 5.0] and raw.busbw == [64 / 1e4, 4096 / 1e4]
    assert ours.busbw == [64 / 2e4, 4096 / 2e4] and raw.colour != ours.colour
    for row in rows:
        del row["oop"]["raw_time_us"]  # a run without --compare raw
    other = dict(res, op="all_reduce")
    assert [c.label for c in plot.curves([("a", res), ("a", other)])] == [
        "reduce out-of-place", "all_reduce out-of-place"]


@needs_matplotlib
def test_the_figure_labels_sizes_in_binary_units_and_has_the_title():
    fig = plot.figure([(None, result(raw=True))])
    try:
        fig.canvas.draw()
        ax_bw, ax_t = fig.axes
        for ax in (ax_bw, ax_t):
            assert ax.get_xscale() == "log" and ax.get_xlabel() == "message size"
            ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
            assert ticks and all(re.fullmatch(r"\d+(\.\d+)? (B|KiB|MiB|GiB)", t) for t in ticks)
            formatter = ax.xaxis.get_major_formatter()
            assert [formatter(x, 0) for x in (8, 1024, 4 << 20)] == ["8 B", "1 KiB", "4 MiB"]
        assert (ax_bw.get_ylabel(), ax_t.get_ylabel()) == ("bus bandwidth (GB/s)", "time (µs)")
        assert [t.get_text() for t in fig.texts] == [
            "pycoll-bench all_reduce on node-a, backend cpu, 2 ranks, float, sum, "
            "2025-06-01 10:00"]
        assert [line.get_label() for line in ax_bw.get_lines()] == [
            "out-of-place", "out-of-place, raw MPI"]
    finally:
        plot.pyplot().close(fig)


@needs_matplotlib
def test_plot_from_several_json_files(tmp_path):
    a = write(tmp_path / "a.json", [result(op="broadcast", redop="none")])
    b = write(tmp_path / "b.json", [result(op="broadcast", redop="none", backend="nccl"),
                                    result(op="all_gather", redop="none", backend="nccl")])
    png = tmp_path / "both.png"
    assert cli.main(["--plot-from", a, b, "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert plot.title_and_labels(plot.load([a, b]))[1] == [
        "a: broadcast, backend cpu", "b: broadcast, backend nccl", "b: all_gather, backend nccl"]


@needs_matplotlib
def test_plot_after_a_run_compared_with_raw_names_the_machine(tmp_path):
    png, path = tmp_path / "run.png", tmp_path / "run.json"
    done = run_python(["-m", "pycoll.bench", "all_reduce", "-b", "8", "-e", "4K", "-f", "8",
                       "-n", "3", "-w", "1", "--compare", "raw", "--plot", str(png),
                       "--json", str(path)], timeout=TIMEOUT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    runs = plot.load([str(path)])
    title, _ = plot.title_and_labels(runs)
    assert re.fullmatch(rf"all_reduce on {re.escape(socket.gethostname())}, backend cpu, "
                        rf"2 ranks, float, sum, \d{{4}}-\d\d-\d\d \d\d:\d\d", title)
    assert [curve.label for curve in plot.curves(runs)] == [
        "out-of-place", "out-of-place, raw MPI", "in-place", "in-place, raw MPI"]


def test_plot_without_matplotlib_is_a_clear_error(capsys, monkeypatch):
    monkeypatch.setattr(plot, "available", lambda: False)  # as on a machine without matplotlib
    with pytest.raises(SystemExit) as exc:
        cli.parse(["all_reduce", "--plot", "x.png"])
    assert exc.value.code == 2 and "pip install 'pycoll[plot]'" in capsys.readouterr().err


@needs_matplotlib
def test_plot_from_refuses_files_that_are_not_results(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert cli.main(["--plot-from", str(bad), "--plot", str(tmp_path / "x.png")]) == 2
    assert "not a pycoll-bench JSON result" in capsys.readouterr().err


@needs_matplotlib
def test_a_figure_format_matplotlib_cannot_write_is_refused_before_the_sweep(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.parse(["all_reduce", "--plot", "figure.txt"])
    assert exc.value.code == 2
    assert "argument --plot: figure.txt ends in 'txt', not a figure format matplotlib writes" in capsys.readouterr().err
    assert plot.format_problem("figure.svg") is None and plot.format_problem("figure") is None
