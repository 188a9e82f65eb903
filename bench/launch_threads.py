"""DataParallel's step with the launcher's default threads per rank against threads chosen by hand,
alternated in one run (issue 11).

    python bench/launch_threads.py [--rounds 5] [--worlds 1 2 3] [--hidden 256 1024]
                                   [--paddle-python /path/to/paddle-venv/bin/python]

For each world size and hidden width, every round starts one job per configuration, in an order
that flips from round to round: "default" (the launcher's choice: each rank's share of the cores
unless OMP_NUM_THREADS is set), and by hand each thread count from 1 to the machine's cores (set
in OMP_NUM_THREADS and OPENBLAS_NUM_THREADS). A job (bench/dp_step.py) prints its median step
time; the table gives each configuration's median over the rounds, its spread (min-max), and
default / best-by-hand (goal: at most 1.10). With ``--paddle-python`` the same script runs on
Paddle's DataParallel under Paddle's launcher, with its defaults, in the same rounds; the last
column is Paddle's median over pycoll's default.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from pycoll.distributed._mpiexec import THREAD_VARS, usable_cores

STEP = Path(__file__).with_name("dp_step.py")


def run_job(world: int, hidden: int, steps: int, threads) -> float:
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    if threads is not None:
        env.update(OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    out = subprocess.run([sys.executable, "-m", "pycoll.launch", "--nproc_per_node", str(world), str(STEP),
                          "--hidden", str(hidden), "--steps", str(steps)],
                         env=env, capture_output=True, text=True, timeout=600, check=True).stdout
    return float(re.search(r"median_step_ms=([\d.]+)", out).group(1))


def run_paddle_job(python: str, world: int, hidden: int, steps: int) -> float:
    """The same job on Paddle's DataParallel, under its launcher and its default threads."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARS}
    with tempfile.TemporaryDirectory() as cwd:  # paddle's launcher writes log/workerlog.N here
        subprocess.run([python, "-m", "paddle.distributed.launch", "--nproc_per_node", str(world), str(STEP),
                        "--hidden", str(hidden), "--steps", str(steps), "--framework", "paddle"],
                       env=env, cwd=cwd, capture_output=True, text=True, timeout=600, check=True)
        out = (Path(cwd) / "log" / "workerlog.0").read_text()
    return float(re.search(r"median_step_ms=([\d.]+)", out).group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--worlds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--hidden", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--paddle-python", help="the python of a virtual environment with paddlepaddle")
    args = parser.parse_args()
    cores = usable_cores()
    configs = [None] + list(range(1, cores + 1)) + (["paddle"] if args.paddle_python else [])
    by_hand = [c for c in configs if isinstance(c, int)]
    print(f"# {cores} cores, {args.rounds} rounds, {args.steps} steps per job; step time in ms "
          f"(median of rounds, min-max)")
    print("| ranks | H | default | " + " | ".join(f"threads={t}" for t in by_hand)
          + (" | Paddle, its defaults" if args.paddle_python else "") + " | default / best by hand |"
          + (" Paddle / pycoll default |" if args.paddle_python else ""))
    print("|---:|---:|" + "---:|" * (len(configs) + 1 + bool(args.paddle_python)))
    for world in args.worlds:
        for hidden in args.hidden:
            times = {c: [] for c in configs}
            for r in range(args.rounds):
                for c in (configs if r % 2 == 0 else configs[::-1]):
                    times[c].append(run_paddle_job(args.paddle_python, world, hidden, args.steps)
                                    if c == "paddle" else run_job(world, hidden, args.steps, c))
            med = {c: statistics.median(v) for c, v in times.items()}
            cells = [f"{med[c]:.2f} ({min(times[c]):.2f}-{max(times[c]):.2f})" for c in configs]
            best = min(med[c] for c in by_hand)
            paddle = f" {med['paddle'] / med[None]:.2f} |" if args.paddle_python else ""
            print(f"| {world} | {hidden} | " + " | ".join(cells) + f" | {med[None] / best:.2f} |" + paddle,
                  flush=True)


if __name__ == "__main__":
    main()
