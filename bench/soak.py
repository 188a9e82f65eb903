"""Soak: many small collectives and many DataParallel steps in one run, with memory at start and end.

    python -m pycoll.launch --nproc_per_node 2 bench/soak.py [--collectives 100000] [--steps 1000]

Memory is each rank's resident set size (from /proc); a flat figure means no leak per call.
"""
import argparse
import resource
import time

import numpy as np

import pycoll
import pycoll.distributed as dist
import pycoll.nn as nn


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collectives", type=int, default=100_000)
    parser.add_argument("--steps", type=int, default=1000)
    args = parser.parse_args()
    dist.init_parallel_env()
    rank = dist.get_rank()
    x = np.ones(16, np.float32)
    rows = []
    for _ in range(1000):  # warm-up: allocator pools, caches
        dist.all_reduce(x)
    start_rss, start = rss_mib(), time.perf_counter()
    ops = [lambda: dist.all_reduce(x), lambda: dist.broadcast(x, src=0),
           lambda: dist.all_reduce(x, sync_op=False).wait(), lambda: dist.all_gather([], x)]
    for i in range(args.collectives):
        ops[i % len(ops)]()
    rows.append((f"{args.collectives} small collectives (all_reduce, broadcast, async all_reduce, "
                 f"all_gather; 64 B)", start_rss, rss_mib(), time.perf_counter() - start))

    pycoll.seed(0)
    model = pycoll.DataParallel(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8)),
                                comm_buffer_size=0.004, last_comm_buffer_size=0.002)
    opt = pycoll.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters())
    data = pycoll.to_tensor(np.random.default_rng(rank).standard_normal((16, 32)).astype(np.float32))
    for _ in range(10):
        model(data).mean().backward()
        opt.step()
        opt.clear_grad()
    start_rss, start = rss_mib(), time.perf_counter()
    for _ in range(args.steps):
        model(data).mean().backward()
        opt.step()
        opt.clear_grad()
    rows.append((f"{args.steps} DataParallel steps ({len(model._reducer.buckets)} buckets)",
                 start_rss, rss_mib(), time.perf_counter() - start))
    if rank == 0:
        print(f"# {dist.get_world_size()} ranks; rank 0's resident memory")
        print("| run | RSS start (MiB) | RSS end (MiB) | change (MiB) | time (s) |")
        print("|---|---:|---:|---:|---:|")
        for name, a, b, t in rows:
            print(f"| {name} | {a:.1f} | {b:.1f} | {b - a:+.1f} | {t:.1f} |")


if __name__ == "__main__":
    main()
