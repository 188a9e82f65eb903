"""pycoll.distributed.all_reduce against raw mpi4py Comm.Allreduce on the same ranks, interleaved.

    python -m pycoll.launch --nproc_per_node 2 bench/allreduce_vs_mpi4py.py [--rounds 15]

For each size, each round times a block of pycoll calls and a block of raw calls (the order
alternating between rounds) on float32 arrays; a block's time is the slowest rank's. The table
gives the median per-call time of each over the rounds, their ratio and the time pycoll adds.
"""
import argparse

import numpy as np
from mpi4py import MPI
from peer_report import SIZES, iterations, size_text

import pycoll.distributed as dist
from pycoll.bench.timing import median_per_call

def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    dist.init_parallel_env()
    raw = MPI.COMM_WORLD.Dup()
    rows = []
    for nbytes in SIZES:
        a = np.ones(nbytes // 4, np.float32)
        iters = iterations(nbytes)
        contenders = [lambda: dist.all_reduce(a), lambda: raw.Allreduce(MPI.IN_PLACE, a)]
        ours, theirs = median_per_call(raw, contenders, iters, args.rounds,
                                       warmup=max(1, iters // 5))
        rows.append((nbytes, ours, theirs))
    if raw.Get_rank() == 0:
        print(f"# {raw.Get_size()} ranks, {MPI.Get_library_version().splitlines()[0].strip()}, "
              f"median of {args.rounds} interleaved rounds")
        print("| size | pycoll (us) | mpi4py Allreduce (us) | ratio | added (us) |")
        print("|---:|---:|---:|---:|---:|")
        for nbytes, ours, theirs in rows:
            print(f"| {size_text(nbytes)} | {ours * 1e6:.2f} | {theirs * 1e6:.2f} | {ours / theirs:.3f} | "
                  f"{(ours - theirs) * 1e6:+.2f} |")


if __name__ == "__main__":
    main()
