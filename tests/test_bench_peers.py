"""The GPU peer benchmark (bench/gpu_peers.py) and its table and figure (bench/peer_report.py),
without a GPU: the flags and --dry-run, what each op's buffers hold, and a whole measurement on
one rank (MPI.COMM_SELF) with stand-in contenders on NumPy arrays, checked and tabled as the GPU
ones are. The GPU contenders themselves run only on a GPU (bench/run_gpu.sh's peers steps)."""
import os
import sys

import numpy as np
import pytest
from mpi4py import MPI

from conftest import run_python
from pycoll.bench import plot

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
sys.path.insert(0, BENCH)  # as when the script runs: bench/ is its first import path
import gpu_peers  # noqa: E402
import peer_report  # noqa: E402

SCRIPT = os.path.join(BENCH, "gpu_peers.py")


class HostArrays:
    """The stand-in of a library's GPU arrays: NumPy, finished on return."""

    def zeros(self, n):
        return np.zeros(n, np.float32)

    def fill(self, arr, value):
        arr.fill(value)

    def to_host(self, arr):
        return arr

    def sync(self):
        pass


def one_rank_contender(name, calls=None, wrong_op=None):
    """The ops on one rank, as a library would run them (``wrong_op``'s result off by one);
    each call is counted in ``calls``."""
    def counted(op, run):
        def call():
            run()
            if calls is not None:
                calls[op] = calls.get(op, 0) + 1
        return call

    def gather(send, recv):
        recv[:] = send
    binds = {"all_reduce": lambda send, recv: counted("all_reduce", lambda: None),
             "all_gather": lambda send, recv: counted("all_gather", lambda: gather(send, recv)),
             "broadcast": lambda send, recv: counted("broadcast", lambda: None)}
    if wrong_op:
        right = binds[wrong_op]

        def wrong(send, recv):
            run = right(send, recv)

            def call():
                run()
                recv[0] += 1
            return call
        binds[wrong_op] = wrong
    return gpu_peers.Contender(name, HostArrays(), binds)


# -- flags ----------------------------------------------------------------------------------

def test_defaults_are_every_op_on_todays_sweep():
    args = gpu_peers.parse_args([])
    assert args.ops == ["all_reduce", "all_gather", "broadcast"]
    assert args.sizes == [8 << 2 * k for k in range(13)] + [256 << 20]
    assert (args.max_iters, args.rounds, args.plot, args.dry_run) == (1000, 7, None, False)


def test_ops_sizes_and_max_iters_bound_a_run():
    args = gpu_peers.parse_args(["--ops", "broadcast,all_gather", "--sizes", "8,1K,1M,256M",
                                 "--max-iters", "50", "--rounds", "3"])
    assert args.ops == ["broadcast", "all_gather"]
    assert args.sizes == [8, 1024, 1 << 20, 256 << 20]
    assert (args.max_iters, args.rounds) == (50, 3)
    assert [gpu_peers.iterations(n, 50) for n in args.sizes] == [50, 50, 50, 3]
    assert [gpu_peers.iterations(n, 1000) for n in args.sizes] == [1000, 1000, 256, 3]
    assert gpu_peers.iterations(256 << 20, 2) == 2  # the bound wins over the minimum of 3


