"""pycoll's all_gather_object, gather and reduce against Paddle's on the same machine, and pycoll's
alltoall_single against raw mpi4py Alltoallv (issue 12), in one run.

    python bench/api_calls_vs_paddle.py --paddle-python /path/to/paddle-venv/bin/python [--runs 5]

Paddle (``pip install paddlepaddle==3.3.1``, CPU build) lives in its own virtual environment.
Each run starts one 2-rank job per framework (bench/api_calls_pycoll.py under pycoll.launch,
bench/api_calls_paddle.py under paddle.distributed.launch), the order flipping from run to run;
each job prints its per-call medians; the table gives the median over runs and Paddle / pycoll.
Both launchers give each rank one OpenMP/BLAS thread here (OMP_NUM_THREADS=1).
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def job(argv, cwd: str) -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, env=env, timeout=600)
    text = out.stdout + "".join(p.read_text() for p in Path(cwd).glob("log/workerlog.0"))
    found = dict(re.findall(r"^(\w+)=([\d.]+)$", text, re.M))
    if out.returncode != 0 or not found:
        raise RuntimeError(f"{' '.join(argv)} failed ({out.returncode}):\n{out.stdout}{out.stderr}")
    return {k: float(v) for k, v in found.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paddle-python", required=True, help="the python of a venv with paddlepaddle")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    commands = {
        "pycoll": [sys.executable, "-m", "pycoll.launch", "--nproc_per_node", "2", str(HERE / "api_calls_pycoll.py")],
        "paddle": [args.paddle_python, "-m", "paddle.distributed.launch", "--nproc_per_node", "2",
                   str(HERE / "api_calls_paddle.py")],
    }
    results = {name: [] for name in commands}
    for r in range(args.runs):
        for name in (commands if r % 2 == 0 else reversed(list(commands))):
            with tempfile.TemporaryDirectory() as scratch:  # paddle's launcher writes log/ there
                results[name].append(job(commands[name], scratch))
    med = {name: {k: statistics.median(run[k] for run in runs) for k in runs[0]} for name, runs in results.items()}
    print(f"# 2 ranks, median of {args.runs} alternated runs; microseconds per call")
    print("| call | pycoll | peer | peer / pycoll |")
    print("|---|---:|---:|---:|")
    for call, size in (("all_gather_object", "1 KiB dict"), ("gather", "1 MiB float32"),
                       ("reduce_1MiB", "1 MiB float32"), ("reduce_4MiB", "4 MiB float32")):
        ours, theirs = med["pycoll"][call], med["paddle"][call]
        print(f"| {call} ({size}) | {ours:.1f} | Paddle {theirs:.1f} | {theirs / ours:.2f} |")
    ours, raw = med["pycoll"]["alltoall_single"], med["pycoll"]["mpi4py_Alltoallv"]
    print(f"| alltoall_single (16 MiB) | {ours:.1f} | mpi4py Alltoallv {raw:.1f} | {raw / ours:.2f} |")


if __name__ == "__main__":
    main()
