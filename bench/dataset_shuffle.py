"""InMemoryDataset on 2 ranks, pycoll against Paddle 3.3.1 on the same files (issue 14): records
per second of load_into_memory, local_shuffle and global_shuffle for 1 M records of 3 slots, and
peak memory per rank.

    python bench/dataset_shuffle.py --paddle-python /tmp/paddlevenv/bin/python [--data DIR] \\
        [--runs 3] [--thread-num 1] [--json dataset_shuffle.json]

The MultiSlot files are written once (into --data, kept there and reused when already complete;
else a temporary folder): 1 000 000 records in 8 files, each record an int64 slot of 1-4 ids, an
int64 label and a float32 slot of 4 values. Each run starts one 2-rank job per framework
(bench/dataset_shuffle_pycoll.py under pycoll.launch, bench/dataset_shuffle_paddle.py under
paddle.distributed.launch, the order flipping from run to run); each rank loads its 4 files
(``set_filelist`` of every 2nd file) and times each step between barriers. Records/s is all
records over the slowest rank's time; RSS is ``ru_maxrss`` (the peak) per rank, before the load,
after it and at the end, the largest rank's; the load's and the dataset's shares are the
differences from before the load. Table: median over
runs (min-max). Paddle's global_shuffle does not run on its CPU wheel (see
bench/dataset_shuffle_paddle.py); a last Paddle job tries it and the table names what fails.
Both launchers give each rank one OpenMP/BLAS thread (OMP_NUM_THREADS=1).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
RECORDS, FILES = 1_000_000, 8


def write_files(folder: Path, records: int = RECORDS, files: int = FILES) -> int:
    """The MultiSlot files (deterministic; rewritten unless a ``.complete`` marker says they're there)."""
    marker = folder / f".complete-{records}-{files}"
    if marker.exists():
        return sum(p.stat().st_size for p in folder.glob("part-*.txt"))
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(14)
    per = -(-records // files)
    for f in range(files):
        n = min(per, records - f * per)
        counts = rng.integers(1, 5, n)
        ids = rng.integers(0, 1 << 40, (n, 4))
        labels = rng.integers(0, 2, n)
        dense = rng.random((n, 4), dtype=np.float32)
        lines = []
        for k, row, label, values in zip(counts.tolist(), ids.tolist(), labels.tolist(), dense.tolist()):
            lines.append(f"{k} {' '.join(map(str, row[:k]))} 1 {label} 4 "
                         f"{values[0]:.5f} {values[1]:.5f} {values[2]:.5f} {values[3]:.5f}\n")
        (folder / f"part-{f:02d}.txt").write_text("".join(lines))
    marker.touch()
    return sum(p.stat().st_size for p in folder.glob("part-*.txt"))


def job(name: str, argv, out: Path) -> list:
    """Run one job in a scratch folder (paddle's launcher writes log/ there); the ranks' reports."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(argv, capture_output=True, text=True, cwd=scratch, env=env, timeout=1200)
        reports = [json.loads(p.read_text()) for p in sorted(out.glob(f"{name}-rank*.json"))]
        if done.returncode != 0 or len(reports) != 2:
            logs = "".join(p.read_text()[-3000:] for p in Path(scratch).glob("log/workerlog.*"))
            raise RuntimeError(f"{' '.join(map(str, argv))} failed ({done.returncode}):\n"
                               f"{done.stdout[-3000:]}{done.stderr[-3000:]}{logs}")
    for p in out.glob(f"{name}-rank*.json"):
        p.unlink()
    return reports


def summary(reports: list) -> dict:
    loaded = reports[0]["loaded_all"]
    assert all(r["loaded_all"] == loaded == sum(x["loaded"] for x in reports) for r in reports), reports
    assert all(r["shuffled_all"] == loaded for r in reports), reports
    row = {"records": loaded,
           "load_rps": loaded / max(r["load_s"] for r in reports),
           "local_shuffle_rps": loaded / max(r["local_shuffle_s"] for r in reports),
           "rss_before_mib": max(r["rss_before_load_mib"] for r in reports),
           "rss_peak_mib": max(r["rss_peak_mib"] for r in reports),
           "loaded_mib": max(r["rss_after_load_mib"] - r["rss_before_load_mib"] for r in reports),
           "dataset_mib": max(r["rss_peak_mib"] - r["rss_before_load_mib"] for r in reports)}
    if "global_shuffle_s" in reports[0]:
        row["global_shuffle_rps"] = loaded / max(r["global_shuffle_s"] for r in reports)
    return row


def try_paddle_global_shuffle(argv, out: Path) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(argv + ["--global-shuffle"], capture_output=True, text=True, cwd=scratch,
                              env=env, timeout=1200)
        log = "".join(p.read_text() for p in sorted(Path(scratch).glob("log/workerlog.0")))
    found = {}
    for p in out.glob("paddle-global-shuffle-rank0.json"):
        found = json.loads(p.read_text())
    abort = []
    for line in log.splitlines():
        line = line.strip()
        if any(w in line for w in ("future_error", "pslib", "FatalError", "what()")):
            line = line.split("] ", 1)[-1] if "fleet_wrapper" in line else line  # the glog prefix
            if line not in abort:
                abort.append(line)
    found["exit status"] = done.returncode
    found["log lines"] = abort[:6]
    return found


def fmt(values, scale=1.0, digits=0) -> str:
    values = [v / scale for v in values]
    med = statistics.median(values)
    return f"{med:,.{digits}f} ({min(values):,.{digits}f}–{max(values):,.{digits}f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paddle-python", required=True, help="the python of a venv with paddlepaddle")
    parser.add_argument("--data", default=None, help="folder for the MultiSlot files (default: a temporary one)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--thread-num", type=int, default=1)
    parser.add_argument("--json", default="dataset_shuffle.json")
    parser.add_argument("--skip-paddle-global-shuffle", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(args.data) if args.data else Path(tmp) / "data"
        size = write_files(data)
        out = Path(tmp) / "out"
        out.mkdir()
        common = [str(data), str(out), "--thread-num", str(args.thread_num)]
        commands = {
            "pycoll": [sys.executable, "-m", "pycoll.launch", "--nproc_per_node", "2",
                       str(HERE / "dataset_shuffle_pycoll.py")] + common,
            "paddle": [args.paddle_python, "-m", "paddle.distributed.launch", "--nproc_per_node", "2",
                       str(HERE / "dataset_shuffle_paddle.py")] + common,
        }
        runs = {name: [] for name in commands}
        for r in range(args.runs):
            for name in (commands if r % 2 == 0 else reversed(list(commands))):
                runs[name].append(summary(job(name, commands[name], out)))
                print(f"run {r} {name}: " + ", ".join(f"{k}={v:,.1f}" for k, v in runs[name][-1].items()),
                      flush=True)
        paddle_global = None if args.skip_paddle_global_shuffle else try_paddle_global_shuffle(commands["paddle"], out)
    result = {"records": RECORDS, "files": FILES, "bytes": size, "ranks": 2, "thread_num": args.thread_num,
              "runs": runs, "paddle_global_shuffle": paddle_global}
    Path(args.json).write_text(json.dumps(result, indent=1))

    def col(name, key, **kw):
        return fmt([row[key] for row in runs[name]], **kw) if key in runs[name][0] else "—"

    def ratio(key):
        if key not in runs["paddle"][0]:
            return "—"
        ours, theirs = (statistics.median(r[key] for r in runs[name]) for name in ("pycoll", "paddle"))
        return f"{ours / theirs:.2f}"

    print(f"\n# {RECORDS:,} records ({size / 2**20:.0f} MiB in {FILES} files), 2 ranks, thread_num="
          f"{args.thread_num}; median of {args.runs} alternated runs (min–max)")
    print("| | pycoll | Paddle 3.3.1 | pycoll / Paddle |")
    print("|---|---:|---:|---:|")
    for label, key in (("load_into_memory, records/s", "load_rps"),
                       ("local_shuffle, records/s", "local_shuffle_rps"),
                       ("global_shuffle, records/s", "global_shuffle_rps")):
        print(f"| {label} | {col('pycoll', key)} | {col('paddle', key)} | {ratio(key)} |")
    for label, key in (("RSS before load, MiB (peak, largest rank)", "rss_before_mib"),
                       ("peak RSS per rank, MiB (largest rank)", "rss_peak_mib"),
                       ("the load's share: peak after load − before, MiB", "loaded_mib"),
                       ("the dataset's share: peak − before, MiB", "dataset_mib")):
        print(f"| {label} | {col('pycoll', key, digits=1)} | {col('paddle', key, digits=1)} | {ratio(key)} |")
    if paddle_global:
        print("\nPaddle's global_shuffle on this build:")
        for k, v in paddle_global.items():
            print(f"- {k}: {v}")


if __name__ == "__main__":
    main()