@pytest.mark.parametrize("argv, message", [
    (["--ops", "all_reduce,reduce"], "argument --ops: 'all_reduce,reduce': give some of"),
    (["--ops", "broadcast,broadcast"], "each once"),
    (["--sizes", "8,1X"], "argument --sizes: '1X' is not a size"),
    (["--sizes", "2"], "every size must hold a float32"),
    (["--max-iters", "0"], "argument --max-iters: 0 is too small"),
    (["--rounds", "x"], "argument --rounds: 'x' is not an integer"),
])
def test_bad_flags_exit_2_naming_the_flag(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        gpu_peers.parse_args(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_dry_run_needs_no_gpu_and_shows_the_plan():
    result = run_python([SCRIPT, "--dry-run", "--ops", "broadcast", "--sizes", "8,1M",
                         "--max-iters", "10", "--rounds", "2"], timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == [
        "# gpu_peers: broadcast; contenders pycoll, raw nccl, cupyx, torch and nccl4py (where "
        "they can be set up); 3 blocks per contender and size",
        "#   8 B: 10 calls per block", "#   1 MiB: 10 calls per block"]


# -- what is measured -----------------------------------------------------------------------

@pytest.mark.parametrize("op, nbytes, world, send, recv, result", [
    ("all_reduce", 16, 2, 4, 4, [3, 3, 3, 3]),
    ("broadcast", 8, 3, 2, 2, [1, 1]),
    ("all_gather", 16, 2, 2, 4, [1, 1, 2, 2]),
    ("all_gather", 8, 4, 1, 4, [1, 2, 3, 4]),  # each rank sends at least one element
])
def test_each_ops_buffers_and_result(op, nbytes, world, send, recv, result):
    assert gpu_peers.counts(op, nbytes, world) == (send, recv)
    assert gpu_peers.expected(op, recv, world).tolist() == result


def test_a_measurement_checks_times_and_tables_every_contender_per_op():
    calls = {}
    contenders = [one_rank_contender("pycoll", calls), one_rank_contender("stand-in")]
    progress = []
    results = gpu_peers.measure(MPI.COMM_SELF, contenders, ["all_gather", "broadcast"],
                                [8, 4096], rounds=2, max_iters=5, rank=0, world=1, log=progress.append)
    assert [line.split(" measured in ")[0] for line in progress] == [
        "# all_gather 8 B:", "# all_gather 4 KiB:", "# broadcast 8 B:", "# broadcast 4 KiB:"]
    assert list(results) == ["all_gather", "broadcast"]
    for by_size in results.values():
        assert list(by_size) == [8, 4096]
        assert all(list(t) == ["pycoll", "stand-in"] and min(t.values()) > 0
                   for t in by_size.values())
    # per size: the check, then a warm-up round and 2 timed rounds of 5 calls
    assert calls == {"all_gather": 2 * (1 + 3 * 5), "broadcast": 2 * (1 + 3 * 5)}
    lines = gpu_peers.report(results, world=1)
    assert lines[0] == "# all_gather: float32, out of place"
    assert lines[1].startswith("| size | pycoll (us) | pycoll busbw (GB/s) | stand-in (us)")
    assert lines[3].startswith("| 8 B | ") and lines[4].startswith("| 4 KiB | ")
    assert lines[6] == "# broadcast: float32 from rank 0, in place"


def test_a_wrong_result_stops_the_run_naming_the_contender():
    contenders = [one_rank_contender("pycoll"), one_rank_contender("bad", wrong_op="all_reduce")]
    with pytest.raises(RuntimeError, match="bad: all_reduce of 1 KiB gave a wrong result"):
        gpu_peers.measure(MPI.COMM_SELF, contenders, ["all_reduce"], [1024], rounds=1,
                          max_iters=1, rank=0, world=1)


def test_a_contender_that_cannot_be_set_up_is_skipped_with_one_line():
    def missing():
        raise ImportError("No module named 'nccl'")
    assert gpu_peers.optional("nccl4py", missing, MPI.COMM_SELF) == (
        None, "# nccl4py: skipped (ImportError: No module named 'nccl')")
    made = one_rank_contender("torch")
    assert gpu_peers.optional("torch", lambda: made, MPI.COMM_SELF) == (made, "")


def test_tables_use_each_ops_bus_bandwidth_factor():
    results = {1 << 20: {"pycoll": 1e-3, "raw nccl": 0.5e-3}}
    cells = {op: peer_report.table(results, 2, op)[2].split(" | ") for op in gpu_peers.OPS}
    # 1 MiB in 1 ms on 2 ranks: algbw 1.05 GB/s; factors 1, 1/2 and 1
    assert [cells[op][2] for op in gpu_peers.OPS] == ["1.05", "0.52", "1.05"]
    assert cells["all_reduce"][0] == "| 1 MiB" and cells["all_reduce"][-1] == "0.50 |"
    assert peer_report.table(results, 2) == peer_report.table(results, 2, "all_reduce")


@pytest.mark.skipif(not plot.available(), reason="matplotlib is not installed")
def test_the_figure_has_one_panel_per_op(tmp_path, monkeypatch):
    results = {op: {8: {"pycoll": 1e-5, "cupyx": 2e-5}, 1 << 20: {"pycoll": 1e-3, "cupyx": 1e-3}}
               for op in gpu_peers.OPS}
    made = []
    plt = plot.pyplot()
    monkeypatch.setattr(plt, "close", made.append)  # keep the figure to look at it
    path = tmp_path / "peers.png"
    peer_report.plot_ops(results, 2, "pycoll and its peers on 2 GPU ranks", str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    fig = made[0]
    assert [ax.get_title() for ax in fig.axes] == list(gpu_peers.OPS)
    assert fig.axes[0].xaxis.get_major_formatter()(1 << 20, 0) == "1 MiB"
    assert [t.get_text() for t in fig.texts] == ["pycoll and its peers on 2 GPU ranks"]
    monkeypatch.undo()
    plt.close(fig)
