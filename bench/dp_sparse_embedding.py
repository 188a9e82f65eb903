"""DataParallel training step with an Embedding(sparse=True) table, pycoll against Paddle 3.3.1, 2 ranks.

    python bench/dp_sparse_embedding.py --peer-python /tmp/paddlevenv/bin/python \\
        [--rows 1000000] [--dim 16] [--batch 64] [--steps 20] [--runs 3] [--pycoll-path DIR]

Each rank runs the same program under its framework's launcher (pycoll.launch, paddle.distributed
.launch; OMP_NUM_THREADS=1): a table of --rows x --dim looked up by [--batch, 8] ids, averaged,
then a Linear to one output; DataParallel; SGD. A step is forward, backward (the gradients'
averaging across the ranks included) and the optimizer's step; the time per step is the slowest
rank's mean over --steps steps after 3 warm-up ones, between barriers. Each run starts one job per
framework, the order flipping from run to run; the table gives the median of the runs.
``--pycoll-path DIR`` adds a third column: pycoll from DIR (another checkout, for a before/after).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()


def rank_job(args: argparse.Namespace) -> None:
    """One rank's steps; rank 0 writes the slowest rank's seconds per step into ``--out``."""
    import numpy as np

    if args.framework == "paddle":
        import paddle as P
    else:
        import pycoll as P
    dist = P.distributed
    dist.init_parallel_env()
    rank = dist.get_rank()

    class Net(P.nn.Layer):
        def __init__(self):
            super().__init__()
            self.emb = P.nn.Embedding(args.rows, args.dim, sparse=True)
            self.out = P.nn.Linear(args.dim, 1)

        def forward(self, ids):
            return self.out(self.emb(ids).mean(axis=1))

    model = P.DataParallel(Net())
    opt = P.optimizer.SGD(0.01, parameters=model.parameters())
    rng = np.random.RandomState(rank)
    batches = [P.to_tensor(rng.randint(0, args.rows, size=(args.batch, 8)).astype("int64"))
               for _ in range(args.steps + 3)]

    def step(ids):
        model(ids).sum().backward()
        opt.step()
        opt.clear_grad()

    for ids in batches[:3]:
        step(ids)
    dist.barrier()
    start = time.perf_counter()
    for ids in batches[3:]:
        step(ids)
    dist.barrier()
    mine = P.to_tensor([(time.perf_counter() - start) / args.steps])
    dist.all_reduce(mine, op=dist.ReduceOp.MAX)
    if rank == 0:
        Path(args.out).write_text(json.dumps({"seconds_per_step": float(mine.numpy()[0])}))


def job(framework: str, python: str, args: argparse.Namespace, pythonpath: str = "") -> float:
    """Seconds per step of one 2-rank job of ``framework``."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "result.json"
        launcher = "paddle.distributed.launch" if framework == "paddle" else "pycoll.launch"
        argv = [python, "-m", launcher, "--nproc_per_node", "2", str(HERE), "--rank-job", framework,
                "--out", str(out), "--rows", str(args.rows), "--dim", str(args.dim),
                "--batch", str(args.batch), "--steps", str(args.steps)]
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        done = subprocess.run(argv, cwd=folder, env=env, capture_output=True, text=True, timeout=900)
        if done.returncode != 0 or not out.exists():
            logs = "".join(p.read_text() for p in sorted(Path(folder).glob("log/workerlog.*")))
            raise SystemExit(f"{framework} job failed ({done.returncode}):\n{done.stdout}{done.stderr}{logs}")
        return json.loads(out.read_text())["seconds_per_step"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer-python", help="a Python with paddlepaddle 3.3.1")
    parser.add_argument("--pycoll-path", help="another pycoll checkout to time beside this one")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--dim", type=int, default=16)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rank-job", choices=["pycoll", "paddle"], dest="framework", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.framework:
        rank_job(args)
        return
    jobs = {"pycoll": lambda: job("pycoll", sys.executable, args)}
    if args.pycoll_path:
        jobs["pycoll (other)"] = lambda: job("pycoll", sys.executable, args, args.pycoll_path)
    if args.peer_python:
        jobs["paddle"] = lambda: job("paddle", args.peer_python, args)
    times = {name: [] for name in jobs}
    for run in range(args.runs):
        for name in (list(jobs) if run % 2 == 0 else list(jobs)[::-1]):
            times[name].append(jobs[name]())
    print(f"# DataParallel step, Embedding({args.rows}, {args.dim}, sparse=True) + Linear, [{args.batch}, 8] "
          f"ids, SGD, 2 ranks; median of {args.runs} runs (ms per step)")
    mine = statistics.median(times["pycoll"])
    print("| framework | ms per step | / pycoll |\n|---|---:|---:|")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"| {name} | {median * 1e3:.2f} | {median / mine:.2f} |")


if __name__ == "__main__":
    main()
