"""pycoll.distributed.all_reduce against raw mpi4py Comm.Allreduce on the same ranks, interleaved.

    python -m pycoll.launch --nproc_per_node 2 bench/allreduce_vs_mpi4py.py [--rounds 15]

For each size, each round times a block of pycoll calls and a block of raw calls (the order
alternating between rounds) on float32 arrays; a block's time is the slowest rank's. The table
gives the median per-call time of each over the rounds, their ratio and the time pycoll adds.
"""
import argparse
import statistics
import time

import numpy as np
from mpi4py import MPI

import pycoll.distributed as dist

SIZES = [1 << 10, 1 << 12, 1 << 14, 1 << 16, 1 << 18, 1 << 20, 1 << 22, 1 << 24, 1 << 26]


def block_time(comm, fn, iters):
    comm.Barrier()
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    elapsed = time.perf_counter() - start
    return comm.allreduce(elapsed, op=MPI.MAX) / iters


def human(nbytes):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift:
            return f"{nbytes >> shift} {unit}"
    return f"{nbytes} B"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    dist.init_parallel_env()
    raw = MPI.COMM_WORLD.Dup()
    rows = []
    for nbytes in SIZES:
        a = np.ones(nbytes // 4, np.float32)
        iters = max(3, min(2000, (4 << 20) // nbytes * 40))
        contenders = {
            "pycoll": lambda: dist.all_reduce(a),
            "mpi4py": lambda: raw.Allreduce(MPI.IN_PLACE, a),
        }
        for fn in contenders.values():  # warm-up
            block_time(raw, fn, max(1, iters // 5))
        times = {name: [] for name in contenders}
        for r in range(args.rounds):
            order = list(contenders) if r % 2 == 0 else list(reversed(contenders))
            for name in order:
                times[name].append(block_time(raw, contenders[name], iters))
        med = {name: statistics.median(v) for name, v in times.items()}
        rows.append((nbytes, med["pycoll"], med["mpi4py"]))
    if raw.Get_rank() == 0:
        print(f"# {raw.Get_size()} ranks, {MPI.Get_library_version().splitlines()[0].strip()}, "
              f"median of {args.rounds} interleaved rounds")
        print("| size | pycoll (us) | mpi4py Allreduce (us) | ratio | added (us) |")
        print("|---:|---:|---:|---:|---:|")
        for nbytes, ours, theirs in rows:
            print(f"| {human(nbytes)} | {ours * 1e6:.2f} | {theirs * 1e6:.2f} | {ours / theirs:.3f} | "
                  f"{(ours - theirs) * 1e6:+.2f} |")


if __name__ == "__main__":
    main()
