"""bench/ops_vs_paddle.py without Paddle: the script's pycoll side on two small cases (a worker
process, the table and the JSON it writes, the Paddle column skipped with a message), how rounds
combine into the table, and the flags it refuses."""
import json
import os
import sys

import pytest

from conftest import run_python

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bench")
sys.path.insert(0, BENCH)  # as when the script runs: bench/ is its first import path
import ops_vs_paddle  # noqa: E402

SCRIPT = os.path.join(BENCH, "ops_vs_paddle.py")


def test_pycoll_side_runs_two_cases_and_skips_a_missing_peer(tmp_path):
    out = tmp_path / "ops.json"
    missing = tmp_path / "no-such-python"
    result = run_python([SCRIPT, "--cases", "one_hot,layernorm", "--repeats", "1", "--rounds", "1",
                         "--peer-python", missing, "--json", out], timeout=120)
    assert result.returncode == 0, result.stderr
    assert f"# Paddle column skipped: --peer-python {missing} does not exist" in result.stdout
    rows = [line for line in result.stdout.splitlines() if line.startswith("| one_hot") or line.startswith("| layernorm")]
    assert [row.split(" | ")[0] for row in rows] == ["| one_hot", "| layernorm"]
    for row in rows:
        _, paddle_ms, pycoll_ms, ratio = row.strip("| ").split(" | ")
        assert (paddle_ms, ratio) == ("skipped", "—") and float(pycoll_ms) > 0
    report = json.loads(out.read_text())
    assert report["paddle"] is None and report["peer_skipped"].endswith("does not exist")
    assert report["pycoll"]["version"] and report["pycoll"]["errors"] == {}
    assert sorted(report["pycoll"]["ms"]) == ["layernorm", "one_hot"]
    assert all(ms > 0 for ms in report["pycoll"]["ms"].values())


def test_rounds_keep_each_cases_best_and_the_ratio_is_pycoll_over_paddle():
    rounds = [{"version": "3.3.1", "ms": {"topk": 40.0}, "errors": {"lstm": "NotFound: no kernel"}},
              {"version": "3.3.1", "ms": {"topk": 38.0, "lstm": 13.0}, "errors": {"sdpa": "boom"}}]
    paddle = ops_vs_paddle.merge_best(rounds)
    assert paddle["ms"] == {"topk": 38.0, "lstm": 13.0}
    assert paddle["errors"] == {"sdpa": "boom"}  # lstm was measured in one round: no error left
    pycoll = ops_vs_paddle.merge_best([{"version": "0.1.0", "ms": {"topk": 380.0, "lstm": 6.5, "sdpa": 9.0},
                                        "errors": {}}])
    rows = ops_vs_paddle.table(["topk", "lstm", "sdpa"], {"paddle": paddle, "pycoll": pycoll})
    assert rows[2:] == ["| topk | 38.00 | 380.00 | 10.00 |", "| lstm | 13.00 | 6.50 | 0.50 |",
                        "| sdpa | error | 9.00 | — |"]


@pytest.mark.parametrize("argv, message", [
    (["--cases", "topk,nope"], "--cases: got ['nope']"),
    (["--cases", ","], "--cases: got none"),
    (["--repeats", "0"], "--repeats: got 0, needs an integer >= 1"),
])
def test_bad_flags_are_refused_by_name(argv, message, capsys):
    with pytest.raises(SystemExit):
        ops_vs_paddle.parse_args(argv)
    assert message in capsys.readouterr().err
