"""group_sharded_parallel(level="os") against plain DataParallel on the same model and data:
optimizer state held per rank, and step time, alternated in one run (issue 13).

    python -m pycoll.launch --nproc_per_node 2 bench/sharding.py [--rounds 5] [--hidden 1024]

An MLP 256 -> H -> H -> 16 with Adam, batch 64 per rank; each round times 20 steps of each
(after 3 warm-up steps), in an order that flips from round to round. Rank 0 prints the table:
state bytes per rank (the largest rank's for "os"), the median step time and their ratios.
"""
import argparse
import statistics
import time

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn
from pycoll.distributed.sharding import group_sharded_parallel


def setup(sharded: bool, hidden: int):
    pycoll.seed(0)
    model = nn.Sequential(nn.Linear(256, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                          nn.Linear(hidden, 16))
    opt = pycoll.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters())
    if sharded:
        return group_sharded_parallel(model, opt, "os")[:2]
    return pycoll.DataParallel(model), opt


def steps(model, opt, x, count: int) -> float:
    dist.barrier()
    start = time.perf_counter()
    for _ in range(count):
        (model(x) ** 2).mean().backward()
        opt.step()
        opt.clear_grad()
    took = np.array([(time.perf_counter() - start) / count])
    dist.all_reduce(took, op=dist.ReduceOp.MAX)
    return float(took[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--hidden", type=int, default=1024)
    args = parser.parse_args()
    dist.init_parallel_env()
    x = pycoll.to_tensor(np.random.default_rng(dist.get_rank()).standard_normal((64, 256)).astype(np.float32))
    runs = {kind: setup(kind == "os", args.hidden) for kind in ("DataParallel", "os")}
    times = {kind: [] for kind in runs}
    for kind, (model, opt) in runs.items():
        steps(model, opt, x, 3)
    for r in range(args.rounds):
        for kind in (list(runs) if r % 2 == 0 else list(runs)[::-1]):
            times[kind].append(steps(*runs[kind], x, 20))
    held = {}
    for kind, (_, opt) in runs.items():
        mine = np.array([sum(v.numpy().nbytes for v in opt.state_dict().values())], np.int64)
        dist.all_reduce(mine, op=dist.ReduceOp.MAX)
        held[kind] = int(mine[0])
    if dist.get_rank() == 0:
        n = dist.get_world_size()
        params = sum(int(np.prod(p.shape)) for p in runs["os"][0].parameters())
        print(f"# {n} ranks, {params} parameters (H={args.hidden}), Adam, median of {args.rounds} rounds")
        print("| | optimizer state per rank (bytes) | step (ms) |")
        print("|---|---:|---:|")
        for kind in runs:
            print(f"| {kind} | {held[kind]} | {statistics.median(times[kind]) * 1e3:.2f} |")
        print(f"| os / DataParallel | {held['os'] / held['DataParallel']:.3f} (1/{n} = {1 / n:.3f}) | "
              f"{statistics.median(times['os']) / statistics.median(times['DataParallel']):.3f} |")


if __name__ == "__main__":
    main()
